import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * What a test could change of the person running the suite: htorder's folders in their home
 * (config, state, cache, data, by XDG_* or the defaults) and the files of the working
 * directory that git does not track (a report or a `.htorder/` written where the suite was
 * started). Each test file runs with a home and a working directory of its own
 * (isolated-home.ts); this is the check that nothing got out anyway.
 */
function htorderFolders(env: NodeJS.ProcessEnv): string[] {
  const home = homedir();
  const xdg = (name: string, fallback: string): string => join(env[name] || join(home, fallback), 'htorder');
  return [
    xdg('XDG_CONFIG_HOME', '.config'),
    xdg('XDG_STATE_HOME', '.local/state'),
    xdg('XDG_CACHE_HOME', '.cache'),
    xdg('XDG_DATA_HOME', '.local/share'),
  ];
}

/** Every entry under `dir` with its size and time, `dir` itself included; none when it does not exist. */
function listing(dir: string, into = new Map<string, string>()): Map<string, string> {
  let s: ReturnType<typeof statSync>;
  try {
    s = statSync(dir);
  } catch {
    return into;
  }
  into.set(dir, `${s.size}:${s.mtimeMs}`);
  if (s.isDirectory()) for (const name of readdirSync(dir)) listing(join(dir, name), into);
  return into;
}

/** Files and folders of the working directory git does not track (ignored ones too), folders collapsed. */
function untracked(cwd: string): Set<string> {
  try {
    const out = execFileSync('git', ['ls-files', '--others', '--directory', '-z'], { cwd, encoding: 'utf8' });
    return new Set(out.split('\0').filter((p) => p !== '' && !/^(node_modules|dist|coverage)\//.test(p)));
  } catch {
    return new Set(); // not a git checkout: only the home folders are checked
  }
}

function snapshot(): { home: Map<string, string>; cwd: Set<string> } {
  const home = new Map<string, string>();
  for (const dir of htorderFolders(process.env)) listing(dir, home);
  return { home, cwd: untracked(process.cwd()) };
}

export default function setup(): () => void {
  const before = snapshot();
  return () => {
    const after = snapshot();
    const changed = [
      ...[...new Set([...before.home.keys(), ...after.home.keys()])].filter(
        (p) => before.home.get(p) !== after.home.get(p),
      ),
      ...[...after.cwd].filter((p) => !before.cwd.has(p)).map((p) => join(process.cwd(), p)),
    ];
    if (changed.length === 0) return;
    const message =
      `The tests changed the real home or working directory (test/support/isolated-home.ts; or ` +
      `another process did, if htorder ran meanwhile):\n  ${changed.join('\n  ')}`;
    // As temp-root.global.ts: a failure on CI, where the suite runs alone; a warning elsewhere.
    if (process.env.CI) {
      console.error(message);
      process.exitCode = 1;
      return;
    }
    console.warn(message);
  };
}
