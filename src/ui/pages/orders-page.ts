import { redactUrl } from '../../core/log/redact.js';
import type { InputRecord } from '../drop-inputs.js';
import { html, query, type Html } from '../html.js';
import type { JobView, TrackingView } from '../report-view.js';
import { statusClass } from './layout.js';

/** Rows on the page; more jobs are counted, not shown. */
const MAX_ROWS = 2_000;

interface OrderRow {
  input: InputRecord;
  job: JobView & { jobNumber: number };
}

function early(t: TrackingView): string {
  if (t.dateOut === null) return '';
  const d = t.shippedDaysToProcess;
  return t.shippedDateStatus ?? (d === null ? '' : d < 0 ? `${-d} d early` : d > 0 ? `${d} d late` : 'on time');
}

/**
 * A carrier's link, only when it is http(s), and without its query string and fragment, which
 * could hold a signature: in the link followed as in the text shown.
 */
function carrierLink(link: string | null, label: string): Html {
  if (link === null || !/^https?:\/\//i.test(link)) return html`${label}`;
  const cut = link.search(/[?#]/);
  return html`<a href="${cut === -1 ? link : link.slice(0, cut)}" rel="noopener noreferrer nofollow" target="_blank">${label}</a>`;
}

/** Orders in flight: every submitted job, with what `htorder track` last wrote about it. */
export function ordersPage(inputs: readonly InputRecord[]): Html {
  const rows: OrderRow[] = [];
  let total = 0;
  for (const input of inputs) {
    for (const j of input.digest) {
      if (j.jobNumber === null) continue;
      total += 1;
      if (rows.length < MAX_ROWS) rows.push({ input, job: { ...j, jobNumber: j.jobNumber } });
    }
  }
  const due = (r: OrderRow): string => r.job.tracking?.dateDue ?? r.job.dateDue ?? '9999';
  const shipped = (r: OrderRow): number => Number(r.job.tracking?.dateOut != null);
  rows.sort((a, b) => shipped(a) - shipped(b) || due(a).localeCompare(due(b)));
  const untracked = rows.filter((r) => r.job.tracking === null).length;
  return html`<h1>Orders in flight</h1>
<p>Submitted jobs, not yet shipped first, by due date. What is shown is what <code>htorder track</code> last wrote into the reports${untracked > 0 ? html` — ${String(untracked)} not tracked yet (run <code>htorder track</code> on this folder’s <code>done/</code>)` : ''}.</p>
<table id="orders" class="grid">
<thead><tr><th>Order</th><th class="n">Job</th><th>Status</th><th>Due</th><th>Shipped</th><th>Early / late</th><th>Tracking</th><th>Invoice</th><th>Checked (UTC)</th><th>Input</th></tr></thead>
<tbody>
${rows.length === 0 ? html`<tr><td colspan="10" class="empty">No submitted jobs yet.</td></tr>` : ''}
${rows.map(({ input, job }) => {
  const t = job.tracking;
  return html`<tr data-job="${String(job.jobNumber)}">
<td class="order">${job.orderNumber ?? ''}</td>
<td class="n">${String(job.jobNumber)}</td>
<td>${t ? html`<span class="${statusClass(t.status ?? '')}">${t.status ?? '?'}</span>${t.problem ? html`<div class="note">${t.problem}</div>` : ''}` : html`<span class="muted">not tracked</span>`}</td>
<td>${(t?.dateDue ?? job.dateDue ?? '').slice(0, 10)}</td>
<td>${(t?.dateOut ?? '').slice(0, 10)}</td>
<td>${t ? early(t) : ''}</td>
<td>${t?.tracking.map((x) => html`${carrierLink(x.link, x.number ?? (x.link ? redactUrl(x.link) : ''))} `)}</td>
<td>${t?.invoiceAvailable ? `available${t.invoiceNumber ? ` (${t.invoiceNumber})` : ''}` : t?.invoiceNumber ? t.invoiceNumber : ''}</td>
<td>${t?.checkedAt ? t.checkedAt.slice(0, 16).replace('T', ' ') : ''}</td>
<td><a href="/input${query({ id: input.id })}">${input.name}</a></td>
</tr>`;
})}
</tbody>
</table>
${total > rows.length ? html`<p class="note">Only ${String(rows.length)} of ${String(total)} jobs are shown.</p>` : ''}`;
}
