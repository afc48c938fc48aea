import { redactUrl } from '../../core/log/redact.js';
import { money } from '../amounts.js';
import { html, query, type Html } from '../html.js';
import type { TrackingView } from '../report-view.js';
import { needsAction } from '../statuses.js';
import type { Submission, Submissions } from '../submissions.js';
import { dateText, instantText, statusClass } from './layout.js';

/** Rows on the page; more jobs are counted, not shown. */
const MAX_ROWS = 2_000;

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

/** Whether the provider's status of the job waits on the customer (statuses.ts). */
const actionNeeded = (r: Submission): boolean => needsAction(r.job.tracking?.status);

function orderRow({ input, job }: Submission): Html {
  const t = job.tracking;
  const action = needsAction(t?.status);
  return html`<tr data-job="${String(job.jobNumber)}"${action ? html` class="action"` : ''}>
<td class="order" data-label="Order">${job.orderNumber ?? ''}</td>
<td class="n" data-label="Job">${String(job.jobNumber)}</td>
<td data-label="Status">${t ? html`<span class="${statusClass(t.status ?? '')}">${t.status ?? '?'}</span>${action ? html` <strong class="needs-action">needs you</strong>` : ''}${t.problem ? html`<div class="note">${t.problem}</div>` : ''}` : html`<span class="muted">not tracked</span>`}</td>
<td class="date" data-label="Due">${dateText(t?.dateDue ?? job.dateDue)}</td>
<td class="date" data-label="Shipped">${dateText(t?.dateOut)}</td>
<td data-label="Early / late">${t ? early(t) : ''}</td>
<td data-label="Tracking">${t?.tracking.map((x) => html`${carrierLink(x.link, x.number ?? (x.link ? redactUrl(x.link) : ''))} `)}</td>
<td data-label="Invoice">${t?.invoiceAvailable ? `available${t.invoiceNumber ? ` (${t.invoiceNumber})` : ''}` : t?.invoiceNumber ? t.invoiceNumber : ''}</td>
<td class="n" data-label="Cost">${job.totalJobCost === null ? '' : money(job.totalJobCost, job.currency)}</td>
<td class="date" data-label="Checked (UTC)">${instantText(t?.checkedAt)}</td>
<td class="name" data-label="Input"><a href="/input${query({ id: input.id })}">${input.name}</a></td>
</tr>`;
}

/**
 * Orders in flight: every submitted job once (an input dropped again lists the same jobs), with
 * what `htorder track` last wrote about it; jobs whose provider status waits on the customer first.
 */
export function ordersPage(subs: Submissions): Html {
  const all = subs.owned;
  const due = (r: Submission): string => r.job.tracking?.dateDue ?? r.job.dateDue ?? '9999';
  const shipped = (r: Submission): number => Number(r.job.tracking?.dateOut != null);
  const rows = all
    .slice()
    .sort(
      (a, b) =>
        Number(actionNeeded(b)) - Number(actionNeeded(a)) ||
        shipped(a) - shipped(b) ||
        due(a).localeCompare(due(b)) ||
        a.job.jobNumber - b.job.jobNumber,
    )
    .slice(0, MAX_ROWS);
  const untracked = all.filter((r) => r.job.tracking === null).length;
  const waiting = all.filter(actionNeeded).length;
  return html`<h1>Orders in flight</h1>
${waiting > 0 ? html`<p class="needs-action-note"><strong>${String(waiting)} ${waiting === 1 ? 'job waits' : 'jobs wait'} on you</strong> (on hold, artwork or approval pending: see the provider's status), shown first.</p>` : ''}
<p>Submitted jobs, each once, not yet shipped first, by due date. What is shown is what <code>htorder track</code> last wrote into the reports${untracked > 0 ? html` — ${String(untracked)} not tracked yet (run <code>htorder track</code> on this folder’s <code>done/</code>)` : ''}.</p>
<table id="orders" class="grid cards">
<thead><tr><th>Order</th><th class="n">Job</th><th>Status</th><th>Due</th><th>Shipped</th><th>Early / late</th><th>Tracking</th><th>Invoice</th><th class="n">Cost</th><th>Checked (UTC)</th><th>Input</th></tr></thead>
<tbody>
${rows.length === 0 ? html`<tr><td colspan="11" class="empty">No submitted jobs yet.</td></tr>` : ''}
${rows.map(orderRow)}
</tbody>
</table>
${all.length > rows.length ? html`<p class="note">Only ${String(rows.length)} of ${String(all.length)} jobs are shown.</p>` : ''}`;
}
