import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A module for `node --import` that puts a bug into a real htorder process: the `--json` summary
 * line (an object with `command` and `exitCode`) cannot be written. `where` says how the bug
 * surfaces: thrown in the command (`command`), or thrown from a callback of its own
 * (`callback`: an uncaught exception, as a timer's or an event's would be).
 */
export async function injectedBug(folder: string, where: 'command' | 'callback'): Promise<string> {
  const path = join(folder, `bug-${where}.mjs`);
  const raise =
    where === 'command'
      ? "throw new Error('an injected bug')"
      : "setImmediate(() => { throw new Error('an injected bug'); }); return '{}'";
  await writeFile(
    path,
    `const stringify = JSON.stringify;
JSON.stringify = function (value, ...rest) {
  if (value && typeof value === 'object' && 'command' in value && 'exitCode' in value) { ${raise}; }
  return stringify.call(this, value, ...rest);
};
`,
  );
  return path;
}
