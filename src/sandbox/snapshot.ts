import type { JobLineDto, PriceBand, ShippingAddressTracking } from '../api/types.js';
import type { CreatedJobRecord } from './admin-types.js';
import { CUSTOMERS } from './data/accounts.js';
import type { AssetRecord } from './data/assets.js';
import { REGIONS, type RegionCode } from './data/regions.js';
import { FIRST_JOB_NUMBER, type JobRecord, type World } from './state.js';

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
 * changed, so a bad state leaves the world as it was: types, known customers, regions and
 * locations, no job number twice, and — what keeps the sandbox and a ledger from disagreeing —
 * no job or asset at or above the counter that hands out the next one.
 */
export function restoreSnapshot(world: World, data: unknown): void {
  const s = readSnapshot(new At(data, '$'), world.seed);
  world.startMs = s.startMs;
  world.reset();
  world.nextJobNumber = s.nextJobNumber;
  world.created = s.created;
  world.clock.resetOffset();
  world.clock.advance(s.clockOffsetMs);
  for (const saved of s.customers) {
    const c = world.customer(saved.customerId);
    c.jobs = new Map(saved.jobs.map((j) => [j.jobNumber, j]));
    for (const a of saved.filedAssets) {
      c.assets.push(a);
      c.assetsByTag.set(a.assetTag as string, a);
    }
    c.nextAssetNumber = saved.nextAssetNumber;
  }
  world.dirty = false;
}

interface Restored {
  startMs: number;
  clockOffsetMs: number;
  nextJobNumber: number;
  created: CreatedJobRecord[];
  customers: { customerId: number; nextAssetNumber: number; filedAssets: AssetRecord[]; jobs: JobRecord[] }[];
}

function readSnapshot(root: At, seed: number): Restored {
  if (root.get('format').str() !== FORMAT) root.get('format').fail(`"${FORMAT}"`);
  if (root.get('version').int() !== VERSION)
    root.get('version').fail(`${VERSION} (written by another htorder version)`);
  const savedSeed = root.get('seed').int();
  if (savedSeed !== seed) root.get('seed').fail(`${seed}, the seed of this sandbox (it holds ${savedSeed})`);
  const nextJobNumber = root.get('nextJobNumber').int(FIRST_JOB_NUMBER);
  const jobNumbers = new Set<number>();
  const customerIds = new Set<number>();
  const customers = root
    .get('customers')
    .list()
    .map((c) => {
      const customerId = c.get('customerId').int();
      const def =
        CUSTOMERS.find((d) => d.customerId === customerId) ?? c.get('customerId').fail('a customer of the sandbox');
      if (customerIds.has(customerId)) c.get('customerId').fail('each customer once');
      customerIds.add(customerId);
      const nextAssetNumber = c.get('nextAssetNumber').int(def.assetStart + def.assetCount);
      const tags = new Set<string>();
      const filedAssets = c
        .get('filedAssets')
        .list()
        .map((a) => {
          const asset = readAsset(a);
          const tag = asset.assetTag as string;
          const n = Number(tag.slice(def.assetPrefix.length));
          if (!tag.startsWith(def.assetPrefix) || !Number.isSafeInteger(n) || n >= nextAssetNumber || tags.has(tag))
            a.get('assetTag').fail(`a new tag of this customer below nextAssetNumber (${nextAssetNumber}), each once`);
          tags.add(tag);
          return asset;
        });
      const jobs = c
        .get('jobs')
        .list()
        .map((j) => {
          const job = readJob(j, def.region);
          if (job.customerId !== customerId) j.get('customerId').fail(`${customerId}`);
          if (jobNumbers.has(job.jobNumber) || (job.jobNumber >= FIRST_JOB_NUMBER && job.jobNumber >= nextJobNumber))
            j.get('jobNumber').fail(`a job number below nextJobNumber (${nextJobNumber}), each once`);
          jobNumbers.add(job.jobNumber);
          return job;
        });
      return { customerId, nextAssetNumber, filedAssets, jobs };
    });
  const created = root
    .get('created')
    .list()
    .map((r) => {
      const record = readCreated(r);
      if (!jobNumbers.has(record.jobNumber)) r.get('jobNumber').fail('the number of a job in customers[].jobs');
      return record;
    });
  const startMs = root.get('startMs').num(0);
  const clockOffsetMs = root.get('clockOffsetMs').num(0);
  return { startMs, clockOffsetMs, nextJobNumber, created, customers };
}

