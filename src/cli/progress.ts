import type { ProgressEvent } from '../pipeline/process-input.js';
import { printable } from '../core/printable.js';

export interface Progress {
  update: (event: ProgressEvent) => void;
  clear: () => void;
}

/**
 * A one-line live status on a TTY (`run orders.csv: submit 120/2000`), redrawn at most
 * ten times a second; nothing at all when stderr is not a terminal (cron, CI, pipes).
 */
export function createProgress(stderr: NodeJS.WritableStream & { isTTY?: boolean }, command: string): Progress {
  if (stderr.isTTY !== true) return { update: () => undefined, clear: () => undefined };
  let last = 0;
  let shown = false;
  return {
    update(e) {
      const now = Date.now();
      if (e.stage !== 'done' && e.done !== 0 && e.done !== e.total && now - last < 100) return;
      last = now;
      shown = true;
      stderr.write(`\r\x1b[2K${command} ${printable(e.file)}: ${e.stage} ${e.done}/${e.total}`);
    },
    clear() {
      if (shown) stderr.write('\r\x1b[2K');
      shown = false;
    },
  };
}
