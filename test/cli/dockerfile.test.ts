import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ROOT, requireDist } from '../support/dist.js';

/**
 * `npm test` needs no container engine (CI builds and runs the image: .ci/image-test.sh). What
 * is checked without one: the Dockerfile's shape (stages, user, entry point, volume), that the
 * build context keeps what the COPY lines need and the image holds what the package ships, and —
 * for real — that the HEALTHCHECK command judges a running `htorder watch` correctly, with the
 * port taken from HTORDER_HEALTH_PORT as in the image.
 */
const DOCKERFILE = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const IGNORE = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));

/** Instructions with continuation lines joined and comments dropped. */
const instructions = DOCKERFILE.replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
const finalStage = instructions.slice(
  instructions
    .map((l, i) => (l.startsWith('FROM ') ? i : -1))
    .filter((i) => i >= 0)
    .at(-1),
);

function healthcheckArgv(): string[] {
  const hc = finalStage.find((l) => l.startsWith('HEALTHCHECK '));
  const m = /\bCMD\s+(\[.*\])\s*$/.exec(hc ?? '');
  if (!m) throw new Error('HEALTHCHECK CMD in exec form not found');
  return JSON.parse(m[1]) as string[];
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

describe('Dockerfile', () => {
  it('is multi-stage on a slim Node base and runs htorder as a non-root user', () => {
    const froms = instructions.filter((l) => l.startsWith('FROM '));
    expect(froms.length).toBeGreaterThanOrEqual(2);
    // Every stage starts from the slim Node base or from an earlier stage.
    const stages = new Set<string>();
    for (const f of froms) {
      const [, from = '', as] = /^FROM (\S+)(?: AS (\S+))?$/i.exec(f) ?? [];
      expect(stages.has(from) || /^node:20-[a-z]+-slim$/.test(from), f).toBe(true);
      if (as) stages.add(as);
    }
    expect(finalStage.filter((l) => l.startsWith('USER ')).at(-1)).toBe('USER node');
    expect(finalStage).toContain('ENTRYPOINT ["htorder"]');
    expect(finalStage.find((l) => l.startsWith('VOLUME '))).toContain('/data');
    expect(finalStage.find((l) => l.startsWith('ENV '))).toMatch(/HTORDER_STATE_DIR=\/data\/state/);
    // Secrets come from files: never baked into the image.
    expect(DOCKERFILE).not.toMatch(/HTORDER_CLIENT_SECRET=/);
  });

  it("the build stage installs every type package the build's TypeScript needs (the development tree is not there)", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    const types = Object.keys(pkg.devDependencies).filter((n) => n.startsWith('@types/'));
    const listed = /\[('[^\]]*')\]\.map\(\(n\)=>n\+'@'/.exec(DOCKERFILE)?.[1] ?? '';
    expect(types.filter((t) => !listed.includes(`'${t}'`))).toEqual([]);
    expect(listed).toContain("'typescript'");
  });

  it('every COPY source exists and is not excluded by .dockerignore', () => {
    const sources = instructions
      .filter((l) => l.startsWith('COPY ') && !l.includes('--from='))
      .flatMap((l) =>
        l
          .replace(/--chown=\S+/, '')
          .split(/\s+/)
          .slice(1, -1),
      );
    expect(sources.length).toBeGreaterThan(5);
    for (const s of sources) {
      expect(existsSync(join(ROOT, s)), s).toBe(true);
      expect(IGNORE, s).not.toContain(s.replace(/\/$/, ''));
    }
  });

  it('copies into the image everything the package ships (package.json "files")', () => {
    const shipped = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { files: string[] }).files.filter(
      (f) => !f.startsWith('!'),
    );
    const copied = finalStage
      .filter((l) => l.startsWith('COPY '))
      .flatMap((l) => {
        const parts = l.split(/\s+/).filter((p) => !p.startsWith('--'));
        const sources = parts.slice(1, -1).map((p) => p.replace(/^\/app\//, '').replace(/\/$/, ''));
        return l.includes('--from=') ? [parts.at(-1)?.replace(/^\.\//, '') ?? ''] : sources;
      });
    for (const f of shipped) expect(copied, f).toContain(f);
  });

  describe('HEALTHCHECK against a real watcher', () => {
    let drop = '';
    let port = 0;
    let watcher: ReturnType<typeof spawn> | undefined;

    beforeAll(async () => {
      requireDist();
      drop = await mkdtemp(join(tmpdir(), 'htorder-docker-health-'));
      port = await freePort();
      // As in the image: the port comes from the environment, not from a flag.
      watcher = spawn(process.execPath, [CLI, 'watch', '--sandbox', drop], {
        env: { ...process.env, HTORDER_HEALTH_PORT: String(port), HTORDER_LOG_LEVEL: 'warn' },
        stdio: 'ignore',
      });
      const until = Date.now() + 20_000;
      for (;;) {
        const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.ok,
          () => false,
        );
        if (ok) break;
        if (Date.now() > until) throw new Error('watch did not serve /healthz from HTORDER_HEALTH_PORT');
        await new Promise((r) => setTimeout(r, 100));
      }
    }, 30_000);

    afterAll(async () => {
      watcher?.kill('SIGTERM');
      await rm(drop, { recursive: true, force: true });
    });

    const check = (healthPort: number): number | null => {
      const [cmd, ...args] = healthcheckArgv();
      expect(cmd).toBe('node');
      return spawnSync(process.execPath, args, {
        env: { ...process.env, HTORDER_HEALTH_PORT: String(healthPort) },
        timeout: 10_000,
      }).status;
    };

    it('passes while the watcher answers /healthz', () => {
      expect(check(port)).toBe(0);
    });

    it('fails when a watcher runs but its health port does not answer', async () => {
      expect(check(await freePort())).toBe(1);
    });
  });
});
