import type { Command } from 'commander';
import { parseInteger, parsePort } from '../../core/config/parse-setting.js';
import { ExitCode } from '../../core/errors.js';
import type { SandboxInfo } from '../../sandbox/index.js';
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

/** `htorder sandbox [--port N] [--host H] [--seed N] [--token-ttl SECONDS]` */
export function register(program: Command): void {
  program
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
}
