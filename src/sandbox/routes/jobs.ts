import type { ActiveJobsEnvelope, JobValidationFailure, ValidateOnlyResponse } from '../../api/types.js';
import { VALIDATE_ONLY_MESSAGE } from '../../api/types.js';
import { fieldErrors, json, problem, readJson, type ApiContext, type ApiHandler, type Reply } from '../handler.js';
import { defaultLocation } from '../data/regions.js';
import { earliestShipDate, earliestShipDay, isoSeconds, parseRequestDate } from '../dates.js';
import { bindCandidate, bindPatch } from '../jobs/binding.js';
import { artworkLinks, createJob } from '../jobs/create.js';
import { enter, isCancelable, lockedReason, settle, STATUS } from '../jobs/lifecycle.js';
import { matchesSearch } from '../jobs/search.js';
import { validateCandidate } from '../jobs/validate.js';
import { toActiveJobDto, toJobDto } from '../jobs/views.js';
import { compareValues, QueryReader } from '../paging.js';
import type { Router } from '../router.js';
import type { JobRecord } from '../state.js';

const HEADERS_OF_INTEREST = ['x-application-name', 'content-type', 'user-agent', 'idempotency-key', 'x-request-id'];

/** A job of the calling customer (settled to the clock), or undefined: another account's job is "missing". */
function findJob(ctx: ApiContext): JobRecord | undefined {
  const raw = ctx.params.jobNumber;
  if (!/^\d+$/.test(raw)) return undefined;
  const job = ctx.customer.jobs.get(Number(raw));
  return job ? settle(job, ctx.now.getTime()) : undefined;
}

const notFound = (ctx: ApiContext): Reply => problem(404, `Job ${ctx.params.jobNumber} was not found.`, ctx.path);

const ACTIVE_SORT: Record<string, (j: JobRecord) => unknown> = {
  jobnumber: (j) => j.jobNumber,
  ordergroupsequence: (j) => j.orderGroupSequence,
  datedue: (j) => j.dueDay,
  datein: (j) => j.dateInMs,
  dateout: (j) => j.dateOutMs,
  ordernumber: (j) => j.orderNumber,
  jobstatus: (j) => j.status,
  description: (j) => j.description,
};

function postJob(ctx: ApiContext): Reply {
  const { value, raw } = readJson(ctx);
  const bound = bindCandidate(value);
  if (Object.keys(bound.errors).length) return fieldErrors(ctx.path, bound.errors);
  const c = bound.value;
  const verdict = validateCandidate(c, ctx);
  const validateOnly = c.validateOnly === true;
  // The documented 500 causes: a crash on a real submit; real messages on a dry run
  // ("send the payload with validateOnly true to get real validation messages").
  if (verdict.crashes.length && !validateOnly) {
    return problem(500, 'An unexpected error occurred while creating the job.', ctx.path, {
      traceId: `sbx-${ctx.world.nextJobNumber}-${verdict.crashes.length}`,
    });
  }
  const messages = [...verdict.crashes.map((m) => ({ errorCode: 'InvalidPayload', message: m })), ...verdict.messages];
  if (messages.length || !verdict.plan) {
    return json({ isValid: false, validationMessages: messages } satisfies JobValidationFailure, 400);
  }
  if (validateOnly) return json({ isValid: true, message: VALIDATE_ONLY_MESSAGE } satisfies ValidateOnlyResponse);
  const { job, response } = createJob(ctx.world, ctx.customer, c, verdict.plan);
  const links = artworkLinks(c);
  if (ctx.world.fetchArtwork && links.length > 0)
    ctx.world.pendingArtwork.push({ customerId: ctx.customer.def.customerId, jobNumber: job.jobNumber, links });
  const headers: Record<string, string> = {};
  for (const h of HEADERS_OF_INTEREST) {
    const v = ctx.headers[h];
    if (typeof v === 'string') headers[h] = v;
  }
  ctx.world.created.push({
    region: ctx.region.code,
    customerId: ctx.customer.def.customerId,
    account: ctx.account.name,
    jobNumber: job.jobNumber,
    orderNumber: job.orderNumber,
    jobStatus: job.status,
    request: value,
    rawBody: raw,
    headers,
    receivedAt: isoSeconds(ctx.now),
  });
  return json(response, 201);
}

