import { basename } from 'node:path';
import type { Logger } from '../core/log/logger.js';
import type { WatchEvents } from '../watch/events.js';
import type { WatchMetrics } from '../watch/metrics.js';
import type { SettleEvent } from '../watch/settle-window.js';

/**
 * Logs, counts and tells a finished input that changed within its settle window
 * (docs/watch.md#the-settle-window): given back to the top (`requeued`, like a change seen
 * while it was processed), or not, and why.
 */
export function tellSettled(
  e: SettleEvent,
  ctx: { logger: Logger; events?: WatchEvents; metrics?: WatchMetrics | undefined },
): void {
  if (e.kind === 'error') {
    ctx.logger.error({ file: e.from, err: e.error }, 'a finished input changed but could not be given back');
    return;
  }
  const problem =
    `changed after it was moved to ${e.outcome}/ (${e.what}): given back; will be processed again once stable, ` +
    'its jobs already submitted not sent again';
  ctx.events?.input({ name: basename(e.to), location: e.to, phase: 'requeued', problem });
  ctx.metrics?.files.inc({ outcome: 'requeued' });
  ctx.logger.warn({ file: e.to, from: e.from, outcome: 'requeued', problem }, 'input requeued');
}
