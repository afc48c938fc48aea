import type { Ajv as AjvClass, ErrorObject, ValidateFunction } from 'ajv';
import { prebuiltValidator } from '../core/standalone-validator.js';
import type { CreatedJobRecord } from './admin-types.js';
import { CUSTOMERS } from './data/accounts.js';
import type { AssetRecord } from './data/assets.js';
import { REGIONS } from './data/regions.js';
import { createClock, LATEST_CLOCK_START_MS, MAX_CLOCK_OFFSET_MS } from './clock.js';
import { FIRST_JOB_NUMBER, type JobRecord, World } from './state.js';
import { lateRequire } from '../core/late-require.js';

/**
 * What a persistent sandbox keeps between runs (`--sandbox`), as plain JSON: only what requests
 * changed — the jobs, the assets new prints filed, the counters that hand out job numbers and
 * asset tags, the clock's start and offset. Everything generated from the seed and the start
 * (catalogue, generated assets, users, the three closed jobs of history) is rebuilt, never
 * stored. This module does no I/O: the app layer reads and writes the file and hands the
 * parsed JSON to `restoreSnapshot`, which treats it as hostile input.
 */
export interface SandboxSnapshot {
  format: typeof FORMAT;
  version: typeof VERSION;
  seed: number;
  startMs: number;
  clockOffsetMs: number;
  nextJobNumber: number;
  /**
   * As GET /_sandbox/jobs shows them, without the request's body: it may hold signed artwork
   * URLs, and nothing htorder writes to disk holds those. A restored record shows `request`
   * null and `rawBody` empty.
   */
  created: Omit<CreatedJobRecord, 'request' | 'rawBody'>[];
  customers: CustomerSnapshot[];
}

interface CustomerSnapshot {
  customerId: number;
  nextAssetNumber: number;
  /** The assets new-print lines filed, after the generated ones. */
  filedAssets: AssetRecord[];
  /** Every job of the customer; `location` by its code. */
  jobs: (Omit<JobRecord, 'location'> & { location: string })[];
}

const FORMAT = 'htorder-sandbox-state';
const VERSION = 1;

/** A persisted state that cannot be restored; the message names the JSON path of the first problem. */
export class SandboxStateError extends Error {
  override name = 'SandboxStateError';
}

export function takeSnapshot(world: World): SandboxSnapshot {
  return {
    format: FORMAT,
    version: VERSION,
    seed: world.seed,
    startMs: world.startMs,
    clockOffsetMs: world.clock.offsetMs(),
    nextJobNumber: world.nextJobNumber,
    created: world.created.map(({ request: _parsed, rawBody: _raw, ...rest }) => rest),
    customers: world.builtCustomers().map((c) => ({
      customerId: c.def.customerId,
      nextAssetNumber: c.nextAssetNumber,
      filedAssets: c.assets.slice(c.generatedAssets),
      jobs: [...c.jobs.values()].map((j) => ({ ...j, location: j.location.code })),
    })),
  };
}

/**
 * Replaces the world's state with a saved one. Everything is checked before anything is
 * changed, so a bad state leaves the world as it was: the types (SNAPSHOT_SCHEMA), then
 * known customers, regions and locations, no job number twice, and — what keeps the sandbox
 * and a ledger from disagreeing — no job or asset at or above the counter that hands out the
 * next one.
 */
export function restoreSnapshot(world: World, data: unknown): void {
  const s = checkSnapshot(data, world.seed);
  const customerIds = new Set<number>();
  const customers = s.customers.map((saved, i) => {
    const jobs = checkCustomer(saved, `$.customers[${i}]`);
    if (customerIds.has(saved.customerId)) fail(`$.customers[${i}].customerId`, 'each customer once');
    customerIds.add(saved.customerId);
    return { saved, jobs };
  });
  const owners = new Map<number, number>();
  for (const [i, { saved, jobs }] of customers.entries())
    for (const [j, { jobNumber }] of jobs.entries()) {
      if (owners.has(jobNumber) || (jobNumber >= FIRST_JOB_NUMBER && jobNumber >= s.nextJobNumber))
        fail(
          `$.customers[${i}].jobs[${j}].jobNumber`,
          `a job number below nextJobNumber (${s.nextJobNumber}), each once`,
        );
      owners.set(jobNumber, saved.customerId);
    }
  for (const [i, r] of s.created.entries()) {
    const owner =
      owners.get(r.jobNumber) ?? fail(`$.created[${i}].jobNumber`, 'the number of a job in customers[].jobs');
    if (r.customerId !== owner) fail(`$.created[${i}].customerId`, `${owner}, the customer of job ${r.jobNumber}`);
  }

  world.startMs = s.startMs;
  world.reset();
  world.nextJobNumber = s.nextJobNumber;
  world.created = s.created.map(({ headers, receivedAt, ...rest }) => ({
    ...rest,
    request: null,
    rawBody: '',
    headers,
    receivedAt,
  }));
  world.clock.advance(s.clockOffsetMs);
  for (const { saved, jobs } of customers) {
    const c = world.customer(saved.customerId);
    c.jobs = new Map(jobs.map((j) => [j.jobNumber, j]));
    for (const a of saved.filedAssets) {
      c.assets.push(a);
      c.assetsByTag.set(a.assetTag as string, a);
    }
    c.nextAssetNumber = saved.nextAssetNumber;
  }
  world.dirty = false;
}

