#!/usr/bin/env node
// No UV_THREADPOOL_SIZE here: the ESM loader has already started libuv's pool to read this
// file, so only a variable set before node starts sizes it.
const { limitHeapGrowth } = await import('./heap-growth.js');
limitHeapGrowth();
const { runCli } = await import('./program.js');
const { printableLines } = await import('../core/printable.js');
const { quietOnClosedPipes } = await import('./closed-pipes.js');
const { ExitCode } = await import('../core/errors.js');

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

/**
 * A bug (an exception nobody caught, in the command or in a callback after it): its stack, what
 * it means for the orders, and exit 70, a code no input's or setup's problem has.
 */
function internalError(err: unknown): void {
  process.stderr.write(
    `htorder: internal error: ${printableLines(err instanceof Error ? (err.stack ?? err.message) : String(err))}\n` +
      'htorder: this is a bug: what was sent is in the ledger, and a later run never sends it twice; please report it\n',
  );
}

process.once('uncaughtException', (err) => {
  internalError(err);
  process.exit(ExitCode.Internal);
});

runCli(process.argv.slice(2)).then(exitOnSignal, (err: unknown) => {
  internalError(err);
  exitOnSignal(ExitCode.Internal);
});
