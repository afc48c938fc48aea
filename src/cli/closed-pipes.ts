/**
 * A reader that stops reading (`htorder watch --help | head -1`, `htorder track --json | jq -n
 * first`) closes the pipe under htorder's output; the next write fails with EPIPE, which Node
 * reports as an error event and, unhandled, as a crash with a stack trace.
 *
 * stdout carries what a command answers, written once its work is done (a `--json` summary,
 * help, an API answer) or as the point of a loop (`track --watch --json`): once nobody reads it,
 * the command ends there, quietly, with the exit code it has so far (0 if none yet), as a
 * Unix tool killed by SIGPIPE would end. stderr carries progress and logs while orders are sent:
 * a closed stderr is ignored, and the command runs to its end.
 */
export function quietOnClosedPipes(proc: Pick<NodeJS.Process, 'stdout' | 'stderr' | 'exit' | 'exitCode'>): void {
  proc.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (!isClosedPipe(err)) throw err;
    proc.exit(typeof proc.exitCode === 'number' ? proc.exitCode : 0);
  });
  proc.stderr.on('error', (err: NodeJS.ErrnoException) => {
    if (!isClosedPipe(err)) throw err;
  });
}

/** EPIPE, or a write after the stream was closed for it. */
function isClosedPipe(err: NodeJS.ErrnoException): boolean {
  return err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED';
}
