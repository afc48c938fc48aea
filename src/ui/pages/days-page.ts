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

/** The picture of the last days (UTC): inputs and jobs by outcome, and spend, per day. */
export function daysPage(inputs: readonly InputRecord[], now: number): Html {
  const days: string[] = [];
  for (let i = DAYS - 1; i >= 0; i--) days.push(dayOf(now - i * DAY_MS));
  const byDay = new Map(days.map((d) => [d, inputs.filter((r) => dayOf(r.at) === d)]));
  const inputBars = days.map((d) => {
    const rs = byDay.get(d) ?? [];
    return {
      label: d,
      values: INPUT_SERIES.map(
        (s) =>
          rs.filter((r) =>
            s.status === 'processing' ? r.status === 'processing' || r.status === 'waiting' : r.status === s.status,
          ).length,
      ),
    };
  });
  const jobBars = days.map((d) => {
    const rs = byDay.get(d) ?? [];
    return {
      label: d,
      values: JOB_SERIES.map((s) =>
        rs.reduce((n, r) => n + s.statuses.reduce((m, st) => m + (r.byStatus?.[st as 'valid'] ?? 0), 0), 0),
      ),
    };
  });
  const spend = days.map((d) => ({
    label: d,
    values: [(byDay.get(d) ?? []).reduce((n, r) => n + (r.actual ?? 0), 0)],
  }));
  const totalSpend = spend.reduce((n, b) => n + (b.values[0] ?? 0), 0);
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
${days
  .slice()
  .reverse()
  .map((d) => {
    const i = days.indexOf(d);
    return html`<tr><td><a href="/${query({ day: d })}">${d}</a></td>${(inputBars[i]?.values ?? []).map((v) => html`<td class="n">${v || ''}</td>`)}${(jobBars[i]?.values ?? []).map((v) => html`<td class="n">${v || ''}</td>`)}<td class="n">${spend[i]?.values[0] ? money(spend[i]?.values[0] ?? 0) : ''}</td></tr>`;
  })}
</tbody>
</table>`;
}
