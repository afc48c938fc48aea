import type {
  JobLineDto,
  PriceCodeDto,
  PricingProcessDto,
  AccountProfile,
  PaymentTransaction,
  ShipmentSettings,
  UserProfile,
  ShippingAddressTracking,
} from '../api/types.js';
import type { CreatedJobRecord } from './admin-types.js';
import { CUSTOMERS, customerDef, type CustomerDef } from './data/accounts.js';
import { generateAssets, generateGlobalAssets, type AssetRecord } from './data/assets.js';
import { buildCatalogue, buildProcesses } from './data/catalogue.js';
import { buildProfile, buildShipmentSettings, generateTransactions, generateUsers } from './data/people.js';
import { REGIONS, type LocationDef, type RegionCode, type RegionDef } from './data/regions.js';
import type { SandboxClock } from './clock.js';
import type { PendingArtwork } from './jobs/artwork-fetch.js';
import { seedHistory } from './jobs/history.js';

/** A job as the sandbox keeps it; JobDto / ActiveJobDto are views of it (jobs/views.ts). */
export interface JobRecord {
  jobNumber: number;
  customerId: number;
  region: RegionCode;
  description: string | null;
  comments: string | null;
  orderNumber: string | null;
  /** Local date YYYY-MM-DD in the location's timezone. */
  dueDay: string;
  timeSensitive: boolean;
  mustDate: boolean;
  orderGroup: string | null;
  orderGroupSequence: number | null;
  customerUserId: number;
  creator: string | null;
  originCode: string;
  dateInMs: number;
  status: string;
  /** When the current status was entered (sandbox clock ms). */
  statusSinceMs: number;
  dateOutMs: number | null;
  location: LocationDef;
  deliveryMethod: string;
  deliveryLabel: string;
  isCollection: boolean;
  lines: JobLineDto[];
  shippingAddresses: ShippingAddressTracking[];
  invoiceNumber: string | null;
  totalJobCost: number;
  taxTotal: number;
}

export interface CustomerState {
  def: CustomerDef;
  region: RegionDef;
  catalogue: PriceCodeDto[];
  processes: PricingProcessDto[];
  /** In creation order; `assetsByTag` indexes it. */
  assets: AssetRecord[];
  /** How many of `assets` were generated from the seed; the rest were filed by jobs (and are persisted). */
  generatedAssets: number;
  assetsByTag: Map<string, AssetRecord>;
  nextAssetNumber: number;
  users: UserProfile[];
  profile: AccountProfile;
  transactions: PaymentTransaction[];
  shipmentSettings: ShipmentSettings;
  jobs: Map<number, JobRecord>;
}

export const FIRST_JOB_NUMBER = 700001;

/**
 * All mutable sandbox state, rebuilt lazily (per customer) after a reset. What is generated
 * from the seed and `startMs` is rebuilt, never stored; what requests change (jobs, filed
 * assets, counters) is what snapshot.ts saves and restores for a persistent sandbox.
 */
export class World {
  private customers = new Map<number, CustomerState>();
  private globals = new Map<RegionCode, AssetRecord[]>();
  nextJobNumber = FIRST_JOB_NUMBER;
  created: CreatedJobRecord[] = [];
  /**
   * Set by every change a persistent sandbox must save (a job created, edited, cancelled or
   * advanced, the clock moved, a reset); persistence.ts saves and clears it. Lazy work (a
   * customer built, a status settled by the clock) repeats exactly and needs no saving.
   */
  dirty = false;
  /** The printer fetches each new print's artwork links after the job is created (artwork-fetch.ts). */
  fetchArtwork = false;
  /** Jobs whose links are still to be fetched; in memory only (the printer keeps no copy of a link). */
  pendingArtwork: PendingArtwork[] = [];
  /** Fetches in flight: a sandbox closing waits for them, so what the printer got is recorded. */
  fetching = new Set<Promise<void>>();

  constructor(
    readonly seed: number,
    readonly clock: SandboxClock,
    /**
     * The clock's first start: fixed, so generated dates repeat for a seed + start. A
     * persistent sandbox keeps the start of its first run (snapshot.ts).
     */
    public startMs: number,
  ) {}

  /** Back to the seed's state and the clock's start (no offset). */
  reset(): void {
    this.clock.resetOffset();
    this.customers.clear();
    this.globals.clear();
    this.nextJobNumber = FIRST_JOB_NUMBER;
    this.created = [];
    this.pendingArtwork = [];
    this.dirty = true;
  }

  /** The customers built so far (the only ones a request can have changed). */
  builtCustomers(): CustomerState[] {
    return [...this.customers.values()];
  }

  customer(customerId: number): CustomerState {
    let c = this.customers.get(customerId);
    if (!c) {
      c = this.build(customerDef(customerId));
      this.customers.set(customerId, c);
    }
    return c;
  }

  globalAssets(region: RegionCode): AssetRecord[] {
    let g = this.globals.get(region);
    if (!g) {
      const r = REGIONS[region];
      g = generateGlobalAssets(r, buildCatalogue(r, 1), this.seed, new Date(this.startMs));
      this.globals.set(region, g);
    }
    return g;
  }

  /** An asset the customer may see: its own, or a global one of its region. */
  findAsset(c: CustomerState, tag: string): AssetRecord | undefined {
    return c.assetsByTag.get(tag) ?? this.globalAssets(c.region.code).find((a) => a.assetTag === tag);
  }

  allCustomers(): CustomerState[] {
    return CUSTOMERS.map((d) => this.customer(d.customerId));
  }

  private build(def: CustomerDef): CustomerState {
    const region = REGIONS[def.region];
    const start = new Date(this.startMs);
    const catalogue = buildCatalogue(region, def.tierFactor);
    const assets = generateAssets(def, region, catalogue, this.seed, start);
    const state: CustomerState = {
      def,
      region,
      catalogue,
      processes: buildProcesses(region),
      assets,
      assetsByTag: new Map(assets.map((a) => [a.assetTag as string, a])),
      generatedAssets: assets.length,
      nextAssetNumber: def.assetStart + assets.length,
      users: generateUsers(def, region, this.seed, start),
      profile: buildProfile(def, region),
      transactions: generateTransactions(def, region, this.seed, start),
      shipmentSettings: buildShipmentSettings(region),
      jobs: new Map(),
    };
    seedHistory(state, this.startMs);
    return state;
  }
}
