import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxEnv } from '../../src/core/config/sandbox-config.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { CLI, ROOT, requireDist } from '../support/dist.js';
import { docFiles } from './markdown.js';
import { extractCommands, segments, type ReadmeCommand } from './readme-extract.js';

/**
 * Every command line in the code blocks of README.md and of every page of docs/ is either run
 * here — the real built CLI, in a fresh folder holding the files it names, against a sandbox —
 * or listed with the reason it cannot be. A command of the manual that is in neither list fails
 * the first test, naming the file and line it came from, so the manual cannot drift from what
 * htorder accepts.
 */

/** Where a command was shown: the page, relative to the repository. */
type ShownCommand = ReadmeCommand & { file: string };
const DOC_FILES = docFiles(ROOT);
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  bin: Record<string, string>;
};
const NODE = process.execPath;

// ---------------------------------------------------------------------------------------------
// Fixtures: the files the README's commands name, made from the samples.

const NZ_ORDER = `version: 1
jobs:
  - orderNumber: NZ-1001
    description: Reorder, Auckland
    deliveryAddress: { deliveryMethod: NZ Courier, contactName: Mere Tane, streetAddress: 1 Queen St, city: Auckland, postalCode: "1010", country: New Zealand }
    items:
      - { itemType: Asset, code: N30001, quantity: 50 }
`;

/** The console example of `htorder check orders.yaml`: one valid job, one with two mistakes. */
const INVALID_ORDER = `version: 1
defaults:
  deliveryAddress: { deliveryMethod: UPS Ground, contactName: Ana Ruiz, streetAddress: 1 Main St, city: Austin, state: TX, postalCode: "78701" }
jobs:
  - orderNumber: PO-1001
    dateDue: 2026-12-04
    deliveryAddress: { country: US }
    items:
      - { itemType: Asset, code: A10001, quantity: 50 }
  - orderNumber: PO-1002
    deliveryAddress:
      countryCodeISO2: USA
    items:
      - itemType: PriceCode
        code: 'DTF Full Color 10" x 10"'
        quantity: 100
        customerRef: front
`;

function jobJson(): string {
  const due = new Date(Date.now() + 60 * 86_400_000).toISOString().slice(0, 10);
  return JSON.stringify({
    orderNumber: 'API-1001',
    dateDue: due,
    deliveryAddress: {
      deliveryMethod: 'UPSGND',
      contactName: 'Ana Ruiz',
      streetAddress: '1 Main St',
      city: 'Austin',
      state: 'TX',
      postalCode: '78701',
      countryCodeISO2: 'US',
    },
    items: [{ itemType: 'Asset', code: 'A10001', quantity: 50 }],
  });
}

function configFile(sandbox: Sandbox): string {
  const profile = (account: string): string => {
    const a = sandbox.accounts.find((x) => x.name === account)!;
    const r = sandbox.regions[a.region];
    return `    baseUrl: ${r.baseUrl}\n    authUrl: ${r.authUrl}\n    realm: ${r.realm}\n    clientId: ${a.clientId}\n    clientSecret: ${a.clientSecret}\n`;
  };
  return `profiles:\n  us:\n${profile('us-demo')}  nz:\n${profile('nz-demo')}`;
}

interface Workspace {
  dir: string;
  sandbox: Sandbox;
  env: NodeJS.ProcessEnv;
  port: number;
}

let bin = '';
const cleanups: (() => Promise<void>)[] = [];

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Whether something takes connections at `url`'s host and port now (a failed test's diagnosis). */
async function reachable(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.setTimeout(5_000, () => socket.destroy(new Error('no answer within 5 s')));
    socket.once('connect', () => {
      socket.end();
      resolve('takes connections');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(`does not: ${err.code ?? err.message}`));
  });
}

async function workspace(files: Record<string, string> = {}): Promise<Workspace> {
  const dir = await mkdtemp(join(tmpdir(), 'htorder-readme-'));
  const sandbox = await startSandbox({ port: 0 });
  cleanups.push(async () => {
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  });
  const s = (p: string): string => join(ROOT, 'samples', p);
  await cp(join(ROOT, 'samples'), join(dir, 'samples'), { recursive: true });
  await mkdir(join(dir, 'exports'));
  await Promise.all([
    cp(s('mixed-order-group/team-order.yaml'), join(dir, 'orders.yaml')),
    cp(s('csv/orders.csv'), join(dir, 'more.csv')),
    cp(s('csv/orders.csv'), join(dir, 'orders-us.csv')),
    cp(s('erp/mapping.yaml'), join(dir, 'erp.yaml')),
    cp(s('erp/export.csv'), join(dir, 'exports/export.csv')),
    writeFile(join(dir, 'orders-nz.yaml'), NZ_ORDER),
    writeFile(join(dir, 'job.json'), jobJson()),
    writeFile(join(dir, 'htorder.config.yaml'), configFile(sandbox)),
  ]);
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('HTORDER_')));
  const env = {
    ...inherited,
    ...sandboxEnv(sandbox, 'us-demo'),
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    XDG_CONFIG_HOME: join(dir, '.config'),
    // Its own state dir: the tests here run concurrently, and `--sandbox` keeps its jobs there.
    XDG_STATE_HOME: join(dir, '.state'),
    NO_COLOR: '1',
    // The samples link artwork to a fictional CDN; docs/artwork.md's own checks are tested in test/pipeline.
    HTORDER_ARTWORK_CHECK: 'off',
  };
  return { dir, sandbox, env, port: await freePort() };
}

