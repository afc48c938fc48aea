import { paginateList } from '../paginate.js';
import type { Transport } from '../transport.js';
import type { AssetDto, AssetFileList, AssetJobsResponse, AssetListQuery, AssetType, ListEnvelope } from '../types.js';

export interface AssetsApi {
  /** GET /Assets: one page. */
  list(query?: AssetListQuery): Promise<ListEnvelope<AssetDto>>;
  /** GET /Assets, every page, lazily. */
  iterate(query?: AssetListQuery): AsyncGenerator<AssetDto, void, undefined>;
  /** GET /Assets/global: one page. */
  global(query?: AssetListQuery): Promise<ListEnvelope<AssetDto>>;
  iterateGlobal(query?: AssetListQuery): AsyncGenerator<AssetDto, void, undefined>;
  /** GET /Assets/types */
  types(): Promise<AssetType[]>;
  /** GET /Assets/{assetTag}. Unknown (or other account's) tag: ApiError with isNotFound(). */
  get(assetTag: string): Promise<AssetDto>;
  /** GET /Assets/{assetTag}/files; `size` (50, 100, 150) asks for image thumbnails. */
  files(assetTag: string, query?: { size?: 50 | 100 | 150 }): Promise<AssetFileList>;
  /** GET /Assets/{assetCode}/jobs */
  jobs(assetCode: string): Promise<AssetJobsResponse>;
}

export function assetsApi(t: Transport): AssetsApi {
  const list = (query: AssetListQuery = {}): Promise<ListEnvelope<AssetDto>> =>
    t.request({ method: 'GET', path: '/Assets', query: { ...query } });
  const global = (query: AssetListQuery = {}): Promise<ListEnvelope<AssetDto>> =>
    t.request({ method: 'GET', path: '/Assets/global', query: { ...query } });
  const tag = (s: string): string => `/Assets/${encodeURIComponent(s)}`;
  return {
    list,
    iterate: (query = {}) => paginateList((page) => list({ ...query, page }), query.page ?? 1, '/Assets'),
    global,
    iterateGlobal: (query = {}) =>
      paginateList((page) => global({ ...query, page }), query.page ?? 1, '/Assets/global'),
    types: () => t.request({ method: 'GET', path: '/Assets/types' }),
    get: (assetTag) => t.request({ method: 'GET', path: tag(assetTag) }),
    files: (assetTag, query = {}) => t.request({ method: 'GET', path: `${tag(assetTag)}/files`, query: { ...query } }),
    jobs: (assetCode) => t.request({ method: 'GET', path: `${tag(assetCode)}/jobs` }),
  };
}
