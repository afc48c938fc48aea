import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sandboxEnv } from '../../src/core/config/sandbox-config.js';
import { runPipelineCommand, type PipelineCommandInput } from '../../src/cli/run-pipeline.js';
import type { ResultReport } from '../../src/report/model.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { WINDOWED_FROM_BYTES, windowedRead } from '../../src/manifest/load-manifest.js';
import { sink } from './sink.js';

/**
 * A test file's harness, started once and reset before each test, whose windowed read is put
 * back as it was after each (tests force it on small files): read it as `harness()` in a test.
 */
export function windowedHarness(): () => PipelineHarness {
  let h: PipelineHarness | undefined;
  beforeAll(async () => {
    h = await PipelineHarness.start();
  });
  afterAll(async () => h?.close());
  beforeEach(async () => h?.reset());
  afterEach(() => {
    windowedRead.fromBytes = WINDOWED_FROM_BYTES;
    windowedRead.windowJobs = undefined;
  });
  return () => {
    if (h === undefined) throw new Error('the harness starts in beforeAll');
    return h;
  };
}

/**
 * Runs `htorder plan|run` in-process (the real CLI driver, client, ledger and reports)
 * against a real sandbox on loopback, the way a user's shell would with HTORDER_* set.
 */
export class PipelineHarness {
  stateDir = '';
  workDir = '';

  private constructor(readonly sandbox: Sandbox) {}

  static async start(opts: { tokenTtlSeconds?: number; fetchArtwork?: boolean } = {}): Promise<PipelineHarness> {
    return new PipelineHarness(await startSandbox({ port: 0, ...opts }));
  }

  /** A fresh sandbox state, ledger and working folder: each test starts from nothing. */
  async reset(): Promise<void> {
    await this.sandbox.admin.reset();
    await this.sandbox.admin.clearFaults();
    await this.sandbox.admin.resetCalls();
    this.stateDir = await mkdtemp(join(tmpdir(), 'htorder-state-'));
    this.workDir = await mkdtemp(join(tmpdir(), 'htorder-work-'));
  }

  env(account = 'us-demo'): Record<string, string> {
    // Fixtures link artwork to a fictional CDN: artwork tests turn the check on (test/pipeline/artwork.test.ts).
    return {
      ...sandboxEnv(this.sandbox, account),
      HTORDER_STATE_DIR: this.stateDir,
      HTORDER_LOG_LEVEL: 'silent',
      HTORDER_ARTWORK_CHECK: 'off',
      // Tests submit the same content under many order numbers: no suspected duplicates unless a test asks.
      HTORDER_DUPLICATE_WINDOW: '0',
    };
  }

  async write(name: string, text: string): Promise<string> {
    const path = join(this.workDir, name);
    await writeFile(path, text);
    return path;
  }

  async cli(
    command: 'plan' | 'run',
    files: string[],
    opts: Partial<Omit<PipelineCommandInput, 'command' | 'files'>> & { env?: Record<string, string> } = {},
  ): Promise<{ code: number; stdout: string; stderr: string }> {
    const out = sink();
    const err = sink();
    const { env, ...rest } = opts;
    const code = await runPipelineCommand(
      { command, files, flags: {}, ...rest },
      { stdout: out.stream, stderr: err.stream, env: { ...this.env(), ...env }, cwd: this.workDir },
    );
    return { code, stdout: out.text(), stderr: err.text() };
  }

  async report(file: string): Promise<ResultReport> {
    return JSON.parse(await readFile(`${file}.result.json`, 'utf8')) as ResultReport;
  }

  async close(): Promise<void> {
    await this.sandbox.close();
  }
}