// ---------------------------------------------------------------------------------------------
// Running a README line: bash, with `htorder` on PATH being the built CLI.

interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function start(
  line: string,
  ws: Workspace,
  opts: { cwd?: string; pathShim?: boolean } = {},
): { child: ChildProcess; done: Promise<Result>; out: () => Result } {
  // A simple command is exec'd, so signals reach htorder itself rather than the shell.
  const simple = segments(line).length === 1 && !/^[A-Z_][A-Z0-9_]*=/.test(line);
  const script = simple ? `exec ${line}` : line;
  const env = opts.pathShim === false ? { ...ws.env, PATH: process.env.PATH } : ws.env;
  const child = spawn('bash', ['-c', script], { cwd: opts.cwd ?? ws.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const r: Result = { code: null, signal: null, stdout: '', stderr: '' };
  child.stdout!.on('data', (c: Buffer) => (r.stdout += String(c)));
  child.stderr!.on('data', (c: Buffer) => (r.stderr += String(c)));
  const done = new Promise<Result>((resolve) =>
    child.on('close', (code, signal) => {
      r.code = code;
      r.signal = signal;
      resolve(r);
    }),
  );
  return { child, done, out: () => r };
}

async function run(
  line: string,
  ws: Workspace,
  opts: { cwd?: string; pathShim?: boolean; timeoutMs?: number } = {},
): Promise<Result> {
  const p = start(line, ws, opts);
  const timer = setTimeout(() => p.child.kill('SIGKILL'), opts.timeoutMs ?? 40_000);
  try {
    return await p.done;
  } finally {
    clearTimeout(timer);
  }
}

async function waitFor(
  what: string,
  ok: () => boolean | Promise<boolean>,
  p: { out: () => Result; done: Promise<Result> },
  // A watcher's first input, on a machine busy with the rest of the suite, can take half a minute.
  ms = 60_000,
): Promise<void> {
  let exited = false;
  void p.done.then(() => (exited = true));
  const until = Date.now() + ms;
  while (!(await ok())) {
    const r = p.out();
    if (exited)
      throw new Error(`exited (${r.code ?? r.signal}) before ${what}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    if (Date.now() > until) throw new Error(`gave up waiting for ${what}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

const json = (path: string): any => JSON.parse(readFileSync(path, 'utf8'));
const statuses = (reportPath: string): string[] => json(reportPath).jobs.map((j: { status: string }) => j.status);

// ---------------------------------------------------------------------------------------------
// What each README command must do.

interface Spec {
  /** Files to write into the workspace (name → content), replacing the defaults. */
  files?: Record<string, string>;
  /** Shell lines run first (each must exit 0), e.g. a `run` before a `track`. */
  before?: string[];
  /** Run after `before`, before the command (e.g. the sandbox clock moved on to despatch). */
  afterBefore?: (ws: Workspace) => Promise<void>;
  /** Replacements applied to the README line: hosts' paths and fixed ports that a test cannot use. */
  subst?: (ws: Workspace) => Record<string, string>;
  /** Exit code expected (default 0). */
  exit?: number;
  cwd?: (ws: Workspace) => string;
  /** false: PATH without the shim (npx must find the bin itself). */
  pathShim?: boolean;
  /** Long-running: what to do once started, what shows it works; then it is stopped with SIGTERM. */
  long?: { act?: (ws: Workspace) => Promise<void>; ready: (ws: Workspace, r: Result) => boolean | Promise<boolean> };
  check?: (ws: Workspace, r: Result) => void | Promise<void>;
}

type Entry = { skip: string } | { spec: Spec };

const allSubmitted = (report: string) => (ws: Workspace) => {
  const s = statuses(join(ws.dir, report));
  expect(s.length).toBeGreaterThan(0);
  expect(new Set(s)).toEqual(new Set(['submitted']));
};
const dropped = (from: string, to: string) => async (ws: Workspace) => cp(join(ws.dir, from), join(ws.dir, to));
const doneReport = (path: string) => (ws: Workspace) => existsSync(join(ws.dir, path));

/** A YAML block of the README whose first line is `# NAME`: the example file as the reader sees it. */
function readmeYaml(name: string): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const block = readme.split('```yaml\n').find((b) => b.startsWith(`# ${name}\n`));
  if (block === undefined) throw new Error(`README.md has no yaml block starting "# ${name}"`);
  return block.slice(0, block.indexOf('```'));
}

/** The sandbox clock moved on two days: every job submitted so far is despatched. */
const despatched = async (ws: Workspace): Promise<void> => {
  await ws.sandbox.admin.advanceClock(49 * 3_600_000);
};

const SANDBOX_READY = (_ws: Workspace, r: Result): boolean =>
  r.stdout.includes('\n') && 'url' in JSON.parse(r.stdout.split('\n')[0]);
const RUN_ORDERS = 'htorder run orders.yaml';
const HELD_REORDER = 'htorder run --sandbox --max-job-cost 100 samples/reorder/asset-reorder.yaml';

const COMMANDS: Record<string, Entry> = {
  // Installing and developing: npm itself.
  'npm ci && npm run demo': {
    skip: 'npm ci installs from the registry (.ci/run does it on a clean clone); `npm run demo` = build + `htorder demo`, run end to end by test/cli/demo.test.ts',
  },
  'npm test': { skip: 'this suite is part of npm test' },
  'npm ci && npm run build': {
    skip: 'npm ci installs from the registry; npm test builds dist/ first (pretest), and every command here runs that build',
  },
  'npm install -g .': {
    skip: "changes the machine's global packages; it links package.json's bin (dist/cli/main.js), which is what every htorder command here runs",
  },
  'npm ci': { skip: 'installs from the registry; .ci/run does it on a clean clone' },
  'npm run test:chaos': { skip: 'the long chaos suite (minutes); its script is checked to exist' },
  'npm run test:fuzz': { skip: 'the long fuzz suite (minutes); its script is checked to exist' },
  'npm run test:nights': {
    skip: 'seven nights through two recipes (minutes; .ci/run runs it); its script is checked to exist',
  },
  'npm run soak': { skip: 'thirty nights (long); its script is checked to exist' },
  'CHAOS_SEED=42 npm run test:chaos': { skip: 'the long chaos suite with another seed (minutes)' },
  'FUZZ_SEED=42 FUZZ_CASES=20000 npm run test:fuzz': { skip: 'the long fuzz suite with more cases (minutes)' },
  'npm run bench': { skip: 'a benchmark of minutes; its script is checked to exist' },
  'TMPDIR=/dev/shm npm run bench -- --jobs 10000 --runs 6 --first-runs 0 --latency 5 --trace --floor': {
    skip: 'a benchmark of minutes; test/build/bench-pipeline.test.ts runs it at two small sizes with --floor',
  },
  'npm run bench:check': { skip: 'a benchmark of minutes; its script is checked to exist' },
  'npm run bench:check -- --small-rows 0 --mapped-rows 0 --recognition 0 --invalid 1': {
    skip: 'a benchmark of minutes (check of 1,000,000 faulty rows); its script is checked to exist',
  },
  'npm run bench:watch': { skip: 'a benchmark of minutes; its script is checked to exist' },
  'npm run bench:artwork': { skip: 'a benchmark of a minute; its script is checked to exist' },
  'npm run bench:xlsx': { skip: 'a benchmark of minutes; its script is checked to exist' },
  'npm run bench:recognise': { skip: 'a benchmark of minutes; its script is checked to exist' },
  'npm run bench:ui': { skip: 'a benchmark of minutes; its script is checked to exist' },
  'npm run bench:startup': { skip: 'a benchmark of a minute; its script is checked to exist' },
  'npm run bench:fleet': {
    skip: 'a benchmark of minutes with a PostgreSQL server of its own; its script is checked to exist',
  },
  'htorder ledger import': {
    skip: 'needs the ledger database of ledgerUrl: test/cli/ledger-command.test.ts runs ledger import against a real PostgreSQL server',
  },
  'npm run bench:ledger': { skip: 'a benchmark of minutes and 4 GB; its script is checked to exist' },
  'npm run bench:spool': { skip: 'a benchmark of a million-job report; its script is checked to exist' },
  'npm run bench:job-index': { skip: "a benchmark of a million-job CSV's index; its script is checked to exist" },
  'npm run bench:invalid': { skip: 'a benchmark of a 100,000-job run of invalid jobs; its script is checked to exist' },
  'npm run bench:plan': { skip: 'a benchmark of three plans of 100,000 jobs; its script is checked to exist' },
  'npm run typecheck': { skip: '.ci/run runs it; its script is checked to exist' },
  'npm run deps': { skip: '.ci/run runs it (dependency-cruiser over src/); its script is checked to exist' },
  'npm run lint': { skip: '.ci/run runs it; its script is checked to exist' },
  'npm run format:check': { skip: '.ci/run runs it; its script is checked to exist' },
  'npm run knip': { skip: 'npm run check-all runs it; its script is checked to exist' },

  // Docker: npm test needs no container engine; CI builds and runs the image with podman (.ci/image-test.sh).
  'docker build -t htorder .': {
    skip: 'needs a container engine; .ci/image-test.sh builds the Dockerfile with podman in CI',
  },
  'docker run --rm htorder --help': { skip: 'needs Docker; .ci/image-test.sh runs `htorder --version` in the image' },
  'docker run --rm htorder run --sandbox /app/samples/reorder/asset-reorder.yaml': {
    skip: 'needs Docker; the same command without docker is run here',
  },
  'docker run --rm --init --user "$(id -u):$(id -g)" -v "$PWD:/data" -e HTORDER_BASE_URL -e HTORDER_AUTH_URL -e HTORDER_REALM -e HTORDER_CLIENT_ID -e HTORDER_CLIENT_SECRET_FILE=/run/secrets/htorder -v "$PWD/secret.txt:/run/secrets/htorder:ro" htorder run orders.yaml':
    { skip: 'needs Docker and real credentials' },
  'docker run -d --name htorder-watch --init --restart unless-stopped -v /srv/orders:/data -p 127.0.0.1:9464:9464 -e HTORDER_BASE_URL -e HTORDER_AUTH_URL -e HTORDER_REALM -e HTORDER_CLIENT_ID -e HTORDER_CLIENT_SECRET_FILE=/run/secrets/htorder -v /etc/htorder/secret:/run/secrets/htorder:ro htorder watch /data/drop':
    {
      skip: "needs Docker and real credentials; .ci/image-test.sh runs the image's watch --sandbox on a mounted folder and its HEALTHCHECK",
    },
  'docker stop --time 120 htorder-watch': { skip: 'needs Docker' },
  // The compose recipe (docs/deploy.md): .ci/image-test.sh runs it with podman-compose, two nights against the sandbox.
  'docker compose -f deploy/compose.yaml up -d --build': {
    skip: 'needs a container engine; .ci/image-test.sh builds and starts this compose recipe with podman-compose',
  },
  'docker compose -f deploy/compose.yaml logs -f watch': { skip: 'needs a container engine' },
  'docker compose -f deploy/compose.yaml exec watch htorder approve /data/drop/held/big.csv': {
    skip: 'needs a container engine; .ci/image-test.sh approves a held file inside the container of the compose recipe',
  },
  'docker compose -f deploy/compose.yaml -f deploy/compose.sandbox.yaml up -d --build': {
    skip: 'needs a container engine; .ci/image-test.sh runs exactly these two files for two nights',
  },
  'docker build -t registry.example.com/htorder:0.1.0 . && docker push registry.example.com/htorder:0.1.0': {
    skip: 'needs Docker and a registry; .ci/image-test.sh builds the Dockerfile with podman',
  },

  // S3 with real buckets.
  'htorder watch s3://acme-orders/incoming/ --bucket-ledger s3://acme-orders/htorder-state/': {
    skip: 'needs a real S3 bucket and AWS credentials; the S3 source is tested against s3rver in test/watch/sources',
  },
  'htorder watch s3://orders/drop/ --bucket-ledger s3://orders/htorder-state/ --s3-endpoint http://minio:9000 --s3-force-path-style':
    {
      skip: 'needs a MinIO server at minio:9000; S3-compatible endpoints are tested against s3rver in test/watch/sources',
    },

  // The CLI itself.
  'htorder --version': { spec: { check: (_ws, r) => expect(r.stdout).toMatch(/^\d+\.\d+\.\d+\n$/) } },
  'htorder --help': { spec: { check: (_ws, r) => expect(r.stdout).toContain('Usage: htorder [options] [command]') } },
  'npx htorder --help': {
    spec: {
      cwd: () => ROOT,
      pathShim: false,
      check: (_ws, r) => expect(r.stdout).toContain('Usage: htorder [options] [command]'),
    },
  },

  // The first hour: init, check, plan, run; watch.
  'htorder init my-orders': {
    spec: {
      check: (ws) => {
        for (const f of ['orders.yaml', 'orders-template.csv', 'mapping.yaml', 'schemas/manifest.schema.json'])
          expect(existsSync(join(ws.dir, 'my-orders', f)), f).toBe(true);
      },
    },
  },
  'htorder check my-orders/orders.yaml': {
    spec: { before: ['htorder init my-orders'], check: (_ws, r) => expect(r.stderr).toContain('ok, 1 job valid') },
  },
  'htorder plan --sandbox my-orders/orders.yaml': {
    spec: {
      before: ['htorder init my-orders'],
      check: (ws) => expect(statuses(join(ws.dir, 'my-orders/orders.yaml.result.json'))).toEqual(['valid']),
    },
  },
  'htorder run --sandbox my-orders/orders.yaml': {
    spec: {
      before: ['htorder init my-orders'],
      // The README shows it twice: submitted, then already-submitted with the same job number.
      check: async (ws) => {
        const report = join(ws.dir, 'my-orders/orders.yaml.result.json');
        allSubmitted('my-orders/orders.yaml.result.json')(ws);
        const first = json(report).jobs[0].jobNumber;
        const again = await run('htorder run --sandbox my-orders/orders.yaml', ws);
        expect(again.code, again.stderr).toBe(0);
        expect(again.stderr).toMatch(/PO-0001 +2 +- +already-submitted +700001\n/);
        // As the README shows it: nothing is ordered, so nothing is "unpriced".
        expect(again.stderr).toContain('estimated total: 0.00 (nothing new to order)\n');
        expect(json(report).jobs.map((j: { status: string; jobNumber: number }) => [j.status, j.jobNumber])).toEqual([
          ['already-submitted', first],
        ]);
      },
    },
  },
  'htorder watch --sandbox ./drop': {
    spec: {
      before: ['mkdir -p drop'],
      long: {
        act: dropped('samples/csv/orders.csv', 'drop/orders.csv'),
        ready: doneReport('drop/done/orders.csv.result.json'),
      },
      check: allSubmitted('drop/done/orders.csv.result.json'),
    },
  },

  'htorder watch --sandbox --config shop-drop.yaml ./drop': {
    spec: {
      files: { 'shop-drop.yaml': readmeYaml('shop-drop.yaml') },
      before: ['mkdir -p drop'],
      long: {
        act: async (ws) => {
          await dropped('samples/shopify/orders_export.csv', 'drop/orders_export.csv')(ws);
          await dropped('samples/csv/orders.csv', 'drop/orders.csv')(ws);
        },
        ready: (ws) =>
          doneReport('drop/done/orders.csv.result.json')(ws) &&
          doneReport('drop/done/orders_export.csv.result.json')(ws),
      },
      check: (ws) => {
        allSubmitted('drop/done/orders.csv.result.json')(ws);
        // The preset skips cancelled or refunded orders and lines without a SKU (fees); the rest are submitted.
        expect(new Set(statuses(join(ws.dir, 'drop/done/orders_export.csv.result.json')))).toEqual(
          new Set(['submitted', 'skipped']),
        );
      },
    },
  },

  // Configuration.
  'htorder run --profile nz orders-nz.yaml': { spec: { check: allSubmitted('orders-nz.yaml.result.json') } },
  'HTORDER_PROFILE=us htorder plan orders-us.csv': {
    spec: {
      check: (ws) => expect(new Set(statuses(join(ws.dir, 'orders-us.csv.result.json')))).toEqual(new Set(['valid'])),
    },
  },

  // check.
  'htorder check samples/csv/orders.csv': { spec: {} },
  'htorder check samples/erp/export.csv --mapping samples/erp/mapping.yaml': { spec: {} },
  'htorder check samples/shopify/orders_export.csv': {
    spec: {
      check: (ws, r) => {
        expect(r.stderr).toContain('read as a Shopify export (--mapping shopify; 19 of its columns matched)');
        expect(json(join(ws.dir, 'samples/shopify/orders_export.csv.result.json')).mapping.preset).toBe('shopify');
      },
    },
  },
  'htorder check samples/erp-de/auftraege.csv --mapping samples/erp-de/mapping.yaml': { spec: {} },
  // The presets' pages (docs/presets/): each platform's sample through its preset.
  'htorder check samples/shopify/orders_export.csv --mapping shopify': { spec: {} },
  'htorder check samples/woocommerce-webtoffee/order-export.csv --mapping woocommerce': { spec: {} },
  'htorder check samples/odoo/sale.order.csv --mapping odoo': { spec: {} },
  'htorder check samples/bigcommerce/orders-2026-11-22.csv --mapping bigcommerce': { spec: {} },
  'htorder check samples/etsy/EtsySoldOrderItems2026-11.csv --mapping samples/etsy/mapping.yaml': { spec: {} },
  'htorder check samples/squarespace/orders.csv --mapping squarespace': { spec: {} },
  'htorder check samples/wix/orders.csv --mapping wix': { spec: {} },
  'htorder check samples/amazon/unshipped-orders-2026-11-22.txt': {
    spec: { check: (_ws, r) => expect(r.stderr).toContain('read as an Amazon export (--mapping amazon;') },
  },
  'htorder check samples/ebay/orders-report-2026-11-22.csv': {
    spec: { check: (_ws, r) => expect(r.stderr).toContain('read as an eBay export (--mapping ebay;') },
  },
  'htorder check orders.yaml': {
    spec: {
      files: { 'orders.yaml': INVALID_ORDER },
      exit: 1,
      check: (ws, r) => {
        expect(r.stderr).toContain('orders.yaml: 1 of 2 jobs invalid, 1 valid; 2 errors');
        expect(r.stderr).toContain('did you mean "customerReference"?');
        expect(existsSync(join(ws.dir, 'orders.yaml.errors.txt'))).toBe(true);
      },
    },
  },

  // plan and run.
  'htorder plan orders.yaml': {
    spec: {
      check: (ws) => expect(new Set(statuses(join(ws.dir, 'orders.yaml.result.json')))).toEqual(new Set(['valid'])),
    },
  },
  'htorder run orders.yaml more.csv': {
    spec: {
      check: (ws) => {
        allSubmitted('orders.yaml.result.json')(ws);
        allSubmitted('more.csv.result.json')(ws);
      },
    },
  },
  'htorder run --mapping erp.yaml exports/*.csv': { spec: { check: allSubmitted('exports/export.csv.result.json') } },
  'htorder run --sandbox samples/reorder/asset-reorder.yaml': {
    spec: { check: allSubmitted('samples/reorder/asset-reorder.yaml.result.json') },
  },
  // Guardrails (docs/guardrails.md): a job over a limit waits (exit 4); approved, it is sent once.
  'htorder run --sandbox --max-job-cost 100 samples/reorder/asset-reorder.yaml': {
    spec: {
      exit: 4,
      check: (ws) =>
        expect(statuses(join(ws.dir, 'samples/reorder/asset-reorder.yaml.result.json'))).toEqual(['awaiting-approval']),
    },
  },
  'htorder approve --list --sandbox': {
    spec: {
      before: [`${HELD_REORDER}; test $? -eq 4`],
      check: (_ws, r) => expect(r.stderr).toContain('RO-2026-0001'),
    },
  },
  'htorder approve --sandbox samples/reorder/asset-reorder.yaml --note "checked with Sam"': {
    spec: {
      before: [`${HELD_REORDER}; test $? -eq 4`],
      check: async (ws, r) => {
        expect(r.stderr).toContain('approved RO-2026-0001');
        expect((await run(HELD_REORDER, ws)).code).toBe(0);
        expect(statuses(join(ws.dir, 'samples/reorder/asset-reorder.yaml.result.json'))).toEqual(['submitted']);
      },
    },
  },
  'htorder plan --sandbox samples/reorder/asset-reorder.yaml --out plan.json': {
    spec: {
      check: (ws, r) => {
        expect(r.stderr).toContain('plan saved to plan.json: 1 job(s), estimated total 150.00 USD');
        expect(json(join(ws.dir, 'plan.json')).inputs[0].jobs[0].orderNumber).toBe('RO-2026-0001');
      },
    },
  },
  'htorder apply --sandbox plan.json': {
    spec: {
      before: ['htorder plan --sandbox samples/reorder/asset-reorder.yaml --out plan.json'],
      check: allSubmitted('samples/reorder/asset-reorder.yaml.result.json'),
    },
  },
  "htorder api GET '/Jobs/active?pageSize=5' --sandbox": {
    spec: {
      before: ['htorder run --sandbox samples/reorder/asset-reorder.yaml'],
      check: (_ws, r) => expect(JSON.parse(r.stdout).items[0]).toMatchObject({ orderNumber: 'RO-2026-0001' }),
    },
  },
  'htorder run --sandbox --sandbox-reset samples/reorder/asset-reorder.yaml': {
    spec: {
      before: ['htorder run --sandbox samples/reorder/asset-reorder.yaml'],
      check: (ws, r) => {
        expect(r.stderr).toContain('--sandbox-reset: removed the sandbox state');
        const jobs = json(join(ws.dir, 'samples/reorder/asset-reorder.yaml.result.json')).jobs;
        expect(jobs.map((j: { status: string }) => j.status)).toEqual(['submitted']);
        expect(jobs[0].jobNumber).toBe(700002);
      },
    },
  },
  'htorder run --sandbox --json samples/reorder/asset-reorder.yaml 2>/dev/null': {
    spec: {
      check: (_ws, r) => {
        expect(r.stdout.trim().split('\n')).toHaveLength(1);
        expect(JSON.parse(r.stdout)).toMatchObject({
          command: 'run',
          exitCode: 0,
          inputs: [{ status: 'ok', jobs: [{ orderNumber: 'RO-2026-0001', status: 'submitted', jobNumber: 700001 }] }],
        });
      },
    },
  },

  // track.
  'htorder track --sandbox my-orders/orders.yaml': {
    spec: {
      before: ['htorder init my-orders', 'htorder run --sandbox my-orders/orders.yaml'],
      check: (ws, r) => {
        expect(r.stderr).toContain('PO-0001');
        expect(json(join(ws.dir, 'my-orders/orders.yaml.result.json')).jobs[0].tracking).toMatchObject({
          status: 'Artwork Pending',
        });
      },
    },
  },
  'htorder track --sandbox': {
    spec: {
      before: ['htorder init my-orders', 'htorder run --sandbox my-orders/orders.yaml'],
      check: (_ws, r) => expect(r.stderr).toContain('PO-0001'),
    },
  },
  'htorder track': { spec: { before: [RUN_ORDERS], check: (_ws, r) => expect(r.stderr).toContain('TEAM-1001') } },
  'htorder track orders.yaml': {
    spec: {
      before: [RUN_ORDERS],
      check: (ws) =>
        expect(json(join(ws.dir, 'orders.yaml.result.json')).jobs[0].tracking).toMatchObject({ status: 'Received' }),
    },
  },
  'htorder track orders.yaml.result.json more/': {
    spec: {
      before: [RUN_ORDERS, 'mkdir more && cp more.csv more/ && htorder run more/more.csv'],
      check: (_ws, r) => {
        expect(r.stderr).toContain('TEAM-1001');
        expect(r.stderr).toContain('PO-2001');
      },
    },
  },
  'htorder track --json orders.yaml': {
    spec: {
      before: [RUN_ORDERS],
      check: (_ws, r) => expect(JSON.stringify(JSON.parse(r.stdout))).toContain('TEAM-1001'),
    },
  },
  'htorder track orders_export.csv': {
    spec: {
      before: ['cp samples/shopify/orders_export.csv . && htorder run orders_export.csv'],
      afterBefore: despatched,
      check: (ws, r) => {
        expect(r.stderr).toMatch(/tracking for the shop: .*orders_export\.csv\.tracking\.csv/);
        expect(readFileSync(join(ws.dir, 'orders_export.csv.tracking.csv'), 'utf8')).toMatch(/^Name,Command,/);
      },
    },
  },
  'htorder track --tracking-csv shipped.csv exports/': {
    spec: {
      before: ['cp samples/woocommerce/orders-export.csv exports/ && htorder run exports/orders-export.csv'],
      afterBefore: despatched,
      check: (ws) =>
        expect(readFileSync(join(ws.dir, 'shipped.csv'), 'utf8')).toMatch(
          /^order_id,tracking_provider,tracking_number,date_shipped,status_shipped,sku,qty\r\n2051,UPS,/,
        ),
    },
  },
  'htorder track --watch --interval 30': {
    spec: { before: [RUN_ORDERS], long: { ready: (_ws, r) => r.stderr.includes('TEAM-1003') } },
  },

  // watch.
  'htorder watch /srv/orders': {
    spec: {
      subst: (ws) => ({ '/srv/orders': join(ws.dir, 'srv/orders') }),
      before: ['mkdir -p srv/orders'],
      long: {
        act: dropped('samples/csv/orders.csv', 'srv/orders/orders.csv'),
        ready: doneReport('srv/orders/done/orders.csv.result.json'),
      },
      check: allSubmitted('srv/orders/done/orders.csv.result.json'),
    },
  },
  'htorder watch --mapping erp.yaml /srv/erp-drop': {
    spec: {
      subst: (ws) => ({ '/srv/erp-drop': join(ws.dir, 'srv/erp-drop') }),
      before: ['mkdir -p srv/erp-drop'],
      long: {
        act: dropped('samples/erp/export.csv', 'srv/erp-drop/export.csv'),
        ready: doneReport('srv/erp-drop/done/export.csv.result.json'),
      },
      check: allSubmitted('srv/erp-drop/done/export.csv.result.json'),
    },
  },
  'htorder watch --ui /srv/orders': {
    spec: {
      subst: (ws) => ({ '/srv/orders': join(ws.dir, 'srv/orders') }),
      before: ['mkdir -p srv/orders'],
      long: {
        act: dropped('samples/csv/orders.csv', 'srv/orders/orders.csv'),
        ready: async (ws, r) => {
          // The log names the file holding the link with its token (the log drops query strings).
          const link = /"uiLink":"([^"]+)"/.exec(r.stderr)?.[1];
          if (!link || !existsSync(join(ws.dir, 'srv/orders/done/orders.csv.result.json'))) return false;
          const url = readFileSync(link, 'utf8').trim();
          const page = await fetch(url).then(
            (res) => res.text(),
            () => '',
          );
          return page.includes('orders.csv') && page.includes('st-done');
        },
      },
    },
  },
  'htorder ui ./drop': {
    spec: {
      before: ['mkdir -p drop && htorder run drop/../orders.yaml && cp orders.yaml* drop/'],
      long: {
        ready: async (_ws, r) => {
          const url = r.stdout.split('\n')[0] ?? '';
          if (!/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+$/.test(url)) return false;
          const page = await fetch(url).then(
            (res) => res.text(),
            () => '',
          );
          return page.includes('orders.yaml') && page.includes('st-done');
        },
      },
    },
  },

  // api.
  'htorder api GET /account': { spec: { check: (_ws, r) => expect(JSON.parse(r.stdout)).toHaveProperty('id') } },
  "htorder api GET '/Jobs/active?pageSize=5&includeClosedJobs=true'": {
    spec: { check: (_ws, r) => expect(JSON.parse(r.stdout)).toBeTypeOf('object') },
  },
  "htorder api GET '/PriceCodes/DTF%20Full%20Color%2010%22%20x%2010%22'": {
    spec: { check: (_ws, r) => expect(r.stdout).toContain('DTF Full Color 10\\" x 10\\"') },
  },
  'htorder api POST /Jobs --data @job.json': {
    spec: { check: (_ws, r) => expect(JSON.parse(r.stdout)).toMatchObject({ jobNumber: 700001 }) },
  },
  'htorder api POST /Jobs/700001/cancel': { spec: { before: ['htorder api POST /Jobs --data @job.json'] } },
  'htorder api PATCH /Jobs/700001 --data \'{"description":"Spring kit v2"}\'': {
    spec: { before: ['htorder api POST /Jobs --data @job.json'] },
  },
  'htorder api GET /Lookups/job-statuses --sandbox': {
    spec: { check: (_ws, r) => expect(r.stdout).toContain('Dispatched') },
  },
  'htorder api GET /account --sandbox --account nz-demo': {
    spec: { check: (_ws, r) => expect(r.stdout).toContain('2001') },
  },

  // sandbox.
  'htorder sandbox': { spec: { long: { ready: SANDBOX_READY } } },
  // Later nights (README tour, docs/sandbox.md, docs/configuration.md): the sandbox's clock moved on.
  'htorder sandbox clock +2d': {
    spec: { check: (_ws, r) => expect(r.stdout).toMatch(/^sandbox clock: \S+Z, 2d ahead of real time \(state /) },
  },
  'htorder sandbox clock +1d': { spec: { check: (_ws, r) => expect(r.stdout).toContain(', 1d ahead of real time') } },
  'htorder sandbox clock': {
    spec: { before: ['htorder sandbox clock +2d'], check: (_ws, r) => expect(r.stdout).toContain('2d ahead') },
  },
  'htorder sandbox clock +1d --url http://127.0.0.1:8080': {
    spec: {
      subst: (ws) => ({ 'http://127.0.0.1:8080': ws.sandbox.url }),
      check: async (ws) => {
        const now = Date.parse((await ws.sandbox.admin.clock()).now);
        expect(now - Date.now()).toBeGreaterThan(86_400_000 - 60_000);
      },
    },
  },
  'htorder api POST /_sandbox/clock/advance --data \'{"ms":86400000}\' --sandbox': {
    spec: {
      check: async (ws, r) => {
        expect(JSON.parse(r.stdout)).toHaveProperty('now');
        expect((await run('htorder sandbox clock', ws)).stdout).toContain(', 1d ahead of real time');
      },
    },
  },
  'htorder track --sandbox samples/reorder/asset-reorder.yaml': {
    spec: {
      before: ['htorder run --sandbox samples/reorder/asset-reorder.yaml', 'htorder sandbox clock +2d'],
      check: (ws, r) => {
        expect(r.stderr).toMatch(/RO-2026-0001 +Dispatched/);
        expect(r.stderr).toMatch(/tracking for the shop: .*samples\/reorder\/asset-reorder\.yaml\.tracking\.csv/);
        const csv = readFileSync(join(ws.dir, 'samples/reorder/asset-reorder.yaml.tracking.csv'), 'utf8');
        expect(csv).toMatch(/\nRO-2026-0001,.*,UPS,UPSGND\d+,/);
      },
    },
  },
  'HTORDER_CLOCK_OFFSET=+3d htorder plan --sandbox samples/reorder/asset-reorder.yaml': {
    spec: {
      check: (ws, r) => {
        expect(r.stderr).toContain('the calendar clock is moved by HTORDER_CLOCK_OFFSET');
        expect(statuses(join(ws.dir, 'samples/reorder/asset-reorder.yaml.result.json'))).toEqual(['valid']);
      },
    },
  },
  'htorder sandbox --port 8080 --seed 7 --token-ttl 30': {
    spec: {
      subst: (ws) => ({ '8080': String(ws.port) }),
      long: { ready: (ws, r) => SANDBOX_READY(ws, r) && r.stdout.includes(`:${ws.port}`) },
    },
  },
  'htorder sandbox --port 8080 > sandbox.json &': {
    spec: {
      subst: (ws) => ({ '8080': String(ws.port), ' &': '' }),
      long: {
        ready: (ws) =>
          existsSync(join(ws.dir, 'sandbox.json')) && readFileSync(join(ws.dir, 'sandbox.json'), 'utf8').endsWith('\n'),
      },
      check: (ws) => expect(json(join(ws.dir, 'sandbox.json')).regions.us.baseUrl).toContain(`:${ws.port}/`),
    },
  },
};

// ---------------------------------------------------------------------------------------------

const extracted: ShownCommand[] = DOC_FILES.flatMap((file) =>
  extractCommands(readFileSync(join(ROOT, file), 'utf8')).map((c) => ({ ...c, file })),
);

beforeAll(async () => {
  requireDist();
  bin = await mkdtemp(join(tmpdir(), 'htorder-readme-bin-'));
  await writeFile(join(bin, 'htorder'), `#!/bin/sh\nexec "${NODE}" "${CLI}" "$@"\n`);
  await chmod(join(bin, 'htorder'), 0o755);
});

afterAll(async () => {
  for (const c of cleanups.splice(0)) await c().catch(() => undefined);
  if (bin) await rm(bin, { recursive: true, force: true });
});

describe('commands in README.md and docs/', () => {
  it('reads the README and every page of docs/', () => {
    expect(DOC_FILES[0]).toBe('README.md');
    expect(DOC_FILES).toContain('docs/commands.md');
    // Commands come from the pages, not only from the README.
    expect(new Set(extracted.map((c) => c.file)).size).toBeGreaterThan(4);
  });

  it('every command line in the README and docs/ is run here or listed with the reason it cannot be', () => {
    expect(extracted.length).toBeGreaterThan(40);
    const missing = extracted.filter((c) => !(c.cmd in COMMANDS)).map((c) => `${c.file}:${c.line}: ${c.cmd}`);
    expect(missing, 'commands of the manual without coverage: add them to COMMANDS').toEqual([]);
    const stale = Object.keys(COMMANDS).filter((k) => !extracted.some((c) => c.cmd === k));
    expect(stale, 'COMMANDS entries no longer in the README or docs/').toEqual([]);
  });

  it('names the file a command came from', () => {
    const shown = (file: string, cmd: string): boolean => extracted.some((c) => c.file === file && c.cmd === cmd);
    expect(shown('README.md', 'npm ci && npm run demo')).toBe(true);
    expect(shown('README.md', 'npm test')).toBe(true);
    expect(shown('docs/commands.md', 'htorder api GET /account')).toBe(true);
    expect(shown('docs/watch.md', 'docker build -t htorder .')).toBe(true);
  });

  it('every `npm run X` in the README and docs/ is a script of package.json, and the bin is the built CLI', () => {
    const scripts = extracted.flatMap((c) => [...c.cmd.matchAll(/npm run ([\w:-]+)/g)].map((m) => m[1]));
    expect(scripts.length).toBeGreaterThan(3);
    for (const s of scripts) expect(PACKAGE.scripts, s).toHaveProperty(s);
    expect(PACKAGE.bin.htorder).toBe('dist/cli/main.js');
  });

  const runnable = Object.entries(COMMANDS).filter((e): e is [string, { spec: Spec }] => 'spec' in e[1]);
  it.concurrent.each(runnable)(
    '%s',
    async (cmd, { spec }) => {
      const ws = await workspace(spec.files);
      for (const b of spec.before ?? []) {
        const r = await run(b, ws);
        expect(r.code, `before: ${b}\n${r.stderr}`).toBe(0);
      }
      await spec.afterBefore?.(ws);
      let line = cmd;
      for (const [from, to] of Object.entries(spec.subst?.(ws) ?? {})) line = line.split(from).join(to);
      const cwd = spec.cwd?.(ws);
      let r: Result;
      if (spec.long) {
        const p = start(line, ws, { cwd, pathShim: spec.pathShim });
        try {
          await spec.long.act?.(ws);
          await waitFor('it showed it works', () => spec.long!.ready(ws, p.out()), p);
        } finally {
          p.child.kill('SIGTERM');
        }
        r = await p.done;
      } else {
        r = await run(line, ws, { cwd, pathShim: spec.pathShim });
      }
      // A failure says whether this workspace's sandbox still took connections then, which tells
      // a command's fault from a sandbox gone from under it.
      const sandboxNow =
        r.code === (spec.exit ?? 0) ? '' : `\nits sandbox (${ws.sandbox.url}): ${await reachable(ws.sandbox.url)}`;
      expect(r.code, `exit code of: ${line}\nstdout: ${r.stdout}\nstderr: ${r.stderr}${sandboxNow}`).toBe(
        spec.exit ?? 0,
      );
      await spec.check?.(ws, r);
    },
    120_000,
  );
});
