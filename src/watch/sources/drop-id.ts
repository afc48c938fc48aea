import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { SourceError } from './model.js';

/** The name of a drop folder's id in its processing/ folder: hidden, never an input. */
export const DROP_ID_FILE = '.htorder-drop-id';

const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The drop folder's own id, the same from every host that mounts it wherever it is mounted:
 * what claims in the ledger's database are named by (a path is not, as two hosts may mount one
 * share at two places). Read from `path`, or made there exclusively by the first watcher; a
 * link is never followed. SourceError (usage) when what is there is no id.
 */
export async function dropId(path: string): Promise<string> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      try {
        const id = (await handle.readFile('utf8')).trim();
        if (!ID.test(id) || !(await handle.stat()).isFile())
          throw new SourceError(`${path} is not a drop folder id written by htorder: remove it`, 'usage');
        return id;
      } finally {
        await handle.close();
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    try {
      const handle = await open(
        path,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o644,
      );
      const id = randomUUID();
      try {
        await handle.writeFile(`${id}\n`);
        await handle.sync();
      } finally {
        await handle.close();
      }
      return id;
    } catch (err) {
      // Another watcher made it first: read its id.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  throw new SourceError(`${path} appears and disappears: cannot read the drop folder's id`, 'unavailable');
}
