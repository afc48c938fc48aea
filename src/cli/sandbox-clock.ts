import { parseOffset } from '../core/clock.js';
import { defaultStateDir } from '../core/config/api-config.js';
import { parseUrl } from '../core/config/parse-setting.js';
import { resolveSettings, type SettingFlags } from '../core/config/resolve-settings.js';
import { ExitCode, UsageError } from '../core/errors.js';
import { printable } from '../core/printable.js';
import type { CommandIo } from './command-io.js';

export interface SandboxClockInput {
  /** `+2d`, `12h` …; absent: only tell the time. */
  offset?: string;
  /** A running `htorder sandbox`; absent: the state of `--sandbox` under the state dir. */
  url?: string;
  flags: SettingFlags;
}

/** `htorder sandbox clock [OFFSET] [--url URL]`: one line on stdout, the sandbox's time after the move. */
export async function runSandboxClock(input: SandboxClockInput, io: CommandIo): Promise<number> {
  const ms = input.offset === undefined ? 0 : parseOffset(input.offset);
  if (ms === undefined) {
    throw new UsageError(`"${input.offset}" is not a duration: write how far forward, such as +2d, 12h, 1d6h or 90m`);
  }
  if (ms < 0) {
    throw new UsageError(
      "the sandbox's clock only moves forward (--sandbox-reset, or POST /_sandbox/reset of a server, starts it over at the real time)",
    );
  }
  try {
    const told = input.url === undefined ? await moveStateClock(input, ms, io) : await moveServerClock(input.url, ms);
    io.stdout.write(
      `sandbox clock: ${told.now}, ${ahead(Date.parse(told.now) - Date.now())} (${printable(told.where)})\n`,
    );
    return ExitCode.Ok;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    io.stderr.write(`htorder sandbox clock: ${printable((err as Error).message)}\n`);
    return ExitCode.Unavailable;
  }
}

/** The state of `--sandbox`, in the state dir the settings name (as `run --sandbox` finds it). */
async function moveStateClock(input: SandboxClockInput, ms: number, io: CommandIo) {
  const settings = resolveSettings({ env: io.env, flags: input.flags, cwd: io.cwd });
  const stateDir = settings.get('stateDir') ?? defaultStateDir(settings.env, settings.home);
  const { moveSandboxClock } = await import('../app/sandbox-state.js');
  const moved = await moveSandboxClock({ stateDir, ms, staleMs: settings.get('lockStaleMs') });
  return { now: moved.now, where: `state ${moved.file}` };
}

/** A running `htorder sandbox`, by its url (the ready line's `url` or `adminUrl`). */
async function moveServerClock(url: string, ms: number) {
  const base = parseUrl(url, '--url').replace(/\/_sandbox$/, '');
  const { SandboxAdmin } = await import('../sandbox/index.js');
  const admin = new SandboxAdmin(base);
  const { now } = ms > 0 ? await admin.advanceClock(ms) : await admin.clock();
  return { now, where: `server ${base}` };
}

/** `2d 3h ahead of real time`, or `at real time` within a minute. */
function ahead(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (Math.abs(minutes) < 1) return 'at real time';
  const d = Math.floor(minutes / 1440);
  const h = Math.floor((minutes % 1440) / 60);
  const m = minutes % 60;
  const parts = [d ? `${d}d` : '', h ? `${h}h` : '', m ? `${m}m` : ''].filter(Boolean);
  return `${parts.join(' ')} ahead of real time`;
}
