import { LINE_COLUMNS } from './pages/input-page.js';

/**
 * The dashboard's script and styles, served as files (/static/app.js, /static/app.css) so the
 * Content-Security-Policy can forbid every inline script and style. Plain browser JavaScript,
 * no framework, no build step.
 *
 * The script keeps a page current: it listens to /events (Server-Sent Events) and, on each
 * change, fetches the same page again and swaps in its <main>. The new HTML is the server's,
 * escaped there; scripts in it would not run (DOMParser documents run none, and the CSP
 * allows only this file).
 */
export const APP_JS = `'use strict';
(function () {
  if (document.body.dataset.live !== 'on' || !('EventSource' in window)) return;
  var badge = document.getElementById('live');
  var busy = false, again = false;
  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(location.href, { headers: { accept: 'text/html' }, credentials: 'same-origin' })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(new Error(String(r.status))); })
      .then(function (text) {
        var next = new DOMParser().parseFromString(text, 'text/html').querySelector('main');
        var main = document.querySelector('main');
        if (next && main) main.replaceWith(next);
        document.body.dataset.version = String(Number(document.body.dataset.version || 0) + 1);
      })
      .catch(function () {})
      .then(function () { busy = false; if (again) { again = false; refresh(); } });
  }
  var events = new EventSource('/events');
  events.onopen = function () { if (badge) badge.textContent = 'live'; };
  events.onmessage = refresh;
  events.onerror = function () { if (badge) badge.textContent = 'reconnecting…'; };
})();
`;

/** A line's cells named by their place (LINE_COLUMNS), for the narrow layout. */
const LINE_LABELS = LINE_COLUMNS.map(
  (label, i) => `  table.lines tr.line td:nth-child(${i + 1})::before { content: "${label}: "; color: #666; }`,
).join('\n');

export const APP_CSS = `:root { font-family: system-ui, sans-serif; color: #222; background: #fafafa; }
body { margin: 0; }
header { display: flex; flex-wrap: wrap; gap: .4em 1.5em; align-items: center; padding: .6em 1.2em; background: #263238; color: #eceff1; }
header a { color: #cfd8dc; text-decoration: none; margin-right: 1em; }
header a[aria-current] { color: #fff; font-weight: 600; border-bottom: 2px solid #80cbc4; }
.brand { font-size: 1.1em; }
.where { color: #90a4ae; font-family: ui-monospace, monospace; font-size: .85em; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; max-width: 40em; }
.live { margin-left: auto; font-size: .8em; color: #80cbc4; }
main { padding: 1em 1.2em; }
h1 { font-size: 1.4em; margin: .2em 0 .6em; }
h1.input-name { word-break: break-all; }
table.grid { border-collapse: collapse; width: 100%; background: #fff; font-size: .9em; }
.grid th, .grid td { border-bottom: 1px solid #e0e0e0; padding: .3em .5em; text-align: left; vertical-align: top; }
.grid th { background: #eceff1; font-weight: 600; }
.grid td.n, .grid th.n { text-align: right; font-variant-numeric: tabular-nums; }
.grid td:first-child, .grid td.n, .grid td.date { white-space: nowrap; }
.grid td.order, .grid td.name { overflow-wrap: anywhere; white-space: normal; min-width: 6em; }
.grid td.bad { color: #c62828; font-weight: 600; }
.grid tr.job-head td { background: #f5f5f5; border-top: 2px solid #cfd8dc; font-weight: 500; }
.empty, .muted { color: #777; }
.note { color: #6d4c41; font-size: .85em; }
.st { display: inline-block; padding: 0 .5em; border-radius: .8em; font-size: .85em; background: #e0e0e0; white-space: nowrap; }
.tone-good { background: #c8e6c9; }
.tone-planned { background: #fff; color: #0d47a1; box-shadow: inset 0 0 0 1px #1565c0; }
.tone-bad { background: #ffcdd2; }
.tone-doubt { background: #ffe0b2; }
.tone-busy { background: #bbdefb; }
.tone-quiet { background: #eceff1; }
.tone-action { background: #ffeb3b; color: #000; font-weight: 700; box-shadow: inset 0 0 0 2px #f57f17; }
.needs-action { color: #e65100; }
.needs-action-note { background: #fff8e1; border-left: 4px solid #f57f17; padding: .4em .8em; }
#orders tr.action td { background: #fffde7; }
.counts a { margin-right: .4em; text-decoration: none; color: inherit; }
.filters { margin: .5em 0 1em; display: flex; flex-wrap: wrap; gap: .5em 1em; }
.problems { margin: 0; padding-left: 1.1em; }
.problems li.error { color: #b71c1c; }
.problems li.warning { color: #8d6e00; }
.problems .at { font-family: ui-monospace, monospace; color: #555; }
pre.src { margin: .2em 0 .4em; padding: .2em .5em; background: #263238; color: #eceff1; font-size: .85em; white-space: pre-wrap; word-break: break-all; }
pre.src .ln { color: #90a4ae; margin-right: 1em; user-select: none; }
.downloads a { margin-right: 1em; }
.warn { color: #8d6e00; }
.charts { display: flex; flex-wrap: wrap; gap: 1em; }
figure { flex: 1 1 min(30em, 100%); min-width: 0; box-sizing: border-box; max-width: 40em; margin: 0 0 1em; background: #fff; padding: .5em; border: 1px solid #e0e0e0; }
figcaption { font-weight: 600; margin-bottom: .3em; }
svg.chart { width: 100%; height: auto; }

/* A phone's width: each row of a table becomes a card of labelled cells (data-label), so no column is cut off. */
@media (max-width: 44em) {
  header { padding: .5em .8em; }
  header a { margin-right: .6em; }
  .where { max-width: 100%; }
  main { padding: .8em; }
  table.cards, table.cards tbody, table.cards tr, table.cards td { display: block; width: auto; }
  table.cards thead { display: none; }
  table.cards tr { border: 1px solid #e0e0e0; margin-bottom: .6em; background: #fff; }
  table.cards td { border: 0; padding: .15em .6em; overflow-wrap: anywhere; white-space: normal; text-align: left; }
  table.cards td.n { text-align: left; }
  table.cards td.blank { display: none; }
  table.cards td[data-label]::before { content: attr(data-label) ": "; color: #666; font-weight: 400; }
  table.cards tr.job-head td { border-top: 0; }
  table.cards td:empty { display: none; }
${LINE_LABELS}
  .grid td:first-child, table.cards td.n, table.cards td.date { white-space: normal; }
  pre.src { overflow-x: auto; }
}
`;
