/**
 * Preloaded into a benchmarked child (`node --import bench/lib/report-peak.mjs …`): when the
 * process exits, however it exits, writes its peak resident set size and CPU time to the file
 * named by HTORDER_BENCH_STATS, and the CPU time of its main thread alone. The kernel's own
 * high-water mark of the process's memory (peak-rss.mjs) is exact, unlike polling /proc from
 * outside, which can miss a short peak just before exit.
 *
 * With HTORDER_BENCH_TRACE=1 it also notes, from undici's diagnostics channel, when the child
 * made its first `POST …/Jobs` and when the last one was answered (ms from the process's start;
 * `npm run bench -- --trace`): where a run's time goes — before the first order, the orders
 * themselves, after the last answer — without a profiler slowing it. Also each POST's time from
 * its request to its answer's headers as the child saw them, and how many were in flight on
 * average: a client whose event loop is busy when an answer comes in sees its POSTs take
 * longer than the bare client does, though the API answered both alike.
 *
 * With HTORDER_BENCH_MEMORY=1 (`npm run bench -- --memory`) it samples process.memoryUsage()
 * after every 2,000 answers to `POST …/Jobs` (1,000 jobs' dry runs or creates) and twice a
 * second: where the memory goes as the work grows (heap, buffers outside it), and whether it
 * grows with the jobs done.
 */
import { subscribe } from 'node:diagnostics_channel';
import { readFileSync, writeFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { peakRssBytes } from './peak-rss.mjs';

// Preloaded into the child's worker threads too (result.csv's): the process's figures are written once, by its main thread.
const out = isMainThread ? process.env.HTORDER_BENCH_STATS : undefined;
// A worker thread's own figures (the last one's, for check's one result.csv worker): its CPU
// time and its life from start to exit, which a busy neighbour moves less than the process's wall time.
if (!isMainThread && process.env.HTORDER_BENCH_STATS) {
  const started = performance.now(); // this preload runs as the thread starts
  process.on('exit', () => {
    const worker = { workerCpuMs: threadCpuMs('/proc/thread-self'), workerWallMs: performance.now() - started };
    writeFileSync(`${process.env.HTORDER_BENCH_STATS}.worker`, JSON.stringify(worker));
  });
}
/** USER_HZ, the unit of /proc's CPU times: 100 on every Linux architecture Node runs on. */
const CLOCK_TICKS = 100;

/**
 * CPU time (user + system) of one thread (by default the main thread) alone, from Linux's /proc
 * (NaN elsewhere). The main thread's: the
 * process's figure also counts the worker threads and V8's helper threads, which run beside the
 * main thread on a machine with a core to spare, so on a busy machine the main thread's CPU time
 * is the steadiest measure of the wall time a quiet machine would show.
 */
function threadCpuMs(task = `/proc/self/task/${process.pid}`) {
  try {
    const stat = readFileSync(`${task}/stat`, 'latin1');
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th, in clock ticks.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/**
 * How long the main thread waited, runnable, for a core (Linux's schedstat; NaN elsewhere): the
 * process's wall time less this is about the wall time it would take on a quiet machine, its
 * waits for the disk and for other threads included, unlike its CPU time.
 */
function queuedMs() {
  try {
    const [, waitNs] = readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'latin1').split(' ');
    return Number(waitNs) / 1e6;
  } catch {
    return Number.NaN;
  }
}

const trace = {
  firstPostMs: Number.NaN,
  firstCreateMs: Number.NaN,
  lastPostMs: Number.NaN,
  /** The POSTs answered, their times summed, and the integral of the POSTs in flight over time. */
  posts: 0,
  postMs: 0,
  inFlightMs: 0,
};
/**
 * Each POST's time, for its median and 99th percentile: a client whose event loop is now and
 * then held for a while sees most of its POSTs take as long as the bare client's and a few take
 * much longer, which the mean alone does not tell from every POST taking a little longer.
 */
let postTimes = new Float64Array(1024);
const postStarted = new WeakMap();
const flight = { calls: 0, since: Number.NaN };
/** `change` POSTs more in flight from `now` on. */
function inFlight(change, now) {
  if (!Number.isNaN(flight.since)) trace.inFlightMs += flight.calls * (now - flight.since);
  flight.since = now;
  flight.calls += change;
}
// A create's body says validateOnly false: both htorder and the bare client send every dry run first.
const isCreate = (request) => {
  const body = request.body;
  const text = typeof body === 'string' ? body : body instanceof Uint8Array ? Buffer.from(body).toString('latin1') : '';
  return /"validateOnly":\s*false/.test(text);
};
const isJobsPost = (request) => request.method === 'POST' && /\/Jobs(\?|$)/.test(request.path);
if (out && process.env.HTORDER_BENCH_TRACE === '1') {
  subscribe('undici:request:create', ({ request }) => {
    if (!isJobsPost(request)) return;
    const now = performance.now();
    if (Number.isNaN(trace.firstPostMs)) trace.firstPostMs = now;
    if (Number.isNaN(trace.firstCreateMs) && isCreate(request)) trace.firstCreateMs = now;
    postStarted.set(request, now);
    inFlight(1, now);
  });
  subscribe('undici:request:headers', ({ request }) => {
    if (!isJobsPost(request)) return;
    const now = performance.now();
    trace.lastPostMs = now;
    const started = postStarted.get(request);
    if (started === undefined) return;
    if (trace.posts === postTimes.length) {
      const grown = new Float64Array(2 * postTimes.length);
      grown.set(postTimes);
      postTimes = grown;
    }
    postTimes[trace.posts++] = now - started;
    trace.postMs += now - started;
    inFlight(-1, now);
  });
}
/** The median and the 99th percentile of the POSTs' times (nearest rank). */
function postQuantiles() {
  if (trace.posts === 0) return {};
  const sorted = postTimes.slice(0, trace.posts).sort();
  const at = (q) => sorted[Math.min(trace.posts - 1, Math.ceil(q * trace.posts) - 1)];
  return { postMedianMs: at(0.5), postP99Ms: at(0.99) };
}
const memory = { samples: [], peak: { rss: 0, heapUsed: 0, heapTotal: 0, external: 0, arrayBuffers: 0 } };
if (out && process.env.HTORDER_BENCH_MEMORY === '1') {
  const sample = (posts) => {
    const m = process.memoryUsage();
    for (const k of Object.keys(memory.peak)) memory.peak[k] = Math.max(memory.peak[k], m[k]);
    if (posts !== undefined) memory.samples.push({ posts, ms: Math.round(performance.now()), ...m });
  };
  let posts = 0;
  subscribe('undici:request:headers', ({ request }) => {
    if (isJobsPost(request) && ++posts % 2000 === 0) sample(posts);
  });
  setInterval(() => sample(), 500).unref();
}
if (out) {
  process.on('exit', () => {
    const u = process.resourceUsage();
    writeFileSync(
      out,
      JSON.stringify({
        maxRssBytes: peakRssBytes(),
        userMs: u.userCPUTime / 1000,
        systemMs: u.systemCPUTime / 1000,
        mainThreadMs: threadCpuMs(),
        mainThreadQueuedMs: queuedMs(),
        ...(Number.isNaN(trace.firstPostMs) ? {} : { ...trace, ...postQuantiles(), exitMs: performance.now() }),
        ...(memory.peak.rss > 0 ? { memory } : {}),
      }),
    );
  });
}
