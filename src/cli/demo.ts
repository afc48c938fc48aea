import { cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import type { ConfigFlags } from '../core/config/resolve-config.js';
import { sandboxEnv } from '../core/config/sandbox-config.js';
import { startSandbox } from '../sandbox/index.js';
import { classifyName } from '../watch/sources/drop-names.js';
import { ExitCode } from '../core/errors.js';
import { runPipelineCommand } from './run-pipeline.js';

/** The package's own samples/ (one level above both src/ and dist/). */
export const SAMPLES_DIR = fileURLToPath(new URL('../../samples/', import.meta.url));

export interface DemoOptions {
  /** Where the samples are copied and the reports written; default a new temp folder. */
  out?: string;
  /** The samples to copy; default the package's samples/ (SAMPLES_DIR). */
  samples?: string;
  stdout: NodeJS.WritableStream;
}

interface SampleInput {
  /** Path inside the demo folder. */
  file: string;
  /** ERP mapping for a CSV input: a `mapping.yaml` in the same folder. */
  mapping?: string;
}

/**
 * `npm run demo`: every sample through `plan`, `run` and `run` again against one embedded
 * sandbox, plus a deliberately broken copy of a sample to show an errors report. Returns 0
 * when everything behaved as a sample should (valid samples submitted once, the broken one
 * refused).
 */
export async function runDemo(opts: DemoOptions): Promise<number> {
  const say = (line = ''): void => {
    opts.stdout.write(`${line}\n`);
  };
  const dir = opts.out ?? (await mkdtemp(join(tmpdir(), 'htorder-demo-')));
  // Not the reports an earlier `htorder check samples/…` left beside a sample (nor hidden or
  // temporary files): a result.csv copied along would be run as one more CSV input and fail.
  await cp(opts.samples ?? SAMPLES_DIR, dir, { recursive: true, filter: (src) => !isLeftOver(basename(src)) });
  const samples = await findSamples(dir);
  const broken = await writeBrokenSample(dir);

  const sandbox = await startSandbox({ port: 0, fetchArtwork: true });
  const stateDir = await mkdtemp(join(tmpdir(), 'htorder-demo-state-'));
  // Only the sandbox's account: nothing of the user's own configuration reaches the demo, not
  // even their config file (its guardrails would hold the samples), so the config folder is one
  // that has none. The samples link to a fictional CDN, so fetching their artwork can only warn.
  const env: DemoEnv = {
    env: { ...sandboxEnv(sandbox, 'us-demo'), XDG_CONFIG_HOME: join(stateDir, 'no-config') },
    flags: { stateDir, logLevel: 'silent', artworkCheck: 'warn' },
  };
  let ok = true;
  try {
    say('htorder demo');
    say(`  sandbox:  ${sandbox.url} (in-process API simulator; account us-demo, region us)`);
    say(`  samples:  ${samples.length} manifests copied to ${dir}`);
    say();

    say('1. plan: check, resolve, preflight and dry-run every sample; creates nothing');
    for (const s of samples) ok = (await step('plan', s, dir, env, say)) === ExitCode.Ok && ok;
    say();
    say('2. run: submit every job exactly once');
    for (const s of samples) ok = (await step('run', s, dir, env, say)) === ExitCode.Ok && ok;
    say();
    say('3. run again: the ledger answers; nothing is sent twice');
    const before = (await sandbox.admin.jobs()).length;
    for (const s of samples) ok = (await step('run', s, dir, env, say)) === ExitCode.Ok && ok;
    const after = (await sandbox.admin.jobs()).length;
    say(`   jobs in the sandbox: ${before} before the re-run, ${after} after`);
    ok = ok && before === after;
    say();
    say('4. a broken manifest: refused before anything is sent, with file:line:col in errors.txt');
    const refused = await step('run', { file: broken }, dir, env, say);
    ok = ok && refused === ExitCode.Invalid;
    const errors = await readFile(`${broken}.errors.txt`, 'utf8').catch(() => '');
    for (const line of errors.trim().split('\n')) say(`   ${line}`);
    say();
    say('Where the reports are: next to each input, in');
    say(`  ${dir}`);
    say('  X.result.json  every job and item with status, job number, newAssetSku, costs');
    say('  X.result.csv   one row per item (CSV inputs: your own columns first)');
    say('  X.errors.txt   only when something failed: file:line:col: field: message');
    say();
    say('Next: `htorder sandbox` to keep a sandbox running, `htorder run --sandbox FILE` to try your own file.');
  } finally {
    await sandbox.close();
    // The ledger of a sandbox that is gone: nothing to keep (the reports are in `dir`).
    await rm(stateDir, { recursive: true, force: true });
  }
  return ok ? ExitCode.Ok : ExitCode.Invalid;
}

/** The demo account's environment, and the settings the demo gives as flags. */
interface DemoEnv {
  env: Record<string, string>;
  flags: ConfigFlags;
}

async function step(
  command: 'plan' | 'run',
  s: SampleInput,
  dir: string,
  env: DemoEnv,
  say: (line: string) => void,
): Promise<number> {
  let json = '';
  const stdout = new Writable({
    write: (chunk, _e, cb) => {
      json += String(chunk);
      cb();
    },
  });
  const quiet = new Writable({ write: (_c, _e, cb) => cb() });
  const code = await runPipelineCommand(
    { command, files: [s.file], mapping: s.mapping, json: true, flags: env.flags },
    { stdout, stderr: quiet, env: env.env, cwd: dir },
  );
  say(`   ${describe(relative(dir, s.file), JSON.parse(json) as Summary)}`);
  return code;
}

interface Summary {
  exitCode: number;
  inputs: { jobs?: { orderNumber: string | null; status: string; jobNumber: number | null }[] }[];
}

function describe(name: string, summary: Summary): string {
  const jobs = summary.inputs[0]?.jobs ?? [];
  const parts = jobs.map((j) => `${j.orderNumber} ${j.status}${j.jobNumber ? ` #${j.jobNumber}` : ''}`);
  return `${name.padEnd(40)} exit ${summary.exitCode}  ${parts.join(', ')}`;
}

/** A report, a hidden or a temporary file: never a sample (the rules of a watched folder, drop-names.ts). */
function isLeftOver(name: string): boolean {
  const verdict = classifyName(name);
  return (
    !verdict.take && (verdict.reason === 'report' || verdict.reason === 'hidden' || verdict.reason === 'temporary')
  );
}

/** Manifests among the samples: YAML/JSON that name the manifest schema, and delimited text (CSV, TSV, TXT). */
async function findSamples(dir: string): Promise<SampleInput[]> {
  const out: SampleInput[] = [];
  for (const entry of (await readdir(dir, { recursive: true })).sort()) {
    const file = join(dir, entry);
    if (/\.(csv|tsv|txt)$/i.test(entry)) {
      const mapping = join(dirname(file), 'mapping.yaml');
      const hasMapping = (await readdir(dirname(file))).includes('mapping.yaml');
      out.push(hasMapping ? { file, mapping } : { file });
    } else if (/\.(ya?ml|json)$/i.test(entry) && basename(entry) !== 'mapping.yaml') {
      const text = await readFile(file, 'utf8');
      if (text.includes('manifest.schema.json')) out.push({ file });
    }
  }
  return out;
}

/**
 * A copy of the new-print sample as two jobs, each with a mistake users make: a mis-typed key
 * (caught offline, with a suggestion) and too few units for the price code (caught in
 * preflight, from the account's catalogue).
 */
async function writeBrokenSample(dir: string): Promise<string> {
  const source = await readFile(join(dir, 'new-print', 'dtf-new-print.yaml'), 'utf8');
  const at = source.indexOf('  - orderNumber:');
  const job = source.slice(at);
  const typo = job.replace(/orderNumber: (\S+)/, 'orderNumber: $1-A').replace('postalCode:', 'postcode:');
  const tooFew = job.replace(/orderNumber: (\S+)/, 'orderNumber: $1-B').replace(/quantity: \d+/, 'quantity: 5');
  const file = join(dir, 'broken-order.yaml');
  await writeFile(file, `${source.slice(0, at)}${typo}${tooFew}`);
  return file;
}
