import { watch } from 'chokidar';

/**
 * File-system events only wake the scan early; they are never trusted to report every
 * file (NFS, SMB and some bind mounts drop them), which is why the periodic scan stays.
 * Watches the drop folder itself only (depth 0), not processing/, done/ or failed/.
 */
export function folderEvents(dir: string, onError?: (err: Error) => void): (wake: () => void) => () => Promise<void> {
  return (wake) => {
    const watcher = watch(dir, { depth: 0, ignoreInitial: true, persistent: true });
    watcher.on('all', () => wake());
    watcher.on('error', (err) => onError?.(err as Error));
    return () => watcher.close();
  };
}
