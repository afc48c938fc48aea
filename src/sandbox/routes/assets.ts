import type { AssetDto, AssetFileList, AssetJob, AssetJobsResponse } from '../../api/types.js';
import { fieldErrors, json, problem, type ApiContext, type ApiHandler, type Reply } from '../handler.js';
import { ASSET_TYPES } from '../data/lookups.js';
import type { AssetRecord } from '../data/assets.js';
import type { JobRecord } from '../state.js';
import { settle, STATUS } from '../jobs/lifecycle.js';
import { compareValues, containsText, listEnvelope, QueryReader } from '../paging.js';
import type { Router } from '../router.js';
import { isoSeconds } from '../dates.js';

const SORT_KEYS: Record<string, keyof AssetDto> = {
  assettag: 'assetTag',
  createdate: 'createDate',
  description: 'description',
  processcode: 'processCode',
  pricecode: 'priceCode',
  garment: 'garment',
  assetid: 'assetId',
};

/** The list form: without externalId / customerId (single-asset form only), no attributes. */
function listForm(a: AssetRecord): AssetDto {
  const { externalId: _e, customerId: _c, attributes: _a, ...rest } = a;
  return { ...rest, priceBands: a.priceBands.map((b) => ({ ...b })) };
}

/** The spec's filter semantics, shared by GET /Assets and GET /Assets/global. */
function listAssets(ctx: ApiContext, source: AssetRecord[]): Reply {
  const q = new QueryReader(ctx);
  const page = q.int('page', 1) ?? 1;
  const pageSize = q.int('pageSize', 1) ?? 25;
  const isArchived = q.bool('isArchived');
  const sortColumn = ctx.query.get('sortColumn') ?? 'AssetTag';
  const sortKey = SORT_KEYS[sortColumn.toLowerCase()];
  if (!sortKey) q.fail('sortColumn', `'${sortColumn}' is not a sortable column.`);
  const dir = (ctx.query.get('sortDirection') ?? 'Ascending').toLowerCase();
  if (!['ascending', 'descending', 'asc', 'desc'].includes(dir))
    q.fail('sortDirection', 'sortDirection must be Ascending or Descending.');
  const invalid = q.invalid();
  if (invalid) return invalid;

  const lower = (name: string): string[] => q.list(name).map((s) => s.toLowerCase());
  const include = lower('includeProcesses');
  const exclude = lower('excludeProcesses');
  const contains = lower('priceCodeContains');
  const notContains = lower('priceCodeNotContains');
  const filter = ctx.query.get('filter');
  const f = filter?.trim().toLowerCase() ?? '';

  const list = source.filter((a) => {
    if (isArchived !== undefined && a.isArchived !== isArchived) return false;
    const proc = (a.processCode ?? '').toLowerCase();
    if (include.length && !include.includes(proc)) return false;
    if (exclude.length && exclude.includes(proc)) return false;
    const pc = a.priceCode?.toLowerCase() ?? null;
    // Contains: any substring matches, and a null price code is excluded.
    if (contains.length && (pc === null || !contains.some((s) => pc.includes(s)))) return false;
    // NotContains: none matches, and a null price code is included.
    if (notContains.length && pc !== null && notContains.some((s) => pc.includes(s))) return false;
    return containsText(f, [a.assetTag, a.description, a.priceCode, a.garment, a.processCode]);
  });
  const sign = dir.startsWith('desc') ? -1 : 1;
  list.sort((x, y) => compareValues(x[sortKey], y[sortKey]) * sign || compareValues(x.assetTag, y.assetTag));
  return json(listEnvelope(list.map(listForm), page, pageSize, filter, ctx.url));
}

export function register(r: Router<ApiHandler>): void {
  r.add('GET', '/Assets', (ctx) => listAssets(ctx, ctx.customer.assets));
  r.add('GET', '/Assets/global', (ctx) => listAssets(ctx, ctx.world.globalAssets(ctx.region.code)));
  r.add('GET', '/Assets/types', () => json(ASSET_TYPES));

  r.add('GET', '/Assets/{assetTag}', (ctx) => {
    const a = ctx.world.findAsset(ctx.customer, ctx.params.assetTag);
    if (!a) return problem(404, `Asset '${ctx.params.assetTag}' was not found.`, ctx.path);
    const { attributes: _a, ...rest } = a;
    return json({ ...rest, priceBands: a.priceBands.map((b) => ({ ...b })) });
  });

  r.add('GET', '/Assets/{assetTag}/files', assetFiles);
  // An unknown asset is a 400 here: this endpoint documents 400, not 404.
  r.add('GET', '/Assets/{assetCode}/jobs', assetJobs);
}

function assetFiles(ctx: ApiContext): Reply {
  const a = ctx.world.findAsset(ctx.customer, ctx.params.assetTag);
  if (!a) return problem(404, `Asset '${ctx.params.assetTag}' was not found.`, ctx.path);
  const size = ctx.query.get('size');
  if (size !== null && !['50', '100', '150'].includes(size))
    return fieldErrors(ctx.path, { size: ['size must be 50, 100 or 150.'] });
  const tag = a.assetTag as string;
  const expires = Math.floor(ctx.now.getTime() / 1000) + 3600;
  const file = (id: string, fileName: string, fileSize: number, isImage: boolean) => ({
    fileId: `${tag}-${id}`,
    fileName,
    fileSize,
    dateUploaded: a.createDate,
    isImage,
    cdnUrl: `https://cdn.sandbox.invalid/assets/${tag}/${fileName}?expires=${expires}&sig=sandbox${size ? `&size=${size}` : ''}`,
  });
  const body: AssetFileList = {
    assetTag: tag,
    currentFiles: [file('art', `${tag}.png`, 482_113, true), file('pdf', `${tag}-proof.pdf`, 120_442, false)],
    historicFiles: a.isArchived ? [{ ...file('old', `${tag}-v1.png`, 301_877, true), action: 'Archived' }] : [],
  };
  return json(body);
}

/** Active jobs first, then completed ones by dateOut descending. */
function assetJobs(ctx: ApiContext): Reply {
  const code = ctx.params.assetCode;
  const a = ctx.world.findAsset(ctx.customer, code);
  if (!a) return fieldErrors(ctx.path, { assetCode: [`Asset '${code}' was not found.`] });
  const nowMs = ctx.now.getTime();
  const quantity = (job: JobRecord): number =>
    job.lines.filter((l) => l.assetSku === code).reduce((s, l) => s + l.quantity, 0);
  const jobs = [...ctx.customer.jobs.values()]
    .map((job) => settle(job, nowMs))
    .filter((job) => job.status !== STATUS.Cancelled && quantity(job) > 0)
    .sort((x, y) => {
      if (x.dateOutMs === null && y.dateOutMs === null) return y.jobNumber - x.jobNumber;
      if (x.dateOutMs === null) return -1;
      if (y.dateOutMs === null) return 1;
      return y.dateOutMs - x.dateOutMs;
    })
    .map(
      (job): AssetJob => ({
        jobNumber: job.jobNumber,
        orderNumber: job.orderNumber,
        description: job.description,
        quantity: quantity(job),
        dateOut: job.dateOutMs === null ? null : isoSeconds(new Date(job.dateOutMs)),
        masterJobStatus: job.status,
      }),
    );
  return json({ assetCode: a.assetTag, jobs, totalCount: jobs.length } satisfies AssetJobsResponse);
}
