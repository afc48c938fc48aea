#!/usr/bin/env node
// No UV_THREADPOOL_SIZE here: the ESM loader has already started libuv's pool to read this
// file, so only a variable set before node starts sizes it.
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
