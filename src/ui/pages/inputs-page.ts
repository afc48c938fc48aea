import { JOB_STATUSES } from '../../report/model.js';
import { moneyOf } from '../amounts.js';
import type { InputRecord } from '../drop-inputs.js';
import { html, query, type Html } from '../html.js';
import { INPUT_STATUSES } from '../statuses.js';
import type { Submissions } from '../submissions.js';
import { dayOf, duration, statusClass, when } from './layout.js';

export interface InputsFilter {
  status?: string;
  day?: string;
}

/** Rows on the page; more inputs are counted, not shown (the filters narrow them down). */
export const MAX_INPUT_ROWS = 1_000;

/** A cell with its column's name: on a narrow screen each row is shown as a card of labelled cells. */
function cell(label: string, content: Html | string | number, cls = ''): Html {
  return html`<td${cls ? html` class="${cls}"` : ''} data-label="${label}">${content}</td>`;
}

/** The Inputs page: every input, newest first, filtered by status and day (UTC). */
export function inputsPage(all: readonly InputRecord[], filter: InputsFilter, subs: Submissions): Html {
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
<table id="inputs" class="grid cards">
<thead><tr><th>Started (UTC)</th><th>Input</th><th>Status</th><th>Jobs</th>${JOB_STATUSES.map((s) => html`<th class="n">${s}</th>`)}<th class="n">Errors</th><th class="n">Estimated</th><th class="n">Spend</th><th class="n">Time</th></tr></thead>
<tbody>
${shown.length === 0 ? html`<tr><td colspan="${String(8 + JOB_STATUSES.length)}" class="empty">No inputs${status || day ? ' match' : ' yet'}.</td></tr>` : ''}
${shown.map(
  (r) => html`<tr data-id="${r.id}" data-status="${r.status}">
${cell('Started (UTC)', when(r.at), 'date')}
${cell('Input', html`<a href="/input${query({ id: r.id })}">${r.name}</a>${r.problem ? html`<div class="note">${r.problem}</div>` : ''}`, 'name')}
${cell('Status', html`<span class="${statusClass(r.status)}">${r.status}</span>`)}
${cell('Jobs', r.jobs ?? '–', 'n')}
${JOB_STATUSES.map((s) => cell(s, r.byStatus && r.byStatus[s] > 0 ? r.byStatus[s] : '', r.byStatus && r.byStatus[s] > 0 ? 'n' : 'n blank'))}
${cell('Errors', r.errors ?? '–', `n${r.errors ? ' bad' : ''}`)}
${cell('Estimated', moneyOf(r.estimated), 'n')}
${cell('Spend', moneyOf(subs.spend.get(r.id)), 'n')}
${cell('Time', duration(r.durationMs), 'n')}
</tr>`,
)}
</tbody>
</table>
<p class="note">Spend: what the API charged for the jobs an input submitted. A job listed again by another input (<code>already-submitted</code>) is counted once, with the input that submitted it.</p>
${more > 0 ? html`<p class="note">${String(more)} more, older inputs are not shown: choose a status or a day to see them.</p>` : ''}`;
}
