import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Ajv } from 'ajv';
import { beforeAll, describe, expect, it } from 'vitest';
import { prebuiltValidator } from '../../src/core/standalone-validator.js';
import type { Sandbox, SandboxSnapshot, SandboxStateStore } from '../../src/sandbox/index.js';
import { SNAPSHOT_AJV_OPTIONS, SNAPSHOT_SCHEMA, SNAPSHOT_STANDALONE_FILE } from '../../src/sandbox/snapshot.js';
import { DIST, requireDist } from '../support/dist.js';
import { Caller, dtfLine, start, usJob } from '../support/sandbox-http.js';

/**
 * `npm run build` writes the sandbox's snapshot validator as ajv standalone code into dist, so a
 * `--sandbox` process restores its saved state without compiling the schema. It must be the
 * current schema's and judge a state exactly as the schema compiled at run time does, unknown
 * properties dropped alike. The built file exists only in dist/, so this reads it there.
 */
const BUILT = pathToFileURL(join(DIST, 'sandbox', SNAPSHOT_STANDALONE_FILE));

/** A real saved state: a sandbox that took a job with a new print, saved through an in-memory store. */
async function savedState(): Promise<SandboxSnapshot> {
  let saved: SandboxSnapshot | undefined;
  const store: SandboxStateStore = {
    readIfChanged: async () => ({ kind: 'none' }),
    withLock: (fn) => fn(),
    write: async (s) => {
      saved = s;
    },
  };
  const sb: Sandbox = await start({ state: store });
  try {
    const posted = await new Caller(sb, 'us-demo').post('/Jobs', usJob({ items: [dtfLine()] }));
    expect(posted.status, posted.text).toBe(201);
  } finally {
    await sb.close();
  }
  return structuredClone(saved) as SandboxSnapshot;
}

beforeAll(() => requireDist());

describe('the snapshot validator generated at build time', () => {
  it('is taken at run time: the build stamped it with the schema in the sources', () => {
    expect(prebuiltValidator(BUILT, SNAPSHOT_SCHEMA)).toBeDefined();
    expect(prebuiltValidator(BUILT, { ...SNAPSHOT_SCHEMA, title: 'another' })).toBeUndefined();
  });

  it('gives the verdict, the errors and the dropped properties of the schema compiled at run time', async () => {
    const built = prebuiltValidator<SandboxSnapshot>(BUILT, SNAPSHOT_SCHEMA);
    if (built === undefined) throw new Error('the built validator was not taken');
    const compiled = new Ajv(SNAPSHOT_AJV_OPTIONS).compile<SandboxSnapshot>(SNAPSHOT_SCHEMA);
    const good = await savedState();
    const changes: ((s: any) => void)[] = [
      () => undefined,
      (s) => (s.planted = { path: '/etc/passwd' }),
      (s) => (s.customers[0].jobs[0].extra = 'dropped'),
      (s) => (s.customers[0].jobs[0].status = 5),
      (s) => delete s.customers[0].jobs[0].lines,
      (s) => (s.nextJobNumber = 2 ** 60),
      (s) => (s.created[0].headers['7'] = 7),
      (s) => (s.customers = 'none'),
    ];
    let refused = 0;
    for (const change of changes) {
      const a = structuredClone(good);
      const b = structuredClone(good);
      change(a);
      change(b);
      const ok = built(a);
      expect(ok).toBe(compiled(b));
      expect(built.errors ?? null).toEqual(compiled.errors ?? null);
      expect(a).toEqual(b);
      if (!ok) refused++;
    }
    expect(refused).toBe(5);
    const planted = structuredClone(good) as SandboxSnapshot & { planted?: unknown };
    planted.planted = 1;
    expect(built(planted)).toBe(true);
    expect(planted).not.toHaveProperty('planted');
  });
});
