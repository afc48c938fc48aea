import { watch } from 'node:fs';
import { classifyName, markedInput } from './sources/drop-names.js';

/**
 * File-system events only wake the scan early; they are never trusted to report every
 * file (NFS, SMB and some bind mounts drop them), which is why the periodic scan stays.
 * One watch on the drop folder itself (one inotify watch on Linux, whatever the folder holds),
 * never one per entry: half a million temporary files cost nothing. Events for names that are
 * neither inputs nor `.done` markers do not even wake the scan.
 */
export function folderEvents(dir: string, onError?: (err: Error) => void): (wake: () => void) => () => Promise<void> {
  return (wake) => {
    let watcher: ReturnType<typeof watch> | undefined;
    try {
      watcher = watch(dir, { persistent: true }, (_event, name) => {
        if (typeof name !== 'string' || classifyName(name).take || markedInput(name) !== undefined) wake();
      });
      watcher.on('error', (err) => onError?.(err));
    } catch (err) {
      onError?.(err as Error);
    }
    return async () => watcher?.close();
  };
}
