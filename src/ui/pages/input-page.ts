import { REPORT_SUFFIX, type InputRecord, type ReportKind } from '../drop-inputs.js';
import { html, query, type Html } from '../html.js';
import type { JobView, LineView, ProblemView, ReportView } from '../report-view.js';
import { money, moneyOf, type Amounts } from '../amounts.js';
import { dateText, duration, statusClass, when } from './layout.js';

/** Every line number the page shows a source line for. */
export function linesWanted(view: ReportView | undefined): Set<number> {
  const out = new Set<number>();
  if (!view) return out;
  const add = (ps: ProblemView[]): void => {
    for (const p of ps) if (p.line !== null && p.file === null) out.add(p.line);
  };
  add(view.errors);
  add(view.warnings);
  for (const j of view.jobs) {
    add(j.errors);
    add(j.warnings);
    for (const l of j.lines) add(l.errors);
  }
  return out;
}

/** `1 warning`, `3 warnings`, `0 errors`: people read these counts, so they get the plural right. */
function count(n: number | null | undefined, noun: string): string {
  const k = n ?? 0;
  return `${k} ${noun}${k === 1 ? '' : 's'}`;
}

function where(p: ProblemView): string {
  if (p.line === null) return '';
  const col = p.column === null ? '' : /^\d+$/.test(p.column) ? `:${p.column}` : ` (${p.column})`;
  return `${p.file ? `${p.file} ` : ''}${p.line}${col}`;
}

function problemList(ps: ProblemView[], kind: 'error' | 'warning', lines: Map<number, string>): Html {
  if (ps.length === 0) return html``;
  return html`<ul class="problems ${kind}s">${ps.map(
    (p) =>
      html`<li class="${kind}" data-line="${p.line === null ? '' : String(p.line)}"><span class="at">${where(p)}</span> ${p.field ? html`<code class="field">${p.field}</code> ` : ''}<span class="msg">${p.message}</span>${
        p.line !== null && p.file === null && lines.has(p.line)
          ? html`<pre class="src"><span class="ln">${String(p.line)}</span>${lines.get(p.line) ?? ''}</pre>`
          : ''
      }</li>`,
  )}</ul>`;
}

function jobRows(j: JobView, lines: Map<number, string>): Html {
  const jobProblems = j.errors.length + j.warnings.length > 0;
  return html`<tbody class="job" data-order="${j.orderNumber ?? ''}">
<tr class="job-head">
<td class="n" data-label="Row">${j.line ?? ''}</td>
<td colspan="3" data-label="Order"><span class="order">${j.orderNumber ?? '(no order number)'}</span></td>
<td data-label="Status"><span class="${statusClass(j.status)}">${j.status}</span></td>
<td colspan="3" class="job-facts">${[
    j.jobNumber === null ? '' : `job ${j.jobNumber}`,
    j.dateDue ? `due ${dateText(j.dateDue)}` : '',
    j.estimatedCost === null ? '' : `estimated ${money(j.estimatedCost, j.currency)}`,
    j.totalJobCost === null ? '' : `cost ${money(j.totalJobCost, j.currency)}`,
  ]
    .filter(Boolean)
    .join(' · ')}</td>
</tr>
${jobProblems ? html`<tr class="job-problems"><td></td><td colspan="7" data-label="Problems">${problemList(j.errors, 'error', lines)}${problemList(j.warnings, 'warning', lines)}</td></tr>` : ''}
${j.lines.map((l) => lineRow(l, lines))}
</tbody>`;
}

/**
 * The columns of a line's row. On a narrow screen the stylesheet names each cell by its place
 * (static-assets.ts): a page holds up to 5,000 lines, and a label in every cell would add to it.
 */
export const LINE_COLUMNS = ['Row', 'Type', 'Code', 'Qty', 'Status', 'newAssetSku', 'Artwork', 'Problems'];

