import type { StatusPage } from '../../api/types.js';
import type { RegionDef } from '../data/regions.js';
import { isoSeconds } from '../dates.js';
import type { Reply } from '../handler.js';

const COMPONENTS = ['API', 'Authentication', 'Artwork fetching'];

/** {status_url}/status.json: the region's own monitoring (the body shape is not specified). */
export function statusJson(region: RegionDef, now: Date): Reply {
  const body: StatusPage = {
    status: 'operational',
    region: region.code,
    regionName: region.name,
    updatedAt: isoSeconds(now),
    components: COMPONENTS.map((name) => ({ name, status: 'operational' })),
    incidents: [],
  };
  return { status: 200, body };
}

export function statusHtml(region: RegionDef, now: Date): Reply {
  const raw = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Status: ${region.name}</title></head>
<body><h1>${region.name}: all systems operational</h1>
<ul>${COMPONENTS.map((c) => `<li>${c}: operational</li>`).join('')}</ul>
<p>Updated ${isoSeconds(now)} (sandbox).</p></body></html>
`;
  return { status: 200, raw, contentType: 'text/html; charset=utf-8' };
}
