import { activeJobsFault, jobAnswerFault } from '../active-answer.js';
import { ApiError, unusableAnswer } from '../errors.js';
import { paginateActiveJobs } from '../paginate.js';
import type { Transport } from '../transport.js';
import type {
  ActiveJobDto,
  ActiveJobsEnvelope,
  ActiveJobsQuery,
  DeliveryOption,
  EarliestShipDate,
  JobCandidate,
  JobCreateResponse,
  JobDto,
  PatchJobDto,
} from '../types.js';

/**
 * The answer to a `validateOnly` POST /Jobs. The spec shows neither the status nor the
 * body shape of a successful validation (only the message 'Validated with NO Errors. Job
 * NOT created.'), so any 2xx counts as "valid" and the body is passed through untyped.
 * Invalid payloads arrive as ApiError (400 with validationMessages, or 500).
 */
export interface ValidateResult {
  status: number;
  body: unknown;
  /** The body's `message` (or the body itself when it is text), if any. */
  message: string | null;
  /**
   * Set when the answer carries a job number: the API may have created a job, though the spec
   * says a dry run creates nothing (an API or a gateway that drops the flag), or only names one.
   * The caller searches the account for the order before it sends it.
   */
  created?: JobCreateResponse;
}

export interface JobsApi {
  /**
   * POST /Jobs. Never retried: a failure carries `mayHaveReachedServer`, and when true the
   * job may exist; search `active({ searchText: orderNumber, includeClosedJobs: true })`
   * before sending again. A cost the answer gives as a plain decimal string is read as that
   * number; one that cannot be read is NaN.
   */
  create(candidate: JobCandidate): Promise<JobCreateResponse>;
  /** POST /Jobs with validateOnly true. Creates nothing, so it is retried like a GET. */
  validate(candidate: JobCandidate): Promise<ValidateResult>;
  /**
   * GET /Jobs/{jobNumber}. A missing (or other account's) job throws an ApiError for which
   * isNotFound() is true; an answer that is not this job, or has no lists of lines and
   * shipping addresses, throws one with UNUSABLE_ANSWER_CODE.
   */
  get(jobNumber: number): Promise<JobDto>;
  /** PATCH /Jobs/{jobNumber}: only non-null fields change. Never retried. */
  patch(jobNumber: number, patch: PatchJobDto): Promise<JobDto>;
  /** POST /Jobs/{jobNumber}/cancel: 204 on success (also when already cancelled); 409 once in production. Never retried. */
  cancel(jobNumber: number): Promise<void>;
  /**
   * GET /Jobs/active: one page. An answer without a list of jobs, or with a job whose number or
   * order number cannot be used, throws an ApiError (UNUSABLE_ANSWER_CODE): the search it serves
   * decides whether an order exists, so it is never read in part.
   */
  active(query?: ActiveJobsQuery): Promise<ActiveJobsEnvelope>;
  /** GET /Jobs/active, every page, lazily. `query.page` is the first page. */
  iterateActive(query?: ActiveJobsQuery): AsyncGenerator<ActiveJobDto, void, undefined>;
  /** GET /Jobs/delivery-options */
  deliveryOptions(): Promise<DeliveryOption[]>;
  /** GET /Jobs/earliest-ship-date. A live calculation: never cache it. */
  earliestShipDate(query?: { processCodes?: string | readonly string[] }): Promise<EarliestShipDate>;
}

export function jobsApi(t: Transport): JobsApi {
  const job = (n: number): string => `/Jobs/${encodeURIComponent(checkJobNumber(n))}`;
  const active = async (query: ActiveJobsQuery = {}): Promise<ActiveJobsEnvelope> => {
    const body = await t.request({ method: 'GET', path: '/Jobs/active', query: { ...query } });
    const why = activeJobsFault(body);
    if (why !== null) throw unusableAnswer('GET', '/Jobs/active', why);
    return body as ActiveJobsEnvelope;
  };
  return {
    create: async (candidate) => {
      const res = await t.send({
        method: 'POST',
        path: '/Jobs',
        body: { ...candidate, validateOnly: false },
        retrySafe: false,
      });
      return createAnswer(res.status, res.body);
    },
    validate: async (candidate) => {
      const res = await t.send({ method: 'POST', path: '/Jobs', body: { ...candidate, validateOnly: true } });
      const m = typeof res.body === 'string' ? res.body : (res.body as { message?: unknown } | null)?.message;
      const result: ValidateResult = { status: res.status, body: res.body, message: typeof m === 'string' ? m : null };
      return unreadableCreate(res.body) === null ? { ...result, created: createAnswer(res.status, res.body) } : result;
    },
    get: async (n) => {
      const path = job(n);
      const body = await t.request({ method: 'GET', path });
      const why = jobAnswerFault(body, n);
      if (why !== null) throw unusableAnswer('GET', path, why);
      return body as JobDto;
    },
    patch: (n, patch) => t.request({ method: 'PATCH', path: job(n), body: patch }),
    cancel: async (n) => {
      await t.request({ method: 'POST', path: `${job(n)}/cancel` });
    },
    active,
    iterateActive: (query = {}) => paginateActiveJobs((page) => active({ ...query, page }), query.page ?? 1),
    deliveryOptions: () => t.request({ method: 'GET', path: '/Jobs/delivery-options' }),
    earliestShipDate: (query = {}) =>
      t.request({ method: 'GET', path: '/Jobs/earliest-ship-date', query: { processCodes: query.processCodes } }),
  };
}

/**
 * A 2xx create answer the client cannot read (not JSON, null, no job number) says nothing
 * about whether the job was created: it becomes an ApiError that may have reached the
 * server, so the caller settles it by searching for the order number, as after a timeout.
 */
function createAnswer(status: number, body: unknown): JobCreateResponse {
  const why = unreadableCreate(body);
  if (why === null) {
    const answer = body as JobCreateResponse;
    // Line details and the cost are a bonus (the job can be fetched); neither, malformed, fails a created job.
    const lines = Array.isArray(answer.jobLineDetails) ? answer.jobLineDetails : [];
    return { ...answer, jobLineDetails: lines, totalJobCost: money(answer.totalJobCost) };
  }
  throw new ApiError({
    kind: 'http',
    method: 'POST',
    route: '/Jobs',
    status,
    mayHaveReachedServer: true,
    body: typeof body === 'string' ? body.slice(0, 300) : body,
    message:
      `POST /Jobs: ${status} but the answer could not be read (${why}); the job may have been created, ` +
      'so it is looked up by its order number before anything is sent again',
  });
}

/**
 * An amount as a number: the spec's number, or the same written as a plain decimal string (an
 * API that serialises decimals as text). Anything else (words, a comma decimal, an object) is
 * not guessed at: NaN, the cost unknown (a report says null), rather than text carried on.
 */
function money(value: unknown): number {
  if (typeof value === 'number') return Number.isFinite(value) ? value : Number.NaN;
  if (typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  return Number.NaN;
}

function unreadableCreate(body: unknown): string | null {
  if (body === null) return 'empty or null';
  if (typeof body === 'string') return 'not JSON';
  if (typeof body !== 'object' || Array.isArray(body)) return `JSON ${Array.isArray(body) ? 'array' : typeof body}`;
  const n = (body as { jobNumber?: unknown }).jobNumber;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) return 'no job number';
  return null;
}

function checkJobNumber(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw new TypeError(`job number must be a non-negative integer, got ${n}`);
  return String(n);
}
