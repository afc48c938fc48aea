import type { Command } from 'commander';
import { addSettingOptions, configFlagsFrom } from '../../core/config/config-flags.js';
import { parsePort } from '../../core/config/parse-setting.js';
import { ExitCode, UsageError } from '../../core/errors.js';
import { examples } from '../help.js';
import { untilStopped } from '../stop-signals.js';

/** `htorder ui [DIR] [--port N] [--host H]`: the read-only dashboard of a folder (docs/ui.md). */
export function register(program: Command): void {
  const cmd = program
    .command('ui')
    .description(
      'serve a read-only dashboard of a drop folder or a folder of runs; prints its URL, then serves until SIGINT/SIGTERM',
    )
    .argument('[dir]', 'the folder: a drop folder (with done/, failed/) or inputs with their reports', '.')
    .option('--port <port>', 'port to listen on (default any free port; env HTORDER_UI_PORT)')
    .option('--host <host>', 'interface to bind (default 127.0.0.1; any other needs HTORDER_UI_TOKEN)')
    .addHelpText(
      'after',
      examples([
        ['htorder ui drop', 'the dashboard of the drop folder ./drop; open the URL it prints'],
        ['htorder ui --port 8080 .', 'a fixed port, the current folder'],
      ]),
    );
  addSettingOptions(cmd, ['profile', 'config', 'processingDir', 'doneDir', 'failedDir', 'heldDir']);
  cmd.action(async (dir: string, opts: Record<string, unknown>) => {
    const { resolve } = await import('node:path');
    const { stat } = await import('node:fs/promises');
    const root = resolve(dir);
    if (!(await stat(root).catch(() => undefined))?.isDirectory())
      throw new UsageError(
        `${dir}: not a folder (htorder ui shows a drop folder or a folder of inputs and their reports)`,
      );
    if (typeof opts.port === 'string') parsePort(opts.port, '--port');
    const { resolveSettings } = await import('../../core/config/resolve-settings.js');
    const { startDashboard } = await import('../../ui/dashboard.js');
    const { cannotListen, isListenError } = await import('../../core/limited-server.js');
    const { dropLayout } = await import('../../watch/sources/model.js');
    const flags = {
      ...configFlagsFrom(opts),
      ...(typeof opts.port === 'string' ? { uiPort: opts.port } : {}),
      ...(typeof opts.host === 'string' ? { uiHost: opts.host } : {}),
    };
    const settings = resolveSettings({ env: process.env, flags, cwd: process.cwd() });
    const host = settings.get('uiHost');
    const port = settings.get('uiPort') ?? 0;
    let dashboard: Awaited<ReturnType<typeof startDashboard>>;
    try {
      dashboard = await startDashboard({
        root,
        layout: dropLayout(settings),
        port,
        host,
        token: settings.get('uiToken'),
      });
    } catch (err) {
      if (!isListenError(err)) throw err;
      process.stderr.write(`htorder ui: ${cannotListen({ host, port }, '--host, --port; uiHost, uiPort', err)}\n`);
      process.exitCode = ExitCode.Usage;
      return;
    }
    const { stopped } = untilStopped();
    process.stdout.write(`${dashboard.openUrl}\n`);
    await stopped;
    await dashboard.close();
    process.exitCode = ExitCode.Ok;
  });
}