function lineRow(l: LineView, lines: Map<number, string>): Html {
  return html`<tr class="line" data-row="${l.line === null ? '' : String(l.line)}">
<td class="n">${l.line ?? ''}</td>
<td>${l.itemType ?? ''}</td>
<td><code>${l.code ?? ''}</code></td>
<td class="n">${l.quantity ?? ''}</td>
<td><span class="${statusClass(l.status)}">${l.status}</span></td>
<td>${l.newAssetSku ? html`new asset <code>${l.newAssetSku}</code>` : ''}</td>
<td>${l.needsArtwork === true ? html`<span class="warn needs-action">needs artwork</span>` : l.needsArtwork === false ? 'artwork ok' : ''}</td>
<td>${problemList(l.errors, 'error', lines)}</td>
</tr>`;
}

/** A held input's jobs that wait: how many and for how much; each one's reasons are beside its row below. */
function waiting(r: InputRecord): Html | string {
  const a = r.awaiting;
  if (!a || r.status !== 'held') return '';
  const amount = a.amount.size > 0 ? `, estimated ${moneyOf(a.amount)}` : '';
  return html`<p class="note reasons">${count(a.jobs, 'job')} ${a.jobs === 1 ? 'waits' : 'wait'} for approval${amount}: nothing of ${a.jobs === 1 ? 'it' : 'them'} is sent until <code>htorder approve</code> lets ${a.jobs === 1 ? 'it' : 'them'} through. Why is beside each one below.</p>`;
}

/** One input: its jobs and lines with the input's own row numbers, each problem beside its row. */
export function inputPage(
  r: InputRecord,
  view: ReportView | undefined,
  problem: string | undefined,
  lines: Map<number, string>,
  spend: Amounts | undefined,
): Html {
  // Each report by its name after the input's: result.json, result.csv, errors.txt.
  const available = (Object.keys(REPORT_SUFFIX) as ReportKind[])
    .filter((k) => r.reports[k] !== undefined)
    .map((k) => [k, REPORT_SUFFIX[k].slice(1)] as const);
  return html`<p class="crumbs"><a href="/">Inputs</a> ›</p>
<h1 class="input-name">${r.name}</h1>
<p class="facts"><span class="${statusClass(r.status)}">${r.status}</span> in <code>${r.place === 'drop' ? '.' : r.place}</code> · started ${when(r.at)} UTC · took ${duration(r.durationMs)} · ${count(r.jobs, 'job')}, ${count(r.lines, 'line')}, ${count(r.errors, 'error')}, ${count(r.warnings, 'warning')} · estimated ${moneyOf(r.estimated)} · spend ${moneyOf(spend)}</p>
${r.problem ? html`<p class="note">${r.problem}</p>` : ''}
${problem ? html`<p class="note">${problem}</p>` : ''}
${waiting(r)}
<p class="downloads">${available.length === 0 ? 'No reports yet.' : available.map(([k, label]) => html`<a class="download" download href="/file${query({ id: r.id, kind: k })}">${label}</a> `)}</p>
${
  view && view.errors.length + view.warnings.length > 0
    ? html`<section class="file-problems"><h2>About the whole file</h2>${problemList(view.errors, 'error', lines)}${problemList(view.warnings, 'warning', lines)}</section>`
    : ''
}
${
  view && view.jobs.length > 0
    ? html`<table class="grid lines cards">
<thead><tr>${LINE_COLUMNS.map((c, i) => html`<th${i === 0 || i === 3 ? html` class="n"` : ''}>${c}</th>`)}</tr></thead>
${view.jobs.map((j) => jobRows(j, lines))}
</table>${view.cut ? html`<p class="note">Only the first ${String(view.jobs.length)} jobs are shown; download result.json for all ${String(view.jobCount)}.</p>` : ''}`
    : ''
}
${view && view.problemsLeftOut > 0 ? html`<p class="note">${String(view.problemsLeftOut)} more errors and warnings are not shown; download result.json for all.</p>` : ''}`;
}
