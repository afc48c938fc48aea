/** Exit codes (docs/commands.md#exit-codes). Scripts rely on these; never renumber. */
export const ExitCode = {
  /** Every job valid (check/plan) or submitted / already submitted (run). */
  Ok: 0,
  /** At least one input or job invalid or refused; the reports say which. */
  Invalid: 1,
  /** Usage or configuration error: bad flag, missing credentials, unreadable mapping. */
  Usage: 2,
  /** API or store unreachable, or credentials refused; nothing was decided, retry later. */
  Unavailable: 3,
  /** Nothing failed, but jobs wait for approval (docs/guardrails.md): a code scripts can alert on. */
  AwaitingApproval: 4,
  /**
   * An internal error: a bug (an exception nobody caught), sysexits' EX_SOFTWARE. What was sent
   * is in the ledger, and a later run never sends it twice.
   */
  Internal: 70,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** Thrown at the CLI edge for exit code 2; the message names the flag or variable. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * A store htorder cannot work without (the ledger's database) could not be reached within its
 * wait, or refused the credentials: nothing was decided, exit 3 like an unreachable API. The
 * message names the store, never its password.
 */
export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}
