import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import type { ResultReport } from '../../src/report/model.js';
import { type NightFile, NightOrders } from './nights-orders.js';

/**
 * Many nights of htorder as a shop runs it, against the sandbox with its clock moved a day each
 * night and htorder's calendar with it. Each night: the shop's export, grown by tonight's
 * orders; the nightly reorder under a new number; a file over maxJobCost; a broken file; the
 * night's processing cut by a kill -9 and resumed; an hour later the reorder sent again by
 * mistake. Each morning: last night's held file approved, the rejects cleared away, `track`
 * writing the tracking file of what was despatched. A recipe (nights-recipes.ts) says how the
 * files reach htorder (cron's `run` over a glob, a watched folder, a container); this file says
 * what happens when and what must hold after every night:
 *
 * - 0 duplicates and 0 lost, counted on the sandbox's admin API: every order that should exist
 *   exists once, nothing else does;
 * - 0 wrong holds: only the over-limit file and the re-sends wait for approval;
 * - every accidental re-send held as a suspected duplicate;
 * - no report ever read as an input;
 * - every approval taken up by the next run;
 * - the despatched orders in the shop's tracking file.
 *
 * Per night it prints the state directory's files and bytes and the watchers' RSS.
 */

/** What the sandbox created, from its admin API (`GET /_sandbox/jobs`). */
export interface CreatedJob {
  orderNumber: string;
  jobNumber: number;
}

