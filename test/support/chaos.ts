import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { FolderLedger } from '../../src/storage/ledger/folder-ledger.js';
import type { LedgerEntry } from '../../src/storage/ledger/model.js';
import type { FaultRule } from '../../src/sandbox/admin-types.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { CLI, ROOT } from './dist.js';
import { CODED_ADDRESS } from './yaml-manifests.js';

/**
 * The chaos rig (issue 7): a sandbox with faults and short-lived tokens, real `htorder`
 * processes (the built CLI) that are killed with SIGKILL at random moments and restarted,
 * and the checks that prove "every order exactly once, nothing lost, no secret leaked"
 * against the sandbox's own record of what it received.
 */

export interface ExpectedItem {
  itemType: string;
  code: string;
  quantity?: number;
  sizeQuantities?: Record<string, number>;
}

export interface ChaosManifest {
  text: string;
  /** orderNumber → the items the API must have received, in order. */
  expected: Map<string, ExpectedItem[]>;
}

export interface Proc {
  child: ChildProcess;
  exited: Promise<number | null>;
  /** Everything written to stdout and stderr so far. */
  output(): string;
}

export interface Verdict {
  created: number;
  duplicates: string[];
  missing: string[];
  unexpected: string[];
  wrongItems: string[];
}

export { seeded } from './seeded-random.js';

/**
 * The fault mix. Rules are checked in order and the first firing non-latency rule
 * decides, so later probabilities apply to what the earlier ones left.
 */
export function chaosFaults(scale = 1): FaultRule[] {
  return [
    { route: '*', kind: 'latency', latencyMs: 0, jitterMs: 25 },
    { route: 'POST /Jobs', when: 'create', kind: 'create-then-drop', probability: 0.1 * scale },
    { route: 'POST /Jobs', when: 'create', kind: 'create-then-500', probability: 0.05 * scale },
    { route: '*', kind: 'status', status: 503, retryAfterSeconds: 0, probability: 0.05 * scale },
    { route: '*', kind: 'status', status: 429, retryAfterSeconds: 1, probability: 0.02 * scale },
    { route: '*', kind: 'reset', probability: 0.02 * scale },
  ] as FaultRule[];
}

export class ChaosRig {
  private constructor(
    readonly sandbox: Sandbox,
    readonly stateDir: string,
    readonly workDir: string,
  ) {}

  /** Tokens live 3 s, so they expire many times during a run. */
  static async start(opts: { tokenTtlSeconds?: number } = {}): Promise<ChaosRig> {
    const sandbox = await startSandbox({ port: 0, tokenTtlSeconds: opts.tokenTtlSeconds ?? 3 });
    return new ChaosRig(
      sandbox,
      await mkdtemp(join(tmpdir(), 'htorder-chaos-state-')),
      await mkdtemp(join(tmpdir(), 'htorder-chaos-work-')),
    );
  }

  get secret(): string {
    return this.sandbox.accounts.find((a) => a.name === 'us-demo')!.clientSecret;
  }

  env(extra: Record<string, string> = {}): Record<string, string> {
    const a = this.sandbox.accounts.find((x) => x.name === 'us-demo')!;
    const r = this.sandbox.regions[a.region]!;
    return {
      HTORDER_BASE_URL: r.baseUrl,
      HTORDER_AUTH_URL: r.authUrl,
      HTORDER_REALM: r.realm,
      HTORDER_CLIENT_ID: a.clientId,
      HTORDER_CLIENT_SECRET: a.clientSecret,
      HTORDER_STATE_DIR: this.stateDir,
      HTORDER_LOCK_STALE_MS: '2000',
      HTORDER_CONCURRENCY: '8',
      // The same content under many order numbers is the workload here, not a suspected duplicate.
      HTORDER_DUPLICATE_WINDOW: '0',
      // The manifests link artwork to a fictional CDN: the artwork tests fetch real links.
      HTORDER_ARTWORK_CHECK: 'off',
      // Debug logs give the secret scan something to scan.
      HTORDER_LOG_LEVEL: 'debug',
      ...extra,
    };
  }

