/**
 * What a process must tidy however it ends (its leases, its temporary files): at `'exit'`, and
 * when a signal is about to kill it, which skips `'exit'`. One registry, so every kind of
 * leftover is tidied by the same listeners.
 */
export interface ExitCleanUp {
  /** Synchronous: `'exit'` listeners run no promise. */
  cleanUp(): void;
}

const exiting = new Set<ExitCleanUp>();
let listening = false;

/**
 * Cleans `target` up when the process exits, and when a signal is about to kill it: only when no
 * one else listens to that signal (a listener that keeps the process alive, like watch's
 * SIGTERM, finishes its work and tidies itself). `stopCleaningUp` takes it back off.
 */
export function cleanUpOnExit(target: ExitCleanUp): void {
  if (!listening) listen();
  exiting.add(target);
}

/** `target` tidied itself (or is no longer the process's to tidy). */
export function stopCleaningUp(target: ExitCleanUp): void {
  exiting.delete(target);
}

function cleanUpAll(): void {
  for (const t of [...exiting]) {
    exiting.delete(t);
    try {
      t.cleanUp();
    } catch {
      // One leftover that cannot be tidied does not keep the others.
    }
  }
}

function listen(): void {
  listening = true;
  process.once('exit', cleanUpAll);
  const signals: NodeJS.Signals[] =
    process.platform === 'win32' ? ['SIGINT', 'SIGTERM'] : ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const signal of signals) {
    // Who else listened is counted when the signal comes, by a listener that runs first: by
    // the time onSignal runs, a `process.once` listener (track --watch, ui, sandbox: each
    // stops and exits 0) has already removed itself, and the process would be killed under it.
    let others = 0;
    const count = () => {
      others = process.listenerCount(signal) - 2;
    };
    const onSignal = () => {
      if (others > 0) return;
      cleanUpAll();
      process.removeListener(signal, count);
      process.removeListener(signal, onSignal);
      process.kill(process.pid, signal);
    };
    process.prependListener(signal, count);
    process.on(signal, onSignal);
  }
}
