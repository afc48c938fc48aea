/** A command that serves until it is told to stop. */
export interface Stop {
  /** Aborted on SIGINT, SIGTERM, `stop()` or the `also` signal, whichever comes first. */
  readonly signal: AbortSignal;
  /** Resolves once stopped. */
  readonly stopped: Promise<void>;
  /** Stops as a signal would; also removes the signal handlers. */
  stop(): void;
}

/**
 * Listens for SIGINT and SIGTERM until the first one. Install it before announcing that the
 * command is ready: a supervisor may stop the process the moment it reads the ready line.
 */
export function untilStopped(also?: AbortSignal): Stop {
  const controller = new AbortController();
  const stop = (): void => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    controller.abort();
  };
  const stopped = new Promise<void>((resolve) => controller.signal.addEventListener('abort', () => resolve()));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  if (also?.aborted) stop();
  else also?.addEventListener('abort', stop, { once: true });
  return { signal: controller.signal, stopped, stop };
}
