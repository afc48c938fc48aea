#!/usr/bin/env node
// Ledger fsyncs, report writes and file reads of concurrent jobs all go through libuv's
// thread pool (4 threads by default); a larger pool keeps an fsync from queueing behind
// a report rewrite. It must be set before the pool is first used, hence before any import
// that could touch the file system asynchronously.
process.env.UV_THREADPOOL_SIZE ??= '16';
const { limitHeapGrowth } = await import('./heap-growth.js');
limitHeapGrowth();
const { runCli } = await import('./program.js');
const { printableLines } = await import('../core/printable.js');
const { quietOnClosedPipes } = await import('./closed-pipes.js');

quietOnClosedPipes(process);

/**
 * The command is done and the process only waits for its last handles to close: a signal now
 * has nothing left to stop, so it ends the process at once with the command's own code instead
 * of killing it (a watch stopped gracefully would otherwise seem to have failed: 143).
 */
function exitOnSignal(code: number): void {
  process.exitCode = code;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(code));
}

runCli(process.argv.slice(2)).then(exitOnSignal, (err: unknown) => {
  process.stderr.write(
    `htorder: internal error: ${printableLines(err instanceof Error ? (err.stack ?? err.message) : String(err))}\n`,
  );
  exitOnSignal(1);
});
