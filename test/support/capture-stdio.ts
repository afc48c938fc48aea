import { afterEach, beforeEach, vi } from 'vitest';

/**
 * Captures what an in-process `runCli` writes to stdout and stderr, per test, and resets
 * process.exitCode afterwards. Call once at the top of a test file; read `io.out` / `io.err`.
 */
export function captureStdio(): { out: string; err: string } {
  const io = { out: '', err: '' };
  beforeEach(() => {
    io.out = '';
    io.err = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      io.out += String(chunk);
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      io.err += String(chunk);
      return true;
    });
  });
  afterEach(() => {
    vi.restoreAllMocks();
    process.exitCode = undefined;
  });
  return io;
}
