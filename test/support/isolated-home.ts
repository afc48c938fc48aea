import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach } from 'vitest';

/**
 * No test reads or writes the home, the XDG folders or the working directory of the person
 * running it: htorder reads `~/.config/htorder/config.yaml` and keeps its ledger in
 * `~/.local/state/htorder`, and a run writes where it is started. So each test file gets a
 * home of its own (HOME and every XDG_* folder inside it) and its own working directory, all in
 * the file's temporary folder (temp-root.ts, the setup file before this one), and each test a
 * fresh XDG_STATE_HOME: no test shares a ledger with the next. Processes spawned with
 * process.env and in-process runs given it inherit them; os.homedir() reads HOME. A test that
 * still writes the real ones fails the run (temp-root.global.ts).
 */
const base = tmpdir();
const home = join(base, 'home');
for (const dir of ['', '.config', '.cache', '.local/share', '.local/state', 'run'])
  mkdirSync(join(home, dir), { recursive: true, mode: 0o700 });
process.env.HOME = home;
process.env.XDG_CONFIG_HOME = join(home, '.config');
process.env.XDG_CACHE_HOME = join(home, '.cache');
process.env.XDG_DATA_HOME = join(home, '.local/share');
process.env.XDG_RUNTIME_DIR = join(home, 'run');
const cwd = join(base, 'cwd');
mkdirSync(cwd, { recursive: true });
process.chdir(cwd);

beforeEach(() => {
  process.env.XDG_STATE_HOME = mkdtempSync(join(base, 'htorder-test-state-'));
});
