import { stackedBars, type Series } from '../charts.js';
import type { InputRecord } from '../drop-inputs.js';
import { html, query, type Html } from '../html.js';
import { dayOf, money } from './layout.js';

const DAYS = 14;
const DAY_MS = 86_400_000;

const INPUT_SERIES: (Series & { status: InputRecord['status'] })[] = [
  { label: 'done', colour: '#2e7d32', status: 'done' },
  { label: 'failed', colour: '#c62828', status: 'failed' },
  { label: 'in doubt', colour: '#ef6c00', status: 'in doubt' },
  { label: 'waiting / processing', colour: '#90a4ae', status: 'processing' },
];

const JOB_SERIES: (Series & { statuses: string[] })[] = [
  { label: 'submitted', colour: '#2e7d32', statuses: ['submitted', 'already-submitted'] },
  { label: 'failed', colour: '#c62828', statuses: ['failed'] },
  { label: 'invalid', colour: '#ad1457', statuses: ['invalid'] },
  { label: 'held back', colour: '#8d6e63', statuses: ['not-submitted'] },
  { label: 'in doubt', colour: '#ef6c00', statuses: ['in-doubt'] },
  { label: 'valid (dry run)', colour: '#1565c0', statuses: ['valid'] },
];

/** One day's inputs by outcome, jobs by status and spend. */
function dayRow(inputs: readonly InputRecord[], day: string) {
  const rs = inputs.filter((r) => dayOf(r.at) === day);
  return {
    day,
    inputs: INPUT_SERIES.map(
      (s) => rs.filter((r) => r.status === s.status || (s.status === 'processing' && r.status === 'waiting')).length,
    ),
    jobs: JOB_SERIES.map((s) =>
      rs.reduce((n, r) => n + s.statuses.reduce((m, st) => m + (r.byStatus?.[st as 'valid'] ?? 0), 0), 0),
    ),
    spend: rs.reduce((n, r) => n + (r.actual ?? 0), 0),
  };
}

/** The picture of the last days (UTC): inputs and jobs by outcome, and spend, per day. */
export function daysPage(inputs: readonly InputRecord[], now: number): Html {
  const rows = Array.from({ length: DAYS }, (_, i) => dayRow(inputs, dayOf(now - (DAYS - 1 - i) * DAY_MS)));
  const inputBars = rows.map((r) => ({ label: r.day, values: r.inputs }));
  const jobBars = rows.map((r) => ({ label: r.day, values: r.jobs }));
  const spend = rows.map((r) => ({ label: r.day, values: [r.spend] }));
  const totalSpend = rows.reduce((n, r) => n + r.spend, 0);
  return html`<h1>The last ${String(DAYS)} days</h1>
<p>Days in UTC, by when each input started. Spend is the API's total job cost of submitted jobs: ${money(totalSpend)} in all.</p>
<section class="charts">
<figure><figcaption>Inputs by outcome</figcaption>${stackedBars('Inputs by outcome per day', INPUT_SERIES, inputBars)}</figure>
<figure><figcaption>Jobs by status</figcaption>${stackedBars('Jobs by status per day', JOB_SERIES, jobBars)}</figure>
<figure><figcaption>Spend per day</figcaption>${stackedBars('Spend per day', [{ label: 'total job cost', colour: '#6a1b9a' }], spend, (n) => money(n))}</figure>
</section>
<table id="days" class="grid">
<thead><tr><th>Day</th>${INPUT_SERIES.map((s) => html`<th class="n">${s.label}</th>`)}${JOB_SERIES.map((s) => html`<th class="n">jobs ${s.label}</th>`)}<th class="n">Spend</th></tr></thead>
<tbody>
${rows
  .slice()
  .reverse()
  .map(
    (r) =>
      html`<tr><td><a href="/${query({ day: r.day })}">${r.day}</a></td>${[...r.inputs, ...r.jobs].map((v) => html`<td class="n">${v || ''}</td>`)}<td class="n">${r.spend ? money(r.spend) : ''}</td></tr>`,
  )}
</tbody>
</table>`;
}
