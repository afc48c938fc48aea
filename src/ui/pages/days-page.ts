import { JOB_STATUSES, type JobStatus } from '../../report/model.js';
import { addAmounts, moneyOf, money, type Amounts } from '../amounts.js';
import { stackedBars, type Series } from '../charts.js';
import type { InputRecord } from '../drop-inputs.js';
import { html, query, type Html } from '../html.js';
import { INPUT_STATUS_LOOK, INPUT_STATUSES, JOB_STATUS_LOOK, type InputStatus } from '../statuses.js';
import type { Submissions } from '../submissions.js';
import { dayOf } from './layout.js';

const DAYS = 14;
const DAY_MS = 86_400_000;

const INPUT_SERIES: (Series & { status: InputStatus })[] = INPUT_STATUSES.map((status) => ({
  label: status,
  colour: INPUT_STATUS_LOOK[status].colour,
  status,
}));

const JOB_SERIES: (Series & { status: JobStatus })[] = JOB_STATUSES.map((status) => ({
  label: status,
  colour: JOB_STATUS_LOOK[status].colour,
  status,
}));

/**
 * One day's inputs by outcome, jobs by status and spend. A job another input owns (the same
 * job listed again, submissions.ts) is not counted again.
 */
function dayRow(inputs: readonly InputRecord[], subs: Submissions, day: string) {
  const rs = inputs.filter((r) => dayOf(r.at) === day);
  const spend: Amounts = new Map();
  for (const r of rs) addAmounts(spend, subs.spend.get(r.id) ?? new Map());
  return {
    day,
    inputs: INPUT_SERIES.map((s) => rs.filter((r) => r.status === s.status).length),
    jobs: JOB_SERIES.map((s) =>
      rs.reduce((n, r) => n + (r.byStatus?.[s.status] ?? 0) - (subs.copies.get(r.id)?.get(s.status) ?? 0), 0),
    ),
    spend,
  };
}

/** The currency most of the spend is in (by number of days with spend in it): the one charted. */
function chartedCurrency(rows: readonly { spend: Amounts }[]): string {
  const days = new Map<string, number>();
  for (const r of rows) for (const c of r.spend.keys()) days.set(c, (days.get(c) ?? 0) + 1);
  return [...days].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? '';
}

/** The picture of the last days (UTC): inputs and jobs by outcome, and spend, per day. */
export function daysPage(inputs: readonly InputRecord[], subs: Submissions, now: number): Html {
  const rows = Array.from({ length: DAYS }, (_, i) => dayRow(inputs, subs, dayOf(now - (DAYS - 1 - i) * DAY_MS)));
  const inputBars = rows.map((r) => ({ label: r.day, values: r.inputs }));
  const jobBars = rows.map((r) => ({ label: r.day, values: r.jobs }));
  const currency = chartedCurrency(rows);
  const spend = rows.map((r) => ({ label: r.day, values: [r.spend.get(currency) ?? 0] }));
  const totalSpend: Amounts = new Map();
  for (const r of rows) addAmounts(totalSpend, r.spend);
  const spendLabel = currency ? `total job cost (${currency})` : 'total job cost';
  return html`<h1>The last ${String(DAYS)} days</h1>
<p>Days in UTC, by when each input started. Spend is the API's total job cost of submitted jobs, each job counted once (an input dropped again adds none): ${moneyOf(totalSpend)} in all.</p>
<section class="charts">
<figure><figcaption>Inputs by outcome</figcaption>${stackedBars('Inputs by outcome per day', INPUT_SERIES, inputBars)}</figure>
<figure><figcaption>Jobs by status</figcaption>${stackedBars('Jobs by status per day', JOB_SERIES, jobBars)}</figure>
<figure><figcaption>Spend per day${currency ? ` (${currency})` : ''}</figcaption>${stackedBars('Spend per day', [{ label: spendLabel, colour: '#6a1b9a' }], spend, (n) => money(n))}</figure>
</section>
<table id="days" class="grid cards">
<thead><tr><th>Day</th>${INPUT_SERIES.map((s) => html`<th class="n">${s.label}</th>`)}${JOB_SERIES.map((s) => html`<th class="n">jobs ${s.label}</th>`)}<th class="n">Spend</th></tr></thead>
<tbody>
${rows
  .slice()
  .reverse()
  .map(
    (r) =>
      html`<tr data-day="${r.day}"><td data-label="Day"><a href="/${query({ day: r.day })}">${r.day}</a></td>${INPUT_SERIES.map((s, i) => html`<td class="n${r.inputs[i] ? '' : ' blank'}" data-label="${s.label}" data-series="input ${s.status}">${r.inputs[i] || ''}</td>`)}${JOB_SERIES.map((s, i) => html`<td class="n${r.jobs[i] ? '' : ' blank'}" data-label="jobs ${s.label}" data-series="job ${s.status}">${r.jobs[i] || ''}</td>`)}<td class="n${r.spend.size ? '' : ' blank'}" data-label="Spend" data-series="spend">${r.spend.size ? moneyOf(r.spend) : ''}</td></tr>`,
  )}
</tbody>
</table>`;
}