function readJob(j: At, region: RegionCode): JobRecord {
  const r = REGIONS[region];
  const locationCode = j.get('location').str();
  const location =
    r.locations.find((l) => l.code === locationCode) ?? j.get('location').fail(`a location of region ${region}`);
  if (j.get('region').str() !== region) j.get('region').fail(`"${region}"`);
  return {
    jobNumber: j.get('jobNumber').int(1),
    customerId: j.get('customerId').int(),
    region,
    description: j.get('description').strOrNull(),
    comments: j.get('comments').strOrNull(),
    orderNumber: j.get('orderNumber').strOrNull(),
    dueDay: j.get('dueDay').day(),
    timeSensitive: j.get('timeSensitive').bool(),
    mustDate: j.get('mustDate').bool(),
    orderGroup: j.get('orderGroup').strOrNull(),
    orderGroupSequence: j.get('orderGroupSequence').isNull() ? null : j.get('orderGroupSequence').int(),
    customerUserId: j.get('customerUserId').int(),
    creator: j.get('creator').strOrNull(),
    originCode: j.get('originCode').str(),
    dateInMs: j.get('dateInMs').num(),
    status: j.get('status').str(),
    statusSinceMs: j.get('statusSinceMs').num(),
    dateOutMs: j.get('dateOutMs').isNull() ? null : j.get('dateOutMs').num(),
    location,
    deliveryMethod: j.get('deliveryMethod').str(),
    deliveryLabel: j.get('deliveryLabel').str(),
    isCollection: j.get('isCollection').bool(),
    lines: j.get('lines').list().map(readLine),
    shippingAddresses: j.get('shippingAddresses').list().map(readAddress),
    invoiceNumber: j.get('invoiceNumber').strOrNull(),
    totalJobCost: j.get('totalJobCost').num(),
    taxTotal: j.get('taxTotal').num(),
  };
}

function readLine(l: At): JobLineDto {
  return {
    jobLineId: l.get('jobLineId').int(),
    assetSku: l.get('assetSku').strOrNull(),
    processCode: l.get('processCode').strOrNull(),
    garment: l.get('garment').strOrNull(),
    description: l.get('description').strOrNull(),
    comments: l.get('comments').strOrNull(),
    quantity: l.get('quantity').num(),
    unitPrice: l.get('unitPrice').num(),
    customerReference: l.get('customerReference').strOrNull(),
    imageUrl: l.get('imageUrl').strOrNull(),
    gang: l.get('gang').strOrNull(),
    jobLineStatus: l.get('jobLineStatus').strOrNull(),
  };
}

/** The address fields a job keeps (create.ts), each a string or null when present. */
const ADDRESS_FIELDS = [
  'contactName',
  'organisation',
  'streetAddress',
  'city',
  'state',
  'postalCode',
  'countryCodeISO2',
  'deliveryMethod',
] as const;

function readAddress(a: At): ShippingAddressTracking {
  const out: ShippingAddressTracking = {
    trackingNumber: a.get('trackingNumber').strOrNull(),
    trackingLink: a.get('trackingLink').strOrNull(),
  };
  for (const k of ADDRESS_FIELDS) if (a.has(k)) out[k] = a.get(k).strOrNull();
  return out;
}

