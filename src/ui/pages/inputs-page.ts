import type { JobStatus } from '../../report/model.js';
import { INPUT_STATUSES, type InputRecord } from '../drop-inputs.js';
import { html, query, type Html } from '../html.js';
import { dayOf, duration, money, statusClass, when } from './layout.js';

export interface InputsFilter {
  status?: string;
  day?: string;
}

const JOB_COLUMNS: [JobStatus, string][] = [
  ['submitted', 'submitted'],
  ['already-submitted', 'already'],
  ['valid', 'valid'],
  ['invalid', 'invalid'],
  ['failed', 'failed'],
  ['not-submitted', 'held'],
  ['in-doubt', 'in doubt'],
  ['awaiting-approval', 'awaiting approval'],
];

/** Rows on the page; more inputs are counted, not shown (the filters narrow them down). */
export const MAX_INPUT_ROWS = 1_000;

/** The Inputs page: every input, newest first, filtered by status and day (UTC). */
export function inputsPage(all: readonly InputRecord[], filter: InputsFilter): Html {
  const status = INPUT_STATUSES.find((s) => s === filter.status);
  const day = filter.day && /^\d{4}-\d{2}-\d{2}$/.test(filter.day) ? filter.day : undefined;
  const matching = all.filter((r) => (!status || r.status === status) && (!day || dayOf(r.at) === day));
  const shown = matching.slice(0, MAX_INPUT_ROWS);
  const more = matching.length - shown.length;
  const days = [...new Set(all.map((r) => dayOf(r.at)))].slice(0, 60);
  const counts = INPUT_STATUSES.map((s) => [s, all.filter((r) => r.status === s).length] as const);
  return html`<h1>Inputs</h1>
<p class="counts">${counts.map(([s, n]) => html`<a class="${statusClass(s)}" href="/${query({ status: s, day })}">${s} ${n}</a> `)}</p>
<form method="get" action="/" class="filters">
<label>Status <select name="status"><option value="">any</option>${INPUT_STATUSES.map((s) => html`<option${s === status ? html` selected` : ''}>${s}</option>`)}</select></label>
<label>Day (UTC) <select name="day"><option value="">any</option>${days.map((d) => html`<option${d === day ? html` selected` : ''}>${d}</option>`)}</select></label>
<button type="submit">Show</button>
</form>
<table id="inputs" class="grid">
<thead><tr><th>Started (UTC)</th><th>Input</th><th>Status</th><th>Jobs</th>${JOB_COLUMNS.map(([, label]) => html`<th class="n">${label}</th>`)}<th class="n">Errors</th><th class="n">Estimated</th><th class="n">Cost</th><th class="n">Time</th></tr></thead>
<tbody>
${shown.length === 0 ? html`<tr><td colspan="${String(8 + JOB_COLUMNS.length)}" class="empty">No inputs${status || day ? ' match' : ' yet'}.</td></tr>` : ''}
${shown.map(
  (r) => html`<tr data-id="${r.id}" data-status="${r.status}">
<td>${when(r.at)}</td>
<td><a href="/input${query({ id: r.id })}">${r.name}</a>${r.problem ? html`<div class="note">${r.problem}</div>` : ''}</td>
<td><span class="${statusClass(r.status)}">${r.status}</span></td>
<td class="n">${r.jobs ?? '–'}</td>
${JOB_COLUMNS.map(([s]) => html`<td class="n">${r.byStatus && r.byStatus[s] > 0 ? r.byStatus[s] : ''}</td>`)}
<td class="n${r.errors ? ' bad' : ''}">${r.errors ?? '–'}</td>
<td class="n">${money(r.estimated)}</td>
<td class="n">${money(r.actual)}</td>
<td class="n">${duration(r.durationMs)}</td>
</tr>`,
)}
</tbody>
</table>
${more > 0 ? html`<p class="note">${String(more)} more, older inputs are not shown: choose a status or a day to see them.</p>` : ''}`;
}
