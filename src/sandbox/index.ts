import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { TokenStore } from './auth.js';
import { createClock } from './clock.js';
import { ACCOUNTS, clientSecret } from './data/accounts.js';
import { REGION_CODES, REGIONS } from './data/regions.js';
import { Faults } from './faults.js';
import { createSandboxServer } from './server.js';
import { SharedWorld, type SandboxStateStore } from './persistence.js';
import { World } from './state.js';
import { SandboxAdmin } from './admin-client.js';

export { SandboxAdmin } from './admin-client.js';
export type { FaultRule, FaultKind, CreatedJobRecord } from './admin-types.js';
export type { SandboxStateStore, StoredState } from './persistence.js';
export { resetSnapshot, SandboxStateError, type SandboxSnapshot } from './snapshot.js';

export interface SandboxOptions {
  /** 0 = a random free port (default). */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Varies the generated bulk data and the client secrets; default 1. */
  seed?: number;
  /** Default 600 (the API's 10 minutes). */
  tokenTtlSeconds?: number;
  /** The sandbox clock's start (it then runs with real time); default now. */
  now?: Date;
  /**
   * Keeps the state (jobs, job numbers, filed assets, the clock) in a store and shares it with
   * other sandboxes on the same store; default in memory only. A saved state that cannot be
   * used rejects the start with a SandboxStateError (never silently starts over).
   */
  state?: SandboxStateStore;
  /**
   * Play the printer's part for new prints: fetch each job's artwork links after creation and
   * keep the job in "Artwork Pending" until every one answered with an image (docs/sandbox.md).
   * Default false: jobs with links are taken as fetched.
   */
  fetchArtwork?: boolean;
}

export interface SandboxRegion {
  baseUrl: string;
  authUrl: string;
  realm: string;
  statusUrl: string;
}

export interface SandboxAccount {
  name: string;
  region: string;
  clientId: string;
  clientSecret: string;
  customerId: number;
  role: 'admin' | 'user';
}

export interface SandboxInfo {
  url: string;
  regions: Record<string, SandboxRegion>;
  accounts: SandboxAccount[];
}

export interface Sandbox extends SandboxInfo {
  admin: SandboxAdmin;
  info(): SandboxInfo;
  /** How far the admin routes (or `htorder sandbox clock`) moved its clock ahead of real time. */
  clockOffsetMs(): number;
  /** Picks up what another process saved to its state (its clock among it); nothing without a store. */
  refresh(): Promise<void>;
  close(): Promise<void>;
}

/** The names of the demo accounts (`--account`), whatever the seed. */
export function sandboxAccountNames(): string[] {
  return ACCOUNTS.map((a) => a.name);
}

/** Starts the simulator on one HTTP server; resolves once it is listening. */
export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  const seed = opts.seed ?? 1;
  const host = opts.host ?? '127.0.0.1';
  const clock = createClock(opts.now ?? new Date());
  const world = new World(seed, clock, clock.nowMs());
  world.fetchArtwork = opts.fetchArtwork === true;
  const shared = opts.state ? new SharedWorld(world, opts.state) : undefined;
  // Before listening: a bad saved state stops the start, and nothing is served from a half-loaded world.
  await shared?.read();
  const tokens = new TokenStore(clock, opts.tokenTtlSeconds ?? 600);
  const accounts: SandboxAccount[] = ACCOUNTS.map((a) => ({
    name: a.name,
    region: a.region,
    clientId: a.name,
    clientSecret: clientSecret(seed, a.name),
    customerId: a.customerId,
    role: a.role,
  }));
  const secrets = new Map(accounts.map((a) => [a.name, a.clientSecret]));
  let info: SandboxInfo | null = null;
  const server = createSandboxServer({ world, tokens, faults: new Faults(seed), secrets, info: () => info, shared });
  server.listen(opts.port ?? 0, host);
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const regions = Object.fromEntries(
    REGION_CODES.map((code) => [
      code,
      {
        baseUrl: `${url}/${code}/api`,
        authUrl: `${url}/${code}/auth`,
        realm: REGIONS[code].realm,
        statusUrl: `${url}/${code}/status`,
      },
    ]),
  );
  const started: SandboxInfo = { url, regions, accounts };
  info = started;
  return {
    ...started,
    admin: new SandboxAdmin(url),
    info: () => structuredClone(started),
    clockOffsetMs: () => clock.offsetMs(),
    refresh: async () => {
      await shared?.read();
    },
    close: async () => {
      await Promise.allSettled([...world.fetching]);
      await new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}
