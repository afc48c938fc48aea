import type { Command } from 'commander';
import { parseInteger, parsePort } from '../../core/config/parse-setting.js';
import { ExitCode } from '../../core/errors.js';
import type { SandboxInfo } from '../../sandbox/index.js';
import { addSettingOptions, configFlagsFrom } from '../../core/config/config-flags.js';
import { processIo } from '../command-io.js';
import { examples } from '../help.js';
import { untilStopped } from '../stop-signals.js';

/** The ready line (docs/sandbox.md): one JSON object on one line, then nothing else on stdout. */
export function readyLine(info: SandboxInfo): string {
  return JSON.stringify({
    url: info.url,
    adminUrl: `${info.url}/_sandbox`,
    regions: info.regions,
    accounts: info.accounts,
  });
}

let stopRequested: (() => void) | null = null;

/**
 * Stops a running `htorder sandbox` as SIGINT/SIGTERM would (graceful close, exit 0).
 * Exists so tests can run the command in-process; returns false when none is running.
 */
export function requestSandboxStop(): boolean {
  if (!stopRequested) return false;
  stopRequested();
  return true;
}

/** `htorder sandbox [--port N] [--host H] [--seed N] [--token-ttl SECONDS]`, and `htorder sandbox clock`. */
export function register(program: Command): void {
  const command = program
    .command('sandbox')
    .description(
      'start the local API simulator; prints one JSON line with URLs and demo credentials, then serves until SIGINT/SIGTERM',
    )
    .option('--port <n>', 'port to listen on (0 = any free port)', '0')
    .option('--host <host>', 'interface to bind', '127.0.0.1')
    .option('--seed <n>', 'seed for generated data and client secrets', '1')
    .option('--token-ttl <seconds>', 'access token lifetime in seconds', '600')
    .addHelpText(
      'after',
      examples([
        ['htorder sandbox', 'any free port; the ready line (JSON) names the URLs and demo credentials'],
        [
          'htorder sandbox --port 8080 --seed 7 --token-ttl 30 > sandbox.json',
          'fixed port, other generated data, 30-second tokens',
        ],
        ['htorder sandbox clock +2d', 'two days later for --sandbox (its jobs move on; htorder sees that date too)'],
      ]),
    )
    .action(async (opts: { port: string; host: string; seed: string; tokenTtl: string }) => {
      const port = parsePort(opts.port, '--port');
      const seed = parseInteger(opts.seed, '--seed', 0, 2 ** 32 - 1);
      const tokenTtlSeconds = parseInteger(opts.tokenTtl, '--token-ttl', 1, 86_400);
      const { startSandbox } = await import('../../sandbox/index.js');
      let sandbox: Awaited<ReturnType<typeof startSandbox>>;
      try {
        sandbox = await startSandbox({ port, host: opts.host, seed, tokenTtlSeconds, fetchArtwork: true });
      } catch (err) {
        process.stderr.write(
          `htorder sandbox: cannot listen on ${opts.host}:${opts.port}: ${(err as Error).message}\n`,
        );
        process.exitCode = ExitCode.Usage;
        return;
      }
      const { stopped, stop } = untilStopped();
      stopRequested = stop;
      process.stdout.write(readyLine(sandbox.info()) + '\n');
      await stopped;
      stopRequested = null;
      await sandbox.close();
      process.exitCode = ExitCode.Ok;
    });
  registerClock(command);
}

/**
 * `htorder sandbox clock [+DURATION] [--url URL]`: moves the clock of the sandbox of `--sandbox`
 * (its state under the state dir; a running `watch --sandbox` follows) or, with `--url`, of a
 * running `htorder sandbox`, through its admin route; without a duration it tells the time.
 * The sandbox's jobs follow its clock to despatch, and htorder's own calendar (duplicate window,
 * daily budget) follows it under `--sandbox` (docs/sandbox.md#moving-the-clock-later-nights).
 */
function registerClock(sandbox: Command): void {
  const cmd = sandbox
    .command('clock')
    .description("move the sandbox's clock forward (later nights: jobs progress, dates follow), or tell its time")
    .argument('[offset]', 'how far forward: +2d, 12h, 1d6h, 90m (days, hours, minutes, seconds)')
    .option('--url <url>', 'a running `htorder sandbox` (its url, from the ready line) instead of the --sandbox state')
    .addHelpText(
      'after',
      examples([
        ['htorder sandbox clock +2d', 'two days on for --sandbox, whose state is in the state dir'],
        ['htorder sandbox clock', "the sandbox's time, and how far ahead of real time it is"],
        ['htorder sandbox clock +1d --url http://127.0.0.1:8080', 'a running htorder sandbox'],
      ]),
    );
  addSettingOptions(cmd, ['stateDir', 'profile', 'config', 'lockStaleMs']);
  cmd.action(async (offset: string | undefined, opts: Record<string, unknown>) => {
    const { runSandboxClock } = await import('../sandbox-clock.js');
    process.exitCode = await runSandboxClock(
      { offset, url: opts.url as string | undefined, flags: configFlagsFrom(opts) },
      processIo(),
    );
  });
}