/** How the night's files reach htorder, and how to look at what it did. */
export interface Recipe {
  readonly name: string;
  /** The folder htorder's state (ledger, sandbox state) is kept in. */
  readonly stateDir: string;
  /** The folder the files arrive in and the reports appear in. */
  readonly workspace: string;
  /** Moves the sandbox's clock and htorder's calendar on by `hours`. */
  advance(hours: number): Promise<void>;
  created(): Promise<CreatedJob[]>;
  /** A file arrives (the shop's export job, the ERP, a person). */
  deliver(file: NightFile): Promise<void>;
  /**
   * htorder works on what has arrived until every delivered file is done with; with `kill`, the
   * process doing it is killed (SIGKILL) part way and started again. Says what happened.
   */
  process(opts: { kill: boolean }): Promise<{ note: string; exitCode?: number; output?: string }>;
  approve(name: string): Promise<void>;
  /** The operator removes a file nobody will approve or fix (a re-send, a broken file), if the recipe keeps them in the way. */
  discard(name: string): Promise<void>;
  /** `htorder track` over the reports; the tracking files it wrote (or kept). */
  track(): Promise<string[]>;
  /** The report of the input delivered as `name` with these bytes (sha256), or undefined when there is none. */
  report(name: string, sha: string): Promise<ResultReport | undefined>;
  /** Names of the inputs that wait for approval now. */
  waiting(): Promise<string[]>;
  /** Every file name under the workspace (relative), for the checks on report names. */
  files(): Promise<string[]>;
  /** Resident set size (bytes) of each long-running htorder process, by role. */
  rss(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

export interface NightFigures {
  night: number;
  recipe: string;
  ordersCreated: number;
  stateFiles: number;
  stateBytes: number;
  /** Of which the sandbox's own state (sandbox/): the simulator, not htorder. */
  sandboxBytes: number;
  workspaceFiles: number;
  workspaceBytes: number;
  rss: Record<string, number>;
  seconds: number;
  note: string;
}

export interface NightsResult {
  figures: NightFigures[];
}

/** The night's clock: 02:00 the files, 03:00 the re-send, 09:00 the morning, 02:00 the next night. */
const HOURS = { toResend: 1, toMorning: 6, toNight: 17 } as const;

/** The shop's limit: every order of the simulation stays under it except the season kit (730 USD). */
export const NIGHTS_MAX_JOB_COST = 500;

interface Night {
  n: number;
  recipe: Recipe;
  orders: NightOrders;
  /** sha256 of each name as last delivered. */
  delivered: Map<string, string>;
  notes: string[];
}

export async function playNights(
  recipe: Recipe,
  opts: { nights: number; seed: number; log: (line: string) => void },
): Promise<NightsResult> {
  const orders = new NightOrders(opts.seed);
  const delivered = new Map<string, string>();
  const figures: NightFigures[] = [];
  for (let n = 1; n <= opts.nights + 1; n++) {
    const started = Date.now();
    const night: Night = { n, recipe, orders, delivered, notes: [] };
    const last = n > opts.nights;
    if (n > 1) {
      await recipe.advance(HOURS.toMorning);
      await morningApproval(night);
      await operatorClearsRejects(night);
      await trackToDespatch(night);
      await recipe.advance(HOURS.toNight);
    }
    if (!last) {
      await shopExport(night);
      await recurringReorder(night);
      await overLimitFile(night);
      await brokenFile(night);
      night.notes.push((await recipe.process({ kill: true })).note);
      await recipe.advance(HOURS.toResend);
      await accidentalResend(night);
    }
    // After the last night, one more run with nothing new: the last morning's approval is taken up.
    await completeRun(night, last);
    const f = await nightFigures(night, n, Date.now() - started);
    await checkNight(night, last ? opts.nights : n, last);
    figures.push(f);
    opts.log(formatFigures(f));
  }
  return { figures };
}

// ---------------------------------------------------------------------------------------------
// The night's events, one function each.

async function deliver(night: Night, file: NightFile): Promise<void> {
  night.delivered.set(file.name, sha256(file.text));
  await night.recipe.deliver(file);
}

/** The shop's export job writes every order so far, tonight's new ones included. */
async function shopExport(night: Night): Promise<void> {
  await deliver(night, night.orders.shopExport(night.n));
}

/** The ERP's nightly replenishment: the same address and items under tonight's number. */
async function recurringReorder(night: Night): Promise<void> {
  await deliver(night, night.orders.reorder(night.n));
}

/** A season's kit, over maxJobCost: it waits for someone to approve it in the morning. */
async function overLimitFile(night: Night): Promise<void> {
  await deliver(night, night.orders.overLimit(night.n));
}

/** A file typed by hand with a mistake in it. */
async function brokenFile(night: Night): Promise<void> {
  await deliver(night, night.orders.broken(night.n));
}

/** An hour after the reorder, the ERP sends it again under its next number. */
async function accidentalResend(night: Night): Promise<void> {
  await deliver(night, night.orders.resend(night.n));
}

/**
 * The night's last run, uninterrupted. A run's exit code says what someone must do: 1 while a
 * broken file is there, 0 once the morning has cleared it and approved what waited.
 */
async function completeRun(night: Night, last: boolean): Promise<void> {
  const run = await night.recipe.process({ kill: false });
  night.notes.push(run.note);
  const expected = last ? 0 : 1;
  if (run.exitCode !== undefined && run.exitCode !== expected)
    fail(night, `the night's run exited ${run.exitCode}, not ${expected}:\n${run.output ?? ''}`);
}

/** Someone looks at last night's held season kit and approves it. */
async function morningApproval(night: Night): Promise<void> {
  await night.recipe.approve(night.orders.overLimit(night.n - 1).name);
}

/** The re-send will never be approved and the broken file never run again as it is. */
async function operatorClearsRejects(night: Night): Promise<void> {
  await night.recipe.discard(night.orders.resend(night.n - 1).name);
  await night.recipe.discard(night.orders.broken(night.n - 1).name);
}

/** `htorder track` follows what was sent to despatch and writes the shop's tracking file. */
async function trackToDespatch(night: Night): Promise<void> {
  const files = await night.recipe.track();
  night.notes.push(`track wrote ${files.length} tracking file(s)`);
  // Orders are despatched 48 h after they were created: by this morning, those of night n-3.
  const due = night.orders
    .shopOrdersUpTo(night.n - 3)
    .filter((o) => !o.cancelled)
    .map((o) => o.name);
  const inFiles = new Set<string>();
  for (const f of files) for (const name of await trackingOrderNames(f)) inFiles.add(name);
  const missing = due.filter((o) => !inFiles.has(o));
  if (missing.length > 0)
    fail(night, `track: despatched orders missing from the tracking files (${files.join(', ')}): ${missing.join(' ')}`);
}

// ---------------------------------------------------------------------------------------------
// What must hold after each night.

async function checkNight(night: Night, n: number, last: boolean): Promise<void> {
  const { recipe, orders } = night;
  const created = await recipe.created();
  // 0 duplicates, 0 lost: every order that should exist exists once, and nothing else.
  const counts = new Map<string, number>();
  for (const j of created) counts.set(j.orderNumber, (counts.get(j.orderNumber) ?? 0) + 1);
  const dupes = [...counts].filter(([, c]) => c > 1).map(([o, c]) => `${o} ×${c}`);
  if (dupes.length > 0) fail(night, `duplicates on the sandbox: ${dupes.join(', ')}`);
  const expected = expectedOrders(orders, n, last);
  const lost = expected.filter((o) => !counts.has(o));
  if (lost.length > 0) fail(night, `lost (never created): ${lost.join(' ')}`);
  const allowed = new Set([...expected, 'HIST-1', 'HIST-2', 'HIST-3']);
  const unexpected = [...counts.keys()].filter((o) => !allowed.has(o));
  if (unexpected.length > 0)
    fail(night, `created but never meant to be (re-sends, broken, held): ${unexpected.join(' ')}`);
  if (!last) await checkTonightsReports(night, n);
  // 0 wrong holds: what waits is tonight's season kit (until the morning) and re-sends.
  const waiting = await recipe.waiting();
  const mayWait = new Set([...(last ? [] : [orders.overLimit(n).name]), ...resendNames(orders, n)]);
  const wrong = waiting.filter((w) => !mayWait.has(w));
  if (wrong.length > 0) fail(night, `held that should not be: ${wrong.join(', ')}`);
  if (!last && !waiting.includes(orders.overLimit(n).name))
    fail(night, `${orders.overLimit(n).name} is over maxJobCost but does not wait for approval`);
  // No report ever read as an input: no report of a report anywhere.
  const readAsInput = (await recipe.files()).filter((f) => REPORT_OF_REPORT.test(f));
  if (readAsInput.length > 0) fail(night, `reports read as inputs: ${readAsInput.join(', ')}`);
}

/** A report's own report: `X.result.csv.result.json`, `X.tracking.csv.errors.txt` … */
const REPORT_OF_REPORT =
  /\.(?:result\.json|result\.csv|errors\.txt|tracking\.csv)\.(?:result\.json|result\.csv|errors\.txt)$/;

function resendNames(orders: NightOrders, n: number): string[] {
  return Array.from({ length: n }, (_, i) => orders.resend(i + 1).name);
}

/** The order numbers that must exist after night n (after the last morning when `last`). */
function expectedOrders(orders: NightOrders, n: number, last: boolean): string[] {
  const shop = orders
    .shopOrdersUpTo(n)
    .filter((o) => !o.cancelled)
    .map((o) => o.name);
  const reorders = Array.from({ length: n }, (_, i) => orders.reorder(i + 1).orders[0] as string);
  // A season kit is approved the morning after its night, and sent by the next run.
  const approved = Array.from({ length: last ? n : n - 1 }, (_, i) => orders.overLimit(i + 1).orders[0] as string);
  return [...shop, ...reorders, ...approved];
}

async function checkTonightsReports(night: Night, n: number): Promise<void> {
  const { recipe, orders } = night;
  const reportOf = async (name: string): Promise<ResultReport> => {
    const report = await recipe.report(name, night.delivered.get(name) ?? '');
    if (!report) fail(night, `${name}: no report of tonight's bytes`);
    return report;
  };
  const statuses = async (name: string): Promise<string[]> => (await reportOf(name)).jobs.map((j) => j.status);
  const codes = async (name: string): Promise<string[]> =>
    (await reportOf(name)).jobs.flatMap((j) => j.errors.map((e) => e.code));
  const expectOnly = (name: string, got: string[], allowed: string[]): void => {
    const bad = got.filter((s) => !allowed.includes(s));
    if (bad.length > 0 || got.length === 0)
      fail(night, `${name}: job statuses ${got.join(', ')}; expected only ${allowed.join('/')}`);
  };
  expectOnly('orders_export.csv', await statuses('orders_export.csv'), ['submitted', 'already-submitted', 'skipped']);
  expectOnly('reorder.csv', await statuses('reorder.csv'), ['submitted', 'already-submitted']);
  expectOnly(orders.overLimit(n).name, await statuses(orders.overLimit(n).name), ['awaiting-approval']);
  if (!(await codes(orders.overLimit(n).name)).includes('approval.job-cost'))
    fail(night, `${orders.overLimit(n).name}: waits, but not for maxJobCost`);
  expectOnly(orders.broken(n).name, await statuses(orders.broken(n).name), ['invalid']);
  // Every accidental re-send held, as a suspected duplicate.
  const resend = orders.resend(n).name;
  expectOnly(resend, await statuses(resend), ['awaiting-approval']);
  if (!(await codes(resend)).includes('approval.duplicate'))
    fail(night, `${resend}: held, but not as a suspected duplicate`);
}

class NightFailed extends Error {}

function fail(night: Night, message: string): never {
  throw new NightFailed(`night ${night.n} [${night.recipe.name}]: ${message}\n  (${night.notes.join('; ')})`);
}

// ---------------------------------------------------------------------------------------------
// Figures.

async function nightFigures(night: Night, n: number, ms: number): Promise<NightFigures> {
  const state = await treeSize(night.recipe.stateDir);
  const sandbox = await treeSize(join(night.recipe.stateDir, 'sandbox'));
  const ws = await treeSize(night.recipe.workspace);
  return {
    night: n,
    recipe: night.recipe.name,
    ordersCreated: (await night.recipe.created()).filter((j) => !j.orderNumber.startsWith('HIST-')).length,
    stateFiles: state.files - sandbox.files,
    stateBytes: state.bytes - sandbox.bytes,
    sandboxBytes: sandbox.bytes,
    workspaceFiles: ws.files,
    workspaceBytes: ws.bytes,
    rss: await night.recipe.rss(),
    seconds: Math.round(ms / 100) / 10,
    note: night.notes.join('; '),
  };
}

/** Files and bytes under a folder (0 when it does not exist); the state dir inside a workspace is not counted twice. */
export async function treeSize(dir: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  for (const e of entries) {
    if (!e.isFile()) continue;
    const s = await stat(join(e.parentPath, e.name)).catch(() => undefined);
    if (!s) continue;
    files++;
    bytes += s.size;
  }
  return { files, bytes };
}

/**
 * What the nights add up to: the state dir per 1,000 orders and per night (its growth from the
 * first night to the last, per night), and each long-running process's RSS on the first night
 * against the last.
 */
export function formatSummary(figures: readonly NightFigures[]): string {
  const nights = figures.slice(0, -1);
  const first = nights[0];
  const lastNight = nights.at(-1);
  const end = figures.at(-1);
  if (!first || !lastNight || !end) return 'no nights';
  const per1000 = (v: number): string => (end.ordersCreated > 0 ? ((v * 1000) / end.ordersCreated).toFixed(0) : '-');
  const span = Math.max(1, nights.length - 1);
  const lines = [
    `${end.recipe}: ${nights.length} nights, ${end.ordersCreated} orders`,
    `  state dir: ${end.stateFiles} files, ${end.stateBytes} bytes; per 1,000 orders ${per1000(end.stateFiles)} files, ` +
      `${per1000(end.stateBytes)} bytes; per night +${((lastNight.stateFiles - first.stateFiles) / span).toFixed(1)} files, ` +
      `+${((lastNight.stateBytes - first.stateBytes) / span).toFixed(0)} bytes`,
    `  folder: ${end.workspaceFiles} files, ${end.workspaceBytes} bytes; sandbox state ${end.sandboxBytes} bytes`,
  ];
  for (const [who, rss] of Object.entries(lastNight.rss)) {
    const was = first.rss[who];
    if (was === undefined) continue;
    const mib = (b: number): string => `${(b / 1048576).toFixed(1)} MiB`;
    lines.push(
      `  RSS of the ${who} watcher: night 1 ${mib(was)}, night ${lastNight.night} ${mib(rss)} (${(((rss - was) / was) * 100).toFixed(1)}%)`,
    );
  }
  return lines.join('\n');
}

export function formatFigures(f: NightFigures): string {
  const kb = (b: number): string => `${(b / 1024).toFixed(1)} KiB`;
  const rss = Object.entries(f.rss)
    .map(([who, b]) => `${who} ${(b / 1048576).toFixed(1)} MiB`)
    .join(', ');
  return (
    `night ${String(f.night).padStart(3)} [${f.recipe}] ${f.ordersCreated} orders; ` +
    `state dir ${f.stateFiles} files ${kb(f.stateBytes)} (+ sandbox ${kb(f.sandboxBytes)}); ` +
    `folder ${f.workspaceFiles} files ${kb(f.workspaceBytes)}${rss ? `; RSS ${rss}` : ''}; ${f.seconds} s` +
    `\n      ${f.note}`
  );
}

// ---------------------------------------------------------------------------------------------

export function sha256(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The shop order names (`Name`, or `shop_order` in the generic layout) in a tracking file. */
async function trackingOrderNames(file: string): Promise<string[]> {
  const rows = parse(await readFile(file, 'utf8'), { columns: true, skip_empty_lines: true }) as Record<
    string,
    string
  >[];
  return rows.map((r) => r.Name ?? r.shop_order ?? '').filter(Boolean);
}
