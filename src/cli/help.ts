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

/** `--sandbox-reset`, spelt once for every command that takes --sandbox. */
export const SANDBOX_RESET_HELP =
  "with --sandbox: start over, forgetting the sandbox's jobs (kept in the state dir) and their ledger entries";