  /** A real bearer token for the same credentials, to prove it never appears in output. */
  async token(): Promise<string> {
    const r = this.sandbox.regions.us!;
    const res = await fetch(`${r.authUrl}/realms/${r.realm}/protocol/openid-connect/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'us-demo', client_secret: this.secret }),
    });
    return ((await res.json()) as { access_token: string }).access_token;
  }

  async close(): Promise<void> {
    await this.sandbox.close();
  }
}

/**
 * `n` jobs `PREFIX-1..n`, cycling through asset reorders, new prints and stock (with sizes),
 * quantities varying per job so a swapped or altered item is caught.
 */
export function chaosManifest(prefix: string, n: number): ChaosManifest {
  const expected = new Map<string, ExpectedItem[]>();
  const jobs: string[] = [];
  for (let i = 1; i <= n; i++) {
    const orderNumber = `${prefix}-${i}`;
    const items: ExpectedItem[] = [];
    const lines: string[] = [];
    const q = 50 + (i % 50);
    lines.push(`      - { itemType: Asset, code: A10001, quantity: ${q} }`);
    items.push({ itemType: 'Asset', code: 'A10001', quantity: q });
    if (i % 3 === 0) {
      const p = 10 + (i % 90);
      lines.push(
        `      - { itemType: PriceCode, code: 'DTF Full Color 10" x 10"', quantity: ${p}, customerReference: f${i}, externalArtworkUrl: 'https://cdn.example.com/a/${i}.png', attributes: { Colors: "${1 + (i % 4)}" } }`,
      );
      items.push({ itemType: 'PriceCode', code: 'DTF Full Color 10" x 10"', quantity: p });
    }
    if (i % 5 === 0) {
      const sizes = { S: 1 + (i % 7), M: 2 + (i % 11) };
      lines.push(
        `      - { itemType: Stock, code: GD5000, variantCode: GD5000-BLK, sizeQuantities: { S: ${sizes.S}, M: ${sizes.M} } }`,
      );
      items.push({ itemType: 'Stock', code: 'GD5000', sizeQuantities: sizes });
    }
    expected.set(orderNumber, items);
    jobs.push(`  - orderNumber: ${orderNumber}\n${CODED_ADDRESS}    items:\n${lines.join('\n')}\n`);
  }
  return { text: `version: 1\njobs:\n${jobs.join('')}`, expected };
}

/**
 * The built CLI as a separate process (crash recovery needs a process to kill). With
 * `logFile`, its stdout and stderr are also kept there as they come, so a run that hangs or
 * dies can be read afterwards.
 */
export function spawnHtorder(
  args: string[],
  opts: { env: Record<string, string>; cwd: string; logFile?: string },
): Proc {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const chunks: Buffer[] = [];
  const log = opts.logFile === undefined ? undefined : createWriteStream(opts.logFile, { flags: 'a' });
  const keep = (d: Buffer): void => {
    chunks.push(d);
    log?.write(d);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) =>
    child.on('close', (code, signal) => {
      log?.end(`\n[htorder exited: code ${code}, signal ${signal}]\n`);
      resolve(code);
    }),
  );
  return { child, exited, output: () => Buffer.concat(chunks).toString('utf8') };
}

export interface KillLoopResult {
  kills: number;
  runs: number;
  exitCodes: (number | null)[];
  output: string;
}

/**
 * Starts the process, kills it with SIGKILL at a random moment, restarts it, until `kills`
 * kills have happened; then lets it run to exit 0 (restarting on any other exit, e.g. 3 when
 * the faults made the API look unavailable). Half the kills land at a random time after
 * start (start-up, check, dry run), half once the sandbox saw a few more creates, so they hit
 * POSTs in flight and the run still makes progress.
 */
export async function runWithKills(
  start: () => Proc,
  opts: {
    kills: number;
    rnd: () => number;
    progress: () => Promise<number>;
    maxRuns?: number;
    isDone?: (p: Proc, code: number | null) => Promise<boolean>;
  },
): Promise<KillLoopResult> {
  const result: KillLoopResult = { kills: 0, runs: 0, exitCodes: [], output: '' };
  const maxRuns = opts.maxRuns ?? opts.kills * 3 + 20;
  while (result.runs < maxRuns) {
    result.runs++;
    const p = start();
    let code: number | null;
    if (result.kills < opts.kills) {
      const before = await opts.progress();
      const early = opts.rnd() < 0.5;
      const delay = early ? 100 + Math.floor(opts.rnd() * 1500) : Math.floor(opts.rnd() * 300);
      const wantCreates = early ? 0 : 1 + Math.floor(opts.rnd() * 15);
      let exitedEarly = false;
      void p.exited.then(() => (exitedEarly = true));
      const t0 = Date.now();
      // Wait for progress (bounded), then the random delay, then kill.
      while (
        !exitedEarly &&
        wantCreates > 0 &&
        (await opts.progress()) < before + wantCreates &&
        Date.now() - t0 < 60_000
      ) {
        await sleep(10);
      }
      await Promise.race([sleep(delay), p.exited]);
      if (!exitedEarly) {
        p.child.kill('SIGKILL');
        result.kills++;
      }
      code = await p.exited;
    } else {
      code = await p.exited;
    }
    result.exitCodes.push(code);
    result.output += p.output();
    if (code === 0 && (opts.isDone ? await opts.isDone(p, code) : true)) return result;
  }
  throw new Error(
    `did not finish after ${result.runs} runs (exit codes ${result.exitCodes.join(',')}): ${result.output.slice(-3000)}`,
  );
}

/** Every expected order exists exactly once in the sandbox, with exactly the expected items. */
export async function verifyAgainstSandbox(sandbox: Sandbox, expected: Map<string, ExpectedItem[]>): Promise<Verdict> {
  const jobs = await sandbox.admin.jobs();
  const byOrder = new Map<string, typeof jobs>();
  for (const j of jobs) {
    const k = j.orderNumber ?? '?';
    byOrder.set(k, [...(byOrder.get(k) ?? []), j]);
  }
  const verdict: Verdict = { created: jobs.length, duplicates: [], missing: [], unexpected: [], wrongItems: [] };
  for (const [order, list] of byOrder) {
    if (!expected.has(order)) verdict.unexpected.push(order);
    if (list.length > 1) verdict.duplicates.push(`${order} ×${list.length}`);
  }
  for (const [order, items] of expected) {
    const got = byOrder.get(order);
    if (!got) {
      verdict.missing.push(order);
      continue;
    }
    const sent = ((got[0]!.request as { items?: Record<string, unknown>[] }).items ?? []).map((it) => {
      const e: ExpectedItem = { itemType: String(it.itemType), code: String(it.code) };
      if (it.sizeQuantities) e.sizeQuantities = it.sizeQuantities as Record<string, number>;
      else e.quantity = it.quantity as number;
      return e;
    });
    if (JSON.stringify(sent) !== JSON.stringify(items))
      verdict.wrongItems.push(`${order}: sent ${JSON.stringify(sent)} expected ${JSON.stringify(items)}`);
  }
  return verdict;
}

/** Every ledger entry is submitted, and its jobNumber exists in the sandbox with that orderNumber. */
export async function verifyLedger(entries: LedgerEntry[], sandbox: Sandbox): Promise<string[]> {
  const jobs = new Map((await sandbox.admin.jobs()).map((j) => [j.jobNumber, j.orderNumber]));
  const problems: string[] = [];
  for (const e of entries) {
    if (e.state !== 'submitted') {
      const what = [`attempts ${e.attempts}`, `intent at ${e.intentAt}`, e.outcomeAt && `outcome at ${e.outcomeAt}`];
      const sandboxHas = [...jobs.values()].filter((o) => o === e.orderNumber).length;
      problems.push(
        `${e.orderNumber}: ledger state ${e.state} (${what.filter(Boolean).join(', ')}; the sandbox has ${sandboxHas} job(s) of it)`,
      );
    } else if (e.jobNumber === undefined || jobs.get(e.jobNumber) !== e.orderNumber) {
      problems.push(
        `${e.orderNumber}: ledger says job ${e.jobNumber}, sandbox has ${e.jobNumber === undefined ? 'none' : jobs.get(e.jobNumber)}`,
      );
    }
  }
  return problems;
}

/**
 * What every process logged of the orders a problem names (`ORDER: …`), so that a scenario that
 * fails in CI, where its log files are gone with the run's temporary folder, says which process
 * did what to them: the last `perProcess` lines of each process that mentions the order.
 */
export function orderTrails(problems: string[], logs: { label: string; output: string }[], perProcess = 8): string[] {
  const orders = new Set(problems.map((p) => /^([\w.-]+): ledger /.exec(p)?.[1]).filter((o) => o !== undefined));
  return [...orders].map((order) => {
    // In a JSON log line an order number ends at a quote: as a field, or inside a message (\").
    const ends = [`${order}"`, `${order}\\"`];
    const lines = logs.flatMap(({ label, output }) =>
      output
        .split('\n')
        .filter((l) => ends.some((e) => l.includes(e)))
        .slice(-perProcess)
        .map((l) => `  ${label}: ${l.slice(0, 400)}`),
    );
    return `what the processes logged of ${order}:\n${lines.join('\n') || '  (nothing)'}`;
  });
}

export async function folderLedgerEntries(stateDir: string): Promise<LedgerEntry[]> {
  const out: LedgerEntry[] = [];
  for await (const e of new FolderLedger(stateDir).entries()) out.push(e);
  return out;
}

let validator: (((data: unknown) => boolean) & { errors?: unknown }) | undefined;

/** Validates a result.json against schemas/report.schema.json (JSON Schema 2020-12). */
export async function reportSchemaErrors(report: unknown): Promise<string | null> {
  if (!validator) {
    const schema = JSON.parse(await readFile(join(ROOT, 'schemas', 'report.schema.json'), 'utf8'));
    const Ajv = Ajv2020 as unknown as typeof Ajv2020.default;
    const ajv = new Ajv({ allErrors: true, strict: false });
    (addFormats as unknown as typeof addFormats.default)(ajv);
    validator = ajv.compile(schema);
  }
  return validator(report) ? null : JSON.stringify(validator.errors).slice(0, 2000);
}

export interface ReportCheck {
  problems: string[];
  jobs: number;
}

/**
 * A finished run's report: valid against the schema, finished, every job submitted or
 * already-submitted with the job number the sandbox gave that order.
 */
export async function checkReport(
  report: Record<string, unknown>,
  sandbox: Sandbox,
  expected: Map<string, ExpectedItem[]>,
): Promise<ReportCheck> {
  const problems: string[] = [];
  const schemaErrors = await reportSchemaErrors(report);
  if (schemaErrors) problems.push(`schema: ${schemaErrors}`);
  if (!report.finishedAt) problems.push('report not finished');
  const jobNumbers = new Map((await sandbox.admin.jobs()).map((j) => [j.orderNumber, j.jobNumber]));
  const jobs = report.jobs as { orderNumber: string; status: string; jobNumber: number | null }[];
  const seen = new Set<string>();
  for (const j of jobs) {
    seen.add(j.orderNumber);
    if (j.status !== 'submitted' && j.status !== 'already-submitted')
      problems.push(`${j.orderNumber}: status ${j.status}`);
    if (j.jobNumber !== jobNumbers.get(j.orderNumber))
      problems.push(`${j.orderNumber}: report job ${j.jobNumber}, sandbox ${jobNumbers.get(j.orderNumber)}`);
  }
  for (const order of expected.keys()) if (!seen.has(order)) problems.push(`${order}: absent from the report`);
  return { problems: problems.slice(0, 20), jobs: jobs.length };
}

/** Faults that fired, by kind (`GET /_sandbox/faults` reports each rule's `fired`). */
export async function faultsFired(sandbox: Sandbox): Promise<Record<string, number>> {
  const res = await fetch(`${sandbox.url}/_sandbox/faults`);
  const body = (await res.json()) as { rules?: (FaultRule & { fired: number })[] } | (FaultRule & { fired: number })[];
  const rules = Array.isArray(body) ? body : (body.rules ?? []);
  const out: Record<string, number> = {};
  for (const r of rules) {
    const name = r.kind === 'status' ? `status ${r.status}` : r.kind;
    out[name] = (out[name] ?? 0) + r.fired;
  }
  return out;
}

/** Secrets that must never appear: the client secret, a live token, any bearer header. */
export function leaks(text: string, secrets: string[]): string[] {
  const found: string[] = [];
  for (const s of secrets) if (s && text.includes(s)) found.push(`secret ${s.slice(0, 4)}… found`);
  const bearer = /Bearer\s+[A-Za-z0-9._~+/-]{8,}/.exec(text);
  if (bearer) found.push(`bearer token found: ${bearer[0].slice(0, 14)}…`);
  // Every token the sandbox issues has this shape (src/sandbox/auth.ts), so any token a
  // process held is caught, not only the one fetched for the comparison.
  const token = /sbx\.[a-z]{2}\.[A-Za-z0-9_-]{20,}/.exec(text);
  if (token) found.push(`sandbox token found: ${token[0].slice(0, 10)}…`);
  return found;
}

export interface ChaosRow {
  scenario: string;
  jobs: number;
  faults: Record<string, number>;
  kills: number;
  runs: number;
  created: number;
  duplicates: number;
  missing: number;
  wallSeconds: number;
}

/** The table the issue asks for, printed to the test output (and copied into the docs). */
export function formatChaosTable(rows: ChaosRow[]): string {
  const kinds = [...new Set(rows.flatMap((r) => Object.keys(r.faults)))].sort();
  const head = [
    'scenario',
    'jobs',
    ...kinds.map((k) => `faults: ${k}`),
    'kills',
    'runs',
    'created',
    'duplicates',
    'missing',
    'wall s',
  ];
  const lines = rows.map((r) =>
    [
      r.scenario,
      r.jobs,
      ...kinds.map((k) => r.faults[k] ?? 0),
      r.kills,
      r.runs,
      r.created,
      r.duplicates,
      r.missing,
      r.wallSeconds.toFixed(1),
    ].map(String),
  );
  const md = [head, head.map(() => '---'), ...lines].map((cells) => `| ${cells.join(' | ')} |`);
  return md.join('\n');
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