function fail(path: string, expected: string): never {
  throw new SandboxStateError(`${path}: expected ${expected}`);
}

/** The format, version and seed by hand (their messages say what to do), then the types by the schema. */
function checkSnapshot(data: unknown, seed: number): SandboxSnapshot {
  const o = (typeof data === 'object' && data !== null ? data : {}) as Record<string, unknown>;
  if (o.format !== FORMAT) fail('$.format', `"${FORMAT}"`);
  if (o.version !== VERSION) fail('$.version', `${VERSION} (written by another htorder version)`);
  if (o.seed !== seed) fail('$.seed', `${seed}, the seed of this sandbox (it holds ${JSON.stringify(o.seed)})`);
  validator ??=
    prebuiltValidator<SandboxSnapshot>(new URL(`./${SNAPSHOT_STANDALONE_FILE}`, import.meta.url), SNAPSHOT_SCHEMA) ??
    compileSnapshotSchema();
  if (validator(data)) return data;
  const e = (validator.errors as ErrorObject[])[0];
  const missing = e.keyword === 'required' ? `/${(e.params as { missingProperty: string }).missingProperty}` : '';
  throw new SandboxStateError(`${jsonPath(data, e.instancePath + missing)}: ${e.message}`);
}

/** One customer's saved part against the sandbox's own data; answers its jobs with their locations. */
function checkCustomer(saved: CustomerSnapshot, at: string): JobRecord[] {
  const def =
    CUSTOMERS.find((d) => d.customerId === saved.customerId) ?? fail(`${at}.customerId`, 'a customer of the sandbox');
  const { customerId, nextAssetNumber } = saved;
  if (nextAssetNumber < def.assetStart + def.assetCount)
    fail(`${at}.nextAssetNumber`, `an integer >= ${def.assetStart + def.assetCount}`);
  const tags = new Set<string>();
  for (const [i, a] of saved.filedAssets.entries()) {
    const tag = a.assetTag as string;
    const n = Number(tag.slice(def.assetPrefix.length));
    if (!tag.startsWith(def.assetPrefix) || !Number.isSafeInteger(n) || n >= nextAssetNumber || tags.has(tag))
      fail(
        `${at}.filedAssets[${i}].assetTag`,
        `a new tag of this customer below nextAssetNumber (${nextAssetNumber}), each once`,
      );
    tags.add(tag);
  }
  const region = REGIONS[def.region];
  return saved.jobs.map((job, i) => {
    const location =
      region.locations.find((l) => l.code === job.location) ??
      fail(`${at}.jobs[${i}].location`, `a location of region ${def.region}`);
    if (job.region !== def.region) fail(`${at}.jobs[${i}].region`, `"${def.region}"`);
    if (job.customerId !== customerId) fail(`${at}.jobs[${i}].customerId`, `${customerId}`);
    return { ...job, location };
  });
}

/** `$.customers[0].jobs[2].status` for the JSON pointer `/customers/0/jobs/2/status`. */
function jsonPath(data: unknown, pointer: string): string {
  let path = '$';
  let node = data;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    path += Array.isArray(node) ? `[${key}]` : `.${key}`;
    node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined;
  }
  return path;
}

let validator: ValidateFunction<SandboxSnapshot> | undefined;

/**
 * ajv's options for the snapshot schema: the build (build/standalone-validators.mjs) and the
 * compile here use the same ones. Properties the schema does not name are dropped
 * (removeAdditional), as a copy of the known fields would: nothing unknown from the file
 * reaches a reply.
 */
export const SNAPSHOT_AJV_OPTIONS = { strict: true, allowUnionTypes: true, removeAdditional: true } as const;

export const SNAPSHOT_STANDALONE_FILE = 'snapshot-validator.standalone.cjs';

/**
 * Taken on the first restore only, generated by the build (core/standalone-validator.ts) or
 * else compiled here: ajv is loaded here, not with this module, so a sandbox without a saved
 * state never pays for loading it and compiling the schema.
 */
function compileSnapshotSchema(): ValidateFunction<SandboxSnapshot> {
  const { Ajv } = lateRequire<{ Ajv: typeof AjvClass }>('ajv');
  return new Ajv(SNAPSHOT_AJV_OPTIONS).compile<SandboxSnapshot>(SNAPSHOT_SCHEMA);
}

