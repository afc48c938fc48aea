/** What a command reads and writes besides its files: in-process callers (tests, the demo) pass their own. */
export interface CommandIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  cwd: string;
}
