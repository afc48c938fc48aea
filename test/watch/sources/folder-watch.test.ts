import { existsSync } from 'node:fs';
import { appendFile, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { startWatch, waitFor, watchFixture } from '../../support/watch-harness.js';
import { manifest } from '../../support/yaml-manifests.js';

const fx = watchFixture('htorder-watch-');

const ls = async (sub = ''): Promise<string[]> => (await readdir(join(fx.drop.path, sub)).catch(() => [])).sort();
const jobsOf = async (): Promise<string[]> => (await fx.sandbox.admin.jobs()).map((j) => j.orderNumber ?? '?').sort();

describe('htorder watch DIR', () => {
  it('runs a dropped manifest exactly once and moves it with its reports to done/', async () => {
    const w = await startWatch({ target: fx.drop.path }, fx.env);
    try {
      await writeFile(join(fx.drop.path, 'a.yaml'), manifest('A', 2));
      await waitFor(async () => ((await ls('done')).includes('a.yaml') ? true : undefined), 'a.yaml in done/');
      expect(await ls('done')).toEqual(['a.yaml', 'a.yaml.result.csv', 'a.yaml.result.json']);
      expect(await ls()).toEqual(['.htorder-ledger', 'done', 'failed', 'held', 'processing']);
      const report = JSON.parse(await readFile(join(fx.drop.path, 'done', 'a.yaml.result.json'), 'utf8'));
      expect(report.command).toBe('watch');
      expect(report.input.file).toBe(join(fx.drop.path, 'done', 'a.yaml'));
      expect(report.jobs.map((j: { status: string }) => j.status)).toEqual(['submitted', 'submitted']);
      expect(await jobsOf()).toEqual(['A-1', 'A-2']);
    } finally {
      expect(await w.stop()).toBe(0);
    }
    const lines = w.logs();
    expect(lines.filter((l) => l.msg === 'input done')).toHaveLength(1);
    expect(lines.filter((l) => l.msg === 'job outcome')).toHaveLength(2);
  });

  it('signs in and learns the account at start, once for the watcher and its first inputs', async () => {
    await fx.sandbox.admin.resetCalls();
    const w = await startWatch({ target: fx.drop.path }, fx.env);
    try {
      // Before any input: the two calls the first input would make, made while the scan settles.
      await waitFor(
        async () => ((await fx.sandbox.admin.calls())['GET /account'] === 1 ? true : undefined),
        'GET /account',
      );
      expect(await fx.sandbox.admin.calls()).toEqual({ 'POST token': 1, 'GET /account': 1 });
      await writeFile(join(fx.drop.path, 'w1.yaml'), manifest('W1'));
      await writeFile(join(fx.drop.path, 'w2.yaml'), manifest('W2'));
      await waitFor(
        async () => ((await ls('done')).filter((n) => n.endsWith('.yaml')).length === 2 ? true : undefined),
        'w1 and w2 in done/',
      );
      const calls = await fx.sandbox.admin.calls();
      expect([calls['POST token'], calls['GET /account']]).toEqual([1, 1]);
    } finally {
      expect(await w.stop()).toBe(0);
    }
  });

  it('takes a slowly written file only once it is complete', async () => {
    const w = await startWatch({ target: fx.drop.path, flags: { stableTimeMs: 500 } }, fx.env);
    try {
      const text = manifest('SLOW', 3);
      const path = join(fx.drop.path, 'slow.yaml');
      // Cut mid-line: any earlier pick-up would be a YAML error and land in failed/.
      const parts = text.match(/[\s\S]{1,40}/g)!;
      for (const part of parts) {
        await appendFile(path, part);
        await sleep(40);
        expect(await ls('processing')).toEqual([]);
      }
      await waitFor(async () => ((await ls('done')).includes('slow.yaml') ? true : undefined), 'slow.yaml in done/');
      expect(await ls('failed')).toEqual([]);
      expect(await jobsOf()).toEqual(['SLOW-1', 'SLOW-2', 'SLOW-3']);
    } finally {
      await w.stop();
    }
  });

  it('takes a file with a NAME.done marker at once, and ignores temporary and report names', async () => {
    const w = await startWatch({ target: fx.drop.path, flags: { stableTimeMs: 60_000 } }, fx.env);
    try {
      await writeFile(join(fx.drop.path, 'm.yaml.part'), manifest('PART'));
      await writeFile(join(fx.drop.path, 'x.yaml.result.json'), manifest('REPORT'));
      await writeFile(join(fx.drop.path, '.hidden.yaml'), manifest('HIDDEN'));
      await writeFile(join(fx.drop.path, 'm.yaml'), manifest('M'));
      await writeFile(join(fx.drop.path, 'm.yaml.done'), '');
      await waitFor(async () => ((await ls('done')).includes('m.yaml') ? true : undefined), 'm.yaml in done/');
      expect(await ls()).toEqual([
        '.hidden.yaml',
        '.htorder-ledger',
        'done',
        'failed',
        'held',
        'm.yaml.part',
        'processing',
        'x.yaml.result.json',
      ]);
      expect(await jobsOf()).toEqual(['M-1']);
    } finally {
      await w.stop();
    }
  });

  it('moves invalid and empty files to failed/ with their reports, keeps them there, and never overwrites', async () => {
    const w = await startWatch({ target: fx.drop.path }, fx.env);
    try {
      await writeFile(join(fx.drop.path, 'empty.yaml'), '');
      await writeFile(join(fx.drop.path, 'bad.yaml'), manifest('BAD').replace('quantity: 50', 'quantity: 0'));
      await waitFor(
        async () => ((await ls('failed')).filter((n) => n.endsWith('.yaml')).length === 2 ? true : undefined),
        'two inputs in failed/',
      );
      expect(await readFile(join(fx.drop.path, 'failed', 'empty.yaml.errors.txt'), 'utf8')).toMatch(
        /^empty\.yaml:.*empty/,
      );
      expect(await ls('failed')).toContain('bad.yaml.errors.txt');
      // The same name dropped again (still bad) goes beside the first, timestamped.
      await writeFile(join(fx.drop.path, 'bad.yaml'), manifest('BAD').replace('quantity: 50', 'quantity: 0'));
      await waitFor(
        async () => ((await ls('failed')).filter((n) => /^bad(\..+)?\.yaml$/.test(n)).length === 2 ? true : undefined),
        'second bad.yaml in failed/',
      );
      const stamped = (await ls('failed')).find((n) => /^bad\.\d{8}T\d{9}Z\.yaml$/.test(n))!;
      expect(await ls('failed')).toContain(`${stamped}.result.json`);
      await sleep(400); // several scans: failed/ is never rescanned
      expect(w.logs().filter((l) => l.msg === 'claimed input')).toHaveLength(3);
      expect(await jobsOf()).toEqual([]);
    } finally {
      await w.stop();
    }
  });

  it('refuses symbolic links instead of following them out of the folder', async () => {
    const outside = join(fx.state.path, 'outside.yaml');
    await writeFile(outside, manifest('LINK'));
    await symlink(outside, join(fx.drop.path, 'link.yaml'));
    const w = await startWatch({ target: fx.drop.path }, fx.env);
    try {
      await waitFor(
        () => (w.logs().some((l) => String(l.msg).includes('symbolic link')) ? true : undefined),
        'a warning about the link',
      );
      await sleep(300);
      expect(await ls()).toContain('link.yaml');
      expect(await jobsOf()).toEqual([]);
    } finally {
      await w.stop();
    }
  });

  it('keeps an input in processing/ while the API is unavailable and finishes it when it is back', async () => {
    await fx.sandbox.admin.setFaults([{ route: '*', kind: 'status', status: 503 }]);
    const w = await startWatch({ target: fx.drop.path }, fx.env);
    try {
      await writeFile(join(fx.drop.path, 'u.yaml'), manifest('U'));
      await waitFor(
        () => (w.logs().some((l) => String(l.msg).startsWith('API or store unavailable')) ? true : undefined),
        'a retry',
      );
      expect(await ls('processing')).toContain('u.yaml');
      expect((await ls('failed')).length).toBe(0);
      await fx.sandbox.admin.clearFaults();
      await waitFor(async () => ((await ls('done')).includes('u.yaml') ? true : undefined), 'u.yaml in done/');
      expect(await jobsOf()).toEqual(['U-1']);
    } finally {
      await w.stop();
    }
  });

  it('two watchers on one folder, several files in flight each, process every file exactly once', async () => {
    const a = await startWatch({ target: fx.drop.path, flags: { watchParallelFiles: 4 } }, fx.env);
    const b = await startWatch({ target: fx.drop.path, flags: { watchParallelFiles: 4 } }, fx.env);
    try {
      for (let i = 1; i <= 16; i++) await writeFile(join(fx.drop.path, `f${i}.yaml`), manifest(`F${i}`, 2));
      await waitFor(
        async () => ((await ls('done')).filter((n) => n.endsWith('.yaml')).length === 16 ? true : undefined),
        '16 inputs in done/',
      );
      const expected = Array.from({ length: 16 }, (_, i) => [`F${i + 1}-1`, `F${i + 1}-2`])
        .flat()
        .sort();
      expect(await jobsOf()).toEqual(expected);
      expect(await ls('done')).not.toContain(expect.stringMatching(/\d{8}T/)); // nothing handled twice
      const claims = [...a.logs(), ...b.logs()].filter((l) => l.msg === 'claimed input');
      expect(claims).toHaveLength(16);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('finishes the input in flight when stopped (SIGTERM) and then takes no more', async () => {
    await fx.sandbox.admin.setFaults([{ route: 'POST /Jobs', kind: 'latency', latencyMs: 600 }]);
    const w = await startWatch({ target: fx.drop.path }, fx.env);
    await writeFile(join(fx.drop.path, 'g.yaml'), manifest('G', 2));
    await waitFor(() => (w.logs().some((l) => l.msg === 'claimed input') ? true : undefined), 'the claim');
    const code = await w.stop();
    expect(code).toBe(0);
    expect(await ls('done')).toContain('g.yaml');
    expect(await jobsOf()).toEqual(['G-1', 'G-2']);
    await writeFile(join(fx.drop.path, 'h.yaml'), manifest('H'));
    await sleep(300);
    expect(await ls()).toContain('h.yaml');
    expect(existsSync(join(fx.drop.path, 'processing', 'h.yaml'))).toBe(false);
  });

  it('serves /healthz and Prometheus /metrics with files, jobs and API calls', async () => {
    await mkdir(join(fx.drop.path, 'sub'), { recursive: true });
    const w = await startWatch({ target: fx.drop.path, flags: { healthPort: 0 } }, fx.env);
    try {
      await writeFile(join(fx.drop.path, 'p.yaml'), manifest('P', 2));
      await waitFor(async () => ((await ls('done')).includes('p.yaml') ? true : undefined), 'p.yaml in done/');
      // The input is in done/ a moment before the watcher counts it.
      await waitFor(
        async () =>
          ((await (await fetch(`${w.healthUrl}/healthz`)).json()) as { processed: number }).processed === 1
            ? true
            : undefined,
        'p.yaml counted',
      );
      const health = await fetch(`${w.healthUrl}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'ok', location: fx.drop.path, processed: 1 });
      const text = await (await fetch(`${w.healthUrl}/metrics`)).text();
      expect(text).toMatch(/htorder_watch_files_total\{outcome="done"\} 1/);
      expect(text).toMatch(/htorder_watch_jobs_total\{status="submitted"\} 2/);
      expect(text).toMatch(/htorder_api_requests_total\{method="POST",status="200"\} [1-9]/);
      expect(text).toMatch(/htorder_watch_file_duration_seconds_count 1/);
    } finally {
      await w.stop();
    }
  });
});