function patchJob(ctx: ApiContext): Reply {
  const job = findJob(ctx);
  if (!job) return notFound(ctx);
  const { value } = readJson(ctx);
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return fieldErrors(ctx.path, { $: ['The request body must be a JSON object.'] });
  const { value: patch, errors } = bindPatch(value as Record<string, unknown>);
  if (Object.keys(errors).length) return fieldErrors(ctx.path, errors);
  const locked = lockedReason(job.status);
  if (locked) return problem(403, locked, ctx.path, { lockedReason: locked });
  // Customer credentials are never super-users.
  if (patch.locationCode !== undefined)
    return problem(403, 'locationCode may only be changed by a super-user.', ctx.path);
  let dueDay: string | undefined;
  if (patch.dateDue !== undefined) {
    const d = parseRequestDate(patch.dateDue);
    if (!d) return fieldErrors(ctx.path, { dateDue: [`'${patch.dateDue}' is not a valid date.`] });
    const earliest = earliestShipDay(
      ctx.now,
      job.location,
      job.lines.map((l) => l.processCode ?? ''),
    );
    if (d < earliest)
      return fieldErrors(ctx.path, {
        dateDue: [`The factory cannot meet ${d}; the earliest possible date is ${earliest}.`],
      });
    dueDay = d;
  }
  if (patch.description !== undefined) job.description = patch.description;
  if (patch.comments !== undefined) job.comments = patch.comments;
  if (patch.orderNumber !== undefined) job.orderNumber = patch.orderNumber;
  if (patch.mustDate !== undefined) job.mustDate = patch.mustDate;
  if (dueDay !== undefined) job.dueDay = dueDay;
  ctx.world.dirty = true;
  return json(toJobDto(job, ctx.now.getTime()));
}

function activeJobs(ctx: ApiContext): Reply {
  const q = new QueryReader(ctx);
  const page = q.int('page', 1) ?? 1;
  const pageSize = Math.min(q.int('pageSize', 1) ?? 20, 100);
  const exclude = q.int('excludeJobNumber');
  const userId = q.int('customerUserId');
  const includeClosed = q.bool('includeClosedJobs');
  const orderGroup = ctx.query.get('orderGroup') || null;
  const sortColumn = (ctx.query.get('sortColumn') || (orderGroup ? 'OrderGroupSequence' : 'JobNumber')).toLowerCase();
  const sortKey = ACTIVE_SORT[sortColumn];
  if (!sortKey) q.fail('sortColumn', `'${ctx.query.get('sortColumn')}' is not a sortable column.`);
  const dirRaw = ctx.query.get('sortDirection')?.toLowerCase();
  if (dirRaw && !['asc', 'desc', 'ascending', 'descending'].includes(dirRaw))
    q.fail('sortDirection', 'sortDirection must be asc or desc.');
  const invalid = q.invalid();
  if (invalid) return invalid;
  if (userId !== undefined && !ctx.customer.users.some((u) => u.id === userId)) {
    return fieldErrors(ctx.path, { customerUserId: [`User ${userId} does not belong to this customer.`] });
  }
  // Newest first by default, except order-group sequence, which runs in sequence order.
  const desc = dirRaw ? dirRaw.startsWith('desc') : sortColumn !== 'ordergroupsequence';
  const nowMs = ctx.now.getTime();
  const search = ctx.query.get('searchText') ?? '';
  const all = [...ctx.customer.jobs.values()]
    .map((j) => settle(j, nowMs))
    .filter((j) => j.status !== STATUS.Cancelled)
    .filter((j) => includeClosed === true || j.status !== STATUS.Closed)
    .filter((j) => exclude === undefined || j.jobNumber !== exclude)
    .filter((j) => orderGroup === null || j.orderGroup === orderGroup)
    .filter((j) => userId === undefined || j.customerUserId === userId)
    .filter((j) => matchesSearch(j, search))
    .sort((a, b) => (compareValues(sortKey(a), sortKey(b)) || a.jobNumber - b.jobNumber) * (desc ? -1 : 1));
  const totalPages = Math.ceil(all.length / pageSize);
  const envelope: ActiveJobsEnvelope = {
    items: all.slice((page - 1) * pageSize, page * pageSize).map(toActiveJobDto),
    totalCount: all.length,
    pageNumber: page,
    pageSize,
    totalPages,
    hasPreviousPage: page > 1 && totalPages > 0,
    hasNextPage: page < totalPages,
  };
  return json(envelope);
}

export function register(r: Router<ApiHandler>): void {
  r.add('POST', '/Jobs', postJob);
  r.add('GET', '/Jobs/active', activeJobs);
  r.add('GET', '/Jobs/delivery-options', (ctx) => json(ctx.region.deliveryOptions));
  r.add('GET', '/Jobs/earliest-ship-date', (ctx) =>
    json(earliestShipDate(ctx.now, defaultLocation(ctx.region), new QueryReader(ctx).list('processCodes'))),
  );
  r.add('GET', '/Jobs/{jobNumber}', (ctx) => {
    const job = findJob(ctx);
    return job ? json(toJobDto(job, ctx.now.getTime())) : notFound(ctx);
  });
  r.add('PATCH', '/Jobs/{jobNumber}', patchJob);
  r.add('POST', '/Jobs/{jobNumber}/cancel', (ctx) => {
    const job = findJob(ctx);
    if (!job) return notFound(ctx);
    if (job.status === STATUS.Cancelled) return { status: 204 };
    if (!isCancelable(job.status))
      return problem(409, `Job ${job.jobNumber} is ${job.status} and can no longer be cancelled.`, ctx.path);
    enter(job, STATUS.Cancelled, ctx.now.getTime());
    ctx.world.dirty = true;
    return { status: 204 };
  });
}
