import { basename } from 'node:path';
import { html, type Html } from '../html.js';
import { toneOf } from '../statuses.js';

export type PageName = 'inputs' | 'orders' | 'days' | 'input';

const NAV: [PageName, string, string][] = [
  ['inputs', '/', 'Inputs'],
  ['orders', '/orders', 'Orders in flight'],
  ['days', '/days', 'The last days'],
];

/**
 * The page around a page's content. The script (live updates) and the styles are files of
 * their own: the Content-Security-Policy allows no inline script or style.
 */
export function layout(opts: { title: string; page: PageName; root: string; live: boolean; body: Html }): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${opts.title} · htorder</title>
<link rel="stylesheet" href="/static/app.css">
<script src="/static/app.js" defer></script>
</head>
<body data-live="${opts.live ? 'on' : 'off'}">
<header>
<strong class="brand">htorder</strong>
<nav>${NAV.map(([name, href, label]) => html`<a href="${href}"${name === opts.page ? html` aria-current="page"` : ''}>${label}</a>`)}</nav>
<span class="where" title="${opts.root}">${basename(opts.root) || opts.root}</span>
<span id="live" class="live">${opts.live ? 'live' : ''}</span>
</header>
<main>
${opts.body}
</main>
</body>
</html>
`;
}

export function duration(ms: number | null): string {
  if (ms === null || ms < 0) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const m = Math.floor(ms / 60_000);
  return m < 60 ? `${m} min ${Math.round((ms % 60_000) / 1000)} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** `2026-11-22 19:40` (UTC): one clock for every viewer. */
export function when(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ');
}

export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * A date the API or a report wrote (`2026-12-01T00:00:00`, `2026-12-01`, `…Z`) as people read
 * it: the day alone when there is no time of day in it, else the day and the time (UTC when the
 * text names its zone). Text that is no date is shown as it is.
 */
export function dateText(text: string | null | undefined): string {
  if (!text) return '';
  const m = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2})(?::\d{2}(?:\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/.exec(text);
  if (!m) return text;
  const [, day, hm, zone] = m;
  if (zone !== undefined) {
    const t = Date.parse(text);
    if (Number.isNaN(t)) return text;
    const w = when(t);
    return w.endsWith(' 00:00') ? w.slice(0, 10) : w;
  }
  return hm === undefined || hm === '00:00' ? (day as string) : `${day} ${hm}`;
}

/**
 * A moment htorder stamped itself (an ISO timestamp, such as a `track` check's) as `when` shows
 * it: always with its time, midnight too, for it is an instant, not a day. Other text as it is.
 */
export function instantText(text: string | null | undefined): string {
  if (!text) return '';
  const t = Date.parse(text);
  return Number.isNaN(t) ? text : when(t);
}

/**
 * The CSS classes of a status word: `st`, its own (`st-already-submitted`) and its tone's
 * (`tone-good`, statuses.ts), which gives it its look. The word itself is shown as the CLI
 * and the reports write it.
 */
export function statusClass(status: string): string {
  const own = status
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
  return `st st-${own || 'other'} tone-${toneOf(status)}`;
}
