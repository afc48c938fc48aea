// Pick-up latency of `htorder watch DIR`: from the moment a dropped file has been stable for
// --stable-time to the moment a watcher claims it. The design promise is "within one scan
// interval" (file-system events usually make it much less). Prints numbers; asserts nothing.
//
//   npm run build && node bench/watch-latency.mjs [files=10] [scanIntervalMs=2000] [stableMs=500]
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

const dist = new URL('../dist/', import.meta.url);
const { startSandbox } = await import(new URL('sandbox/index.js', dist).href);
const { runWatch } = await import(new URL('app/watch-daemon.js', dist).href);
const { sandboxEnv } = await import(new URL('config/sandbox-config.js', dist).href);

const files = Number(process.argv[2] ?? 10);
const scanIntervalMs = Number(process.argv[3] ?? 2000);
const stableMs = Number(process.argv[4] ?? 500);

const manifest = (order) => `version: 1
jobs:
  - orderNumber: ${order}
    deliveryAddress: { deliveryMethod: UPSGND, contactName: Ana Ruiz ${order}, streetAddress: 1 Main St, city: Austin, state: TX, postalCode: "78701", countryCodeISO2: US }
    items:
      - { itemType: Asset, code: A10001, quantity: 50 }
`;

async function measure(label, { events }) {
  const drop = await mkdtemp(join(tmpdir(), 'htorder-bench-drop-'));
  const state = await mkdtemp(join(tmpdir(), 'htorder-bench-state-'));
  try {
    return await measureIn(label, { events }, drop, state);
  } finally {
    // Also when a run throws: nothing of a benchmark is left in the temporary folder.
    await rm(drop, { recursive: true, force: true });
    await rm(state, { recursive: true, force: true });
  }
}

async function measureIn(label, { events }, drop, state) {
  const sandbox = await startSandbox({ port: 0 });
  const claimedAt = new Map();
  const doneAt = new Map();
  const stderr = new Writable({
    write(chunk, _e, cb) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        const l = JSON.parse(line);
        const name = String(l.file ?? '')
          .split('/')
          .pop();
        if (l.msg === 'claimed input') claimedAt.set(name, performance.timeOrigin + performance.now());
        if (l.msg === 'input done')
          doneAt.set(name.replace(/\.\d{8}T\d+Z(-\d+)?/, ''), performance.timeOrigin + performance.now());
      }
      cb();
    },
  });
  const controller = new AbortController();
  let ready;
  const readyP = new Promise((r) => (ready = r));
  const env = {
    ...sandboxEnv(sandbox, 'us-demo'),
    HTORDER_STATE_DIR: state,
  };
  const done = runWatch(
    { target: drop, flags: { scanIntervalMs, stableTimeMs: stableMs, fsEvents: events } },
    { stderr, env, cwd: process.cwd(), signal: controller.signal, onReady: () => ready() },
  );
  await readyP;
  const writtenAt = new Map();
  for (let i = 0; i < files; i++) {
    const name = `f${i}.yaml`;
    await writeFile(join(drop, name), manifest(`BENCH-${label}-${i}`));
    writtenAt.set(name, Date.now());
    // Spread drops over the scan cycle so the numbers are not all one phase of it.
    await sleep(stableMs + Math.random() * scanIntervalMs);
  }
  const deadline = Date.now() + 30_000 + scanIntervalMs * 2;
  while (claimedAt.size < files && Date.now() < deadline) await sleep(50);
  controller.abort();
  await done;
  await sandbox.close();
  const afterStable = [...writtenAt]
    .filter(([n]) => claimedAt.has(n))
    .map(([n, t]) => claimedAt.get(n) - (t + stableMs))
    .sort((a, b) => a - b);
  const toDone = [...writtenAt]
    .filter(([n]) => doneAt.has(n))
    .map(([n, t]) => doneAt.get(n) - t)
    .sort((a, b) => a - b);
  const q = (xs, p) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))]?.toFixed(0) ?? '-';
  console.log(
    `${label.padEnd(22)} files=${afterStable.length}/${files} pick-up after stable ms: min ${q(afterStable, 0)} p50 ${q(afterStable, 0.5)} p95 ${q(afterStable, 0.95)} max ${q(afterStable, 1)}` +
      `  | drop→done ms p50 ${q(toDone, 0.5)} max ${q(toDone, 1)}  (scan interval ${scanIntervalMs}, stable ${stableMs})`,
  );
}

console.log(`htorder watch pick-up latency (node ${process.version})`);
await measure('folder + fs events', { events: true });
// Without events the scan alone decides: what NFS/SMB mounts and some bind mounts get.
await measure('folder, scan only', { events: false });