const int = (minimum = Number.MIN_SAFE_INTEGER) => ({ type: 'integer', minimum, maximum: Number.MAX_SAFE_INTEGER });
const intOrNull = { ...int(), type: ['integer', 'null'] };
const num = (minimum?: number) => (minimum === undefined ? { type: 'number' } : { type: 'number', minimum });
const str = { type: 'string' };
const strOrNull = { type: ['string', 'null'] };
const bool = { type: 'boolean' };
const list = (items: object) => ({ type: 'array', items });
/** These properties, the `required` ones (all by default) required; no others (dropped, see above). */
const record = (properties: Record<string, object>, required = Object.keys(properties)) => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});

const LINE = record({
  jobLineId: int(),
  assetSku: strOrNull,
  processCode: strOrNull,
  garment: strOrNull,
  description: strOrNull,
  comments: strOrNull,
  quantity: num(),
  unitPrice: num(),
  customerReference: strOrNull,
  imageUrl: strOrNull,
  gang: strOrNull,
  jobLineStatus: strOrNull,
});

/** A job's shipping address as create.ts writes it; only the tracking fields are always there. */
const ADDRESS = record(
  {
    trackingNumber: strOrNull,
    trackingLink: strOrNull,
    contactName: strOrNull,
    organisation: strOrNull,
    streetAddress: strOrNull,
    city: strOrNull,
    state: strOrNull,
    postalCode: strOrNull,
    countryCodeISO2: strOrNull,
    deliveryMethod: strOrNull,
  },
  ['trackingNumber', 'trackingLink'],
);

const JOB = record({
  jobNumber: int(1),
  customerId: int(),
  region: str,
  description: strOrNull,
  comments: strOrNull,
  orderNumber: strOrNull,
  dueDay: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
  timeSensitive: bool,
  mustDate: bool,
  orderGroup: strOrNull,
  orderGroupSequence: intOrNull,
  customerUserId: int(),
  creator: strOrNull,
  originCode: str,
  dateInMs: num(),
  status: str,
  statusSinceMs: num(),
  dateOutMs: { type: ['number', 'null'] },
  location: str,
  deliveryMethod: str,
  deliveryLabel: str,
  isCollection: bool,
  lines: list(LINE),
  shippingAddresses: list(ADDRESS),
  invoiceNumber: strOrNull,
  totalJobCost: num(),
  taxTotal: num(),
});

const ASSET = record({
  assetId: int(),
  assetTag: str,
  processCode: strOrNull,
  description: strOrNull,
  garment: strOrNull,
  priceTierCode: strOrNull,
  setup: num(0),
  reset: num(0),
  priceCode: strOrNull,
  assetUrl: strOrNull,
  createDate: str,
  isGlobal: bool,
  isArchived: bool,
  priceBands: list(record({ from: int(), to: intOrNull, unitPrice: num(0) })),
  externalId: strOrNull,
  customerId: intOrNull,
});

export const SNAPSHOT_SCHEMA = record({
  format: { const: FORMAT },
  version: { const: VERSION },
  seed: int(),
  startMs: { ...num(0), maximum: LATEST_CLOCK_START_MS },
  clockOffsetMs: { ...num(0), maximum: MAX_CLOCK_OFFSET_MS },
  nextJobNumber: int(FIRST_JOB_NUMBER),
  created: list(
    record({
      region: str,
      customerId: int(),
      account: str,
      jobNumber: int(),
      orderNumber: strOrNull,
      jobStatus: str,
      headers: { type: 'object', additionalProperties: str },
      receivedAt: str,
    }),
  ),
  customers: list(record({ customerId: int(), nextAssetNumber: int(), filedAssets: list(ASSET), jobs: list(JOB) })),
});

/**
 * The state a reset starts over from: no jobs, no filed assets, the clock's start now — but
 * the job counter of `previous` (any saved state, even one that cannot be restored, if its
 * counter can be read), so a job number is never handed out twice, not even across resets,
 * and a report of before the reset never names a job of after it. `forgotJobs`: how many
 * jobs `previous` held, when that can be read.
 */
export function resetSnapshot(
  previous: unknown,
  seed: number,
  nowMs: number,
): { snapshot: SandboxSnapshot; forgotJobs: number | undefined } {
  const old = (typeof previous === 'object' && previous !== null ? previous : {}) as Record<string, unknown>;
  const world = new World(seed, createClock(new Date(nowMs)), nowMs);
  const counter = old.nextJobNumber as number;
  if (Number.isSafeInteger(counter) && counter > FIRST_JOB_NUMBER) world.nextJobNumber = counter;
  return { snapshot: takeSnapshot(world), forgotJobs: Array.isArray(old.created) ? old.created.length : undefined };
}