function readAsset(a: At): AssetRecord {
  return {
    assetId: a.get('assetId').int(),
    assetTag: a.get('assetTag').str(),
    processCode: a.get('processCode').strOrNull(),
    description: a.get('description').strOrNull(),
    garment: a.get('garment').strOrNull(),
    priceTierCode: a.get('priceTierCode').strOrNull(),
    setup: a.get('setup').num(0),
    reset: a.get('reset').num(0),
    priceCode: a.get('priceCode').strOrNull(),
    assetUrl: a.get('assetUrl').strOrNull(),
    createDate: a.get('createDate').str(),
    isGlobal: a.get('isGlobal').bool(),
    isArchived: a.get('isArchived').bool(),
    priceBands: a.get('priceBands').list().map(readBand),
    externalId: a.get('externalId').strOrNull(),
    customerId: a.get('customerId').isNull() ? null : a.get('customerId').int(),
  };
}

function readBand(b: At): PriceBand {
  return {
    from: b.get('from').int(),
    to: b.get('to').isNull() ? null : b.get('to').int(),
    unitPrice: b.get('unitPrice').num(0),
  };
}

function readCreated(r: At): CreatedJobRecord {
  const headers: Record<string, string> = {};
  const h = r.get('headers');
  for (const k of Object.keys(h.object())) headers[k] = h.get(k).str();
  return {
    region: r.get('region').str(),
    customerId: r.get('customerId').int(),
    account: r.get('account').str(),
    jobNumber: r.get('jobNumber').int(),
    orderNumber: r.get('orderNumber').strOrNull(),
    jobStatus: r.get('jobStatus').str(),
    request: null,
    rawBody: '',
    headers,
    receivedAt: r.get('receivedAt').str(),
  };
}

/** A value of the parsed JSON and its path (`$.customers[0].jobs[2].status`), for located errors. */
class At {
  constructor(
    private readonly value: unknown,
    private readonly path: string,
  ) {}

  fail(expected: string): never {
    throw new SandboxStateError(`${this.path}: expected ${expected}`);
  }

  object(): Record<string, unknown> {
    const v = this.value;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) this.fail('an object');
    return v as Record<string, unknown>;
  }

  has(key: string): boolean {
    return Object.hasOwn(this.object(), key);
  }

  get(key: string): At {
    const o = this.object();
    return new At(Object.hasOwn(o, key) ? o[key] : undefined, `${this.path}.${key}`);
  }

  list(): At[] {
    if (!Array.isArray(this.value)) this.fail('a list');
    return this.value.map((v, i) => new At(v, `${this.path}[${i}]`));
  }

  isNull(): boolean {
    return this.value === null;
  }

  str(): string {
    if (typeof this.value !== 'string') this.fail('a string');
    return this.value;
  }

  strOrNull(): string | null {
    return this.value === null ? null : this.str();
  }

  day(): string {
    const v = this.str();
    if (!/^\d{4}-\d{2}-\d{2}$/.test(v)) this.fail('a date YYYY-MM-DD');
    return v;
  }

  bool(): boolean {
    if (typeof this.value !== 'boolean') this.fail('true or false');
    return this.value;
  }

  num(min = -Number.MAX_VALUE): number {
    if (typeof this.value !== 'number' || !Number.isFinite(this.value) || this.value < min)
      this.fail(min === -Number.MAX_VALUE ? 'a number' : `a number >= ${min}`);
    return this.value;
  }

  int(min = Number.MIN_SAFE_INTEGER): number {
    if (!Number.isSafeInteger(this.value) || (this.value as number) < min)
      this.fail(min === Number.MIN_SAFE_INTEGER ? 'an integer' : `an integer >= ${min}`);
    return this.value as number;
  }
}

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
  const old = typeof previous === 'object' && previous !== null ? (previous as Record<string, unknown>) : {};
  const counter = old.nextJobNumber;
  const created = old.created;
  return {
    snapshot: {
      format: FORMAT,
      version: VERSION,
      seed,
      startMs: nowMs,
      clockOffsetMs: 0,
      nextJobNumber:
        Number.isSafeInteger(counter) && (counter as number) > FIRST_JOB_NUMBER
          ? (counter as number)
          : FIRST_JOB_NUMBER,
      created: [],
      customers: [],
    },
    forgotJobs: Array.isArray(created) ? created.length : undefined,
  };
}
