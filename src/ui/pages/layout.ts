import { basename } from 'node:path';
import { JOB_STATUSES } from '../../report/model.js';
import { INPUT_STATUSES } from '../drop-inputs.js';
import { html, type Html } from '../html.js';

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

export function money(n: number | null): string {
  return n === null ? '–' : n.toFixed(2);
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

/** Statuses with a style of their own: the inputs' and the jobs'. */
const STYLED = new Set<string>([...INPUT_STATUSES, ...JOB_STATUSES]);

/** A CSS class for a status word (a fixed set; anything else is "other"). */
export function statusClass(status: string): string {
  return STYLED.has(status) ? `st st-${status.replace(' ', '-')}` : 'st st-other';
}
