/**
 * Diagnostics of one file, at most MAX_DIAGNOSTICS_PER_CODE of each code: most problems in a
 * huge file repeat, and the first ones of each kind are what helps. The rest are counted and
 * summed up in one line per code.
 */
import type { Diagnostic } from '../model.js';

export const MAX_DIAGNOSTICS_PER_CODE = 1000;

export class CappedDiagnostics {
  private readonly kept: Diagnostic[] = [];
  private readonly perCode = new Map<string, number>();

  constructor(private readonly file: string) {}

  report(d: Diagnostic): void {
    const n = (this.perCode.get(d.code) ?? 0) + 1;
    this.perCode.set(d.code, n);
    if (n <= MAX_DIAGNOSTICS_PER_CODE) this.kept.push(d);
  }

  /** The diagnostics kept, then one "… and N more" line per code over the cap. */
  finish(): Diagnostic[] {
    for (const [code, n] of this.perCode) {
      if (n > MAX_DIAGNOSTICS_PER_CODE) {
        this.kept.push({
          severity: 'error',
          code,
          message:
            `… and ${n - MAX_DIAGNOSTICS_PER_CODE} more ${code} problems ` +
            `(only the first ${MAX_DIAGNOSTICS_PER_CODE} are listed)`,
          source: { file: this.file },
        });
      }
    }
    return this.kept;
  }
}
