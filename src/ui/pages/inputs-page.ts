import { JOB_STATUSES } from '../../report/model.js';
import { addAmounts, moneyOf, type Amounts } from '../amounts.js';
import type { InputRecord } from '../drop-inputs.js';
import { html, query, type Html } from '../html.js';
import { INPUT_STATUSES, type InputStatus } from '../statuses.js';
import type { Submissions } from '../submissions.js';
import { dayOf, duration, statusClass, when } from './layout.js';

export interface InputsFilter {
  status?: string;
  day?: string;
}

/** Rows on the page; more inputs are counted, not shown (the filters narrow them down). */
export const MAX_INPUT_ROWS = 1_000;

/** Days offered by the day filter: the newest ones with an input. */
const MAX_DAYS = 60;

const DAY_MS = 86_400_000;

/** A cell with its column's name: on a narrow screen each row is shown as a card of labelled cells. */
function cell(label: string, content: Html | string | number, cls = ''): Html {
  return html`<td${cls ? html` class="${cls}"` : ''} data-label="${label}">${content}</td>`;
}

/** An empty cell: hidden on a narrow screen, so it needs no label (a page holds a thousand rows of them). */
const BLANK = html`<td class="n blank"></td>`;

/** What the page shows of all inputs: each status's count, the days, the matching rows, what waits for approval. */
function survey(all: readonly InputRecord[], status: InputStatus | undefined, day: string | undefined) {
  // Days as day numbers: formatting a date for each of tens of thousands of inputs is the page's largest cost.
  const wanted = day === undefined ? undefined : Date.parse(`${day}T00:00:00Z`) / DAY_MS;
  const counts = new Map<InputStatus, number>(INPUT_STATUSES.map((s) => [s, 0]));
  const days = new Set<number>();
  const matching: InputRecord[] = [];
  const held = { inputs: 0, jobs: 0, amount: new Map() as Amounts };
  for (const r of all) {
    counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
    const d = Math.floor(r.at / DAY_MS);
    // The list is newest first: the first days met are the newest.
    if (days.size < MAX_DAYS) days.add(d);
    if ((!status || r.status === status) && (wanted === undefined || d === wanted)) matching.push(r);
    if (r.status === 'held' && r.awaiting) {
      held.inputs += 1;
      held.jobs += r.awaiting.jobs;
      addAmounts(held.amount, r.awaiting.amount);
    }
  }
  return { counts, days: [...days].map((d) => dayOf(d * DAY_MS)), matching, held };
}

const plural = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** Why an input's jobs wait, under its name: how many, their estimate, the first reasons. */
function waitNote(r: InputRecord): Html | string {
  const a = r.awaiting;
  if (!a || r.status !== 'held') return '';
  const amount = a.amount.size > 0 ? `, ${moneyOf(a.amount)}` : '';
  const more = a.more > 0 ? `; and ${plural(a.more, 'more reason')}` : '';
  return html`<div class="note reasons">${plural(a.jobs, 'job')} ${a.jobs === 1 ? 'waits' : 'wait'} for approval${amount}: ${a.reasons.join('; ')}${more}</div>`;
}

/** The Inputs page: every input, newest first, filtered by status and day (UTC). */
export function inputsPage(all: readonly InputRecord[], filter: InputsFilter, subs: Submissions): Html {
  const status = INPUT_STATUSES.find((s) => s === filter.status);
  const day = filter.day && /^\d{4}-\d{2}-\d{2}$/.test(filter.day) ? filter.day : undefined;
  const { counts, days, matching, held } = survey(all, status, day);
  const shown = matching.slice(0, MAX_INPUT_ROWS);
  const more = matching.length - shown.length;
  return html`<h1>Inputs</h1>
<p class="counts">${INPUT_STATUSES.map((s) => html`<a class="${statusClass(s)}" href="/${query({ status: s, day })}">${s} ${counts.get(s) ?? 0}</a> `)}</p>
${
  held.inputs > 0
    ? html`<p class="held-summary"><a href="/${query({ status: 'held' })}">${plural(held.inputs, 'input')}</a> ${held.inputs === 1 ? 'waits' : 'wait'} for approval: ${plural(held.jobs, 'job')}${held.amount.size > 0 ? `, ${moneyOf(held.amount)}` : ''}. Each one says why; nothing of them is sent until <code>htorder approve</code> lets them through.</p>`
    : ''
}
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
${cell('Input', html`<a href="/input${query({ id: r.id })}">${r.name}</a>${r.problem ? html`<div class="note">${r.problem}</div>` : ''}${waitNote(r)}`, 'name')}
${cell('Status', html`<span class="${statusClass(r.status)}">${r.status}</span>`)}
${cell('Jobs', r.jobs ?? '–', 'n')}
${JOB_STATUSES.map((s) => (r.byStatus && r.byStatus[s] > 0 ? cell(s, r.byStatus[s], 'n') : BLANK))}
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
