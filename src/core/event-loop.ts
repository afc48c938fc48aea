import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Resolves after the event loop has polled for I/O once more, so that what arrived during a
 * long synchronous stretch (an API answer during a manifest's parse) is handled before the
 * next one. One setImmediate is not enough: called from an I/O callback it runs in the same
 * loop iteration's check phase, right after the poll that delivered that callback, so nothing
 * that arrived since is seen; an immediate queued from an immediate waits for the next
 * iteration, whose poll comes first.
 */
export async function afterIoPoll(): Promise<void> {
  await nextTurn();
  await nextTurn();
}
