import type { Command } from 'commander';

/**
 * The "Examples:" block appended to a command's --help (commander's addHelpText('after')).
 * Each example is a command line a user can paste, then what it does on the next line,
 * so long command lines never break a column layout.
 */
export type Example = readonly [command: string, what: string];

export function examples(rows: readonly Example[]): string {
  const lines = ['', 'Examples:'];
  for (const [command, what] of rows) {
    lines.push(`  $ ${command}`);
    if (what) lines.push(`      ${what}`);
  }
  return lines.join('\n');
}

/** `--sandbox`, `--account` and `--sandbox-reset`, spelt once for every command that takes them. */
export function addSandboxOptions(
  cmd: Command,
  use = 'use its demo account',
  account = 'sandbox demo account',
): Command {
  return cmd
    .option(
      '--sandbox',
      `start an in-process sandbox and ${use} (no credentials needed; its jobs are kept in the state dir)`,
    )
    .option('--account <name>', `${account} (with --sandbox; default us-demo)`)
    .option(
      '--sandbox-reset',
      "with --sandbox: start over, forgetting the sandbox's jobs (kept in the state dir) and their ledger entries",
    );
}

/** The sandbox options as commander parsed them. */
export const sandboxOptionsFrom = (opts: Record<string, unknown>) => ({
  sandbox: opts.sandbox === true,
  account: opts.account as string | undefined,
  sandboxReset: opts.sandboxReset === true,
});
