import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../src/api/client.js';
import { extend } from '../../src/core/extend.js';
import { sandboxConfig } from '../../src/core/config/sandbox-config.js';
import { loadManifest } from '../../src/manifest/load-manifest.js';
import type { Manifest } from '../../src/manifest/model.js';
import { contentKey, contentKeyOf } from '../../src/pipeline/guard-notes.js';
import type { JobState } from '../../src/pipeline/job-state.js';
import { requestHash } from '../../src/pipeline/saved-plan.js';
import type { StageContext } from '../../src/pipeline/stages/context.js';
import { keepResolution, resolveAgain } from '../../src/pipeline/stages/resolve.js';
import { createCatalogue } from '../../src/resolve/catalogue.js';
import { resolveJob } from '../../src/resolve/resolve-job.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';

/**
 * A ready job keeps only its request's fingerprint from the end of its plan stages, and is
 * resolved again to be sent: the request sent must be the very one resolved first (the plain
 * path, which kept it whole), for every kind of line; and a request that would differ is never
 * sent. Real client, real sandbox, real loader; jobs drawn at random from a fixed seed.
 */
const NOW = new Date('2026-03-02T15:00:00Z');
const ADDRESS =
  '{ deliveryMethod: UPS Ground, contactName: Ana, streetAddress: 1 Main St, city: Austin, state: Texas, postalCode: "78701", country: United States }';
const LINES = [
  (q: number) => `{ itemType: Asset, code: A10001, quantity: ${q} }`,
  (q: number) =>
    `{ itemType: PriceCode, code: 'DTF Full Color 10" x 10"', quantity: ${q}, customerReference: f${q}, attributes: { Colors: "${1 + (q % 4)}" } }`,
  (q: number) =>
    `{ itemType: PriceCode, code: DTF Custom Size, quantity: ${q}, customerReference: s${q}, attributes: { Colors: "2", DG-X: "${5 + (q % 7)}", DG-Y: "12" } }`,
  (q: number) => `{ itemType: Stock, code: GD5000, variantCode: GD5000-BLK, sizeQuantities: { S: ${q}, M: ${q + 1} } }`,
  (q: number) =>
    `{ itemType: Stock, code: PRESS-16-STD, variantCode: PRESS-16-STD, sizeQuantities: { Qty: ${1 + (q % 3)} } }`,
];
const EXTRAS = ['', 'promocode: SPRING10', 'dateDue: "2026-03-20"', 'description: rush, please'];

let sandbox: Sandbox;
let client: ApiClient;
let dir: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, now: NOW });
  client = createApiClient(sandboxConfig(sandbox, 'us-demo'), {
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
  });
  dir = await mkdtemp(join(tmpdir(), 'htorder-kept-'));
});
afterAll(async () => {
  await client.close();
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
});

/** A manifest of `count` jobs drawn from LINES and EXTRAS with a small deterministic generator. */
async function randomManifest(count: number, seed: number): Promise<Manifest> {
  let state = seed;
  const next = (n: number) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state % n;
  };
  const jobs: string[] = [];
  for (let j = 0; j < count; j++) {
    const lines = Array.from({ length: 1 + next(5) }, () => `      - ${LINES[next(LINES.length)]?.(10 + next(90))}`);
    const extra = EXTRAS[next(EXTRAS.length)];
    jobs.push(
      `  - orderNumber: PO-${j}\n${extra ? `    ${extra}\n` : ''}    deliveryAddress: ${ADDRESS}\n    items:\n${lines.join('\n')}`,
    );
  }
  const file = join(dir, `m${seed}.yaml`);
  await writeFile(file, `version: 1\njobs:\n${jobs.join('\n')}\n`);
  const loaded = await loadManifest(file);
  expect(loaded.diagnostics.filter((d) => d.severity === 'error')).toEqual([]);
  return loaded.manifest as Manifest;
}

function readyState(manifest: Manifest, index: number, resolved: JobState['resolved']): JobState {
  if (!resolved) throw new Error('no resolution');
  const orderNumber = manifest.jobs[index]?.orderNumber ?? '';
  return { index, orderNumber, hash: 'h', outcome: 'ready', resolved, diagnostics: [], unavailable: false };
}

describe('a kept resolution', () => {
  it('is resolved again into the very request the plain path sends, for every kind of job', async () => {
    for (const seed of [1, 2, 3]) {
      const manifest = await randomManifest(25, seed);
      const catalogue = createCatalogue(client);
      const ctx = { manifest, catalogue } as unknown as StageContext;
      for (let i = 0; i < manifest.jobs.length; i++) {
        const first = await resolveJob(manifest, i, catalogue);
        expect(
          first.diagnostics.filter((d) => d.severity === 'error'),
          `seed ${seed} job ${i}`,
        ).toEqual([]);
        const kept = keepResolution(readyState(manifest, i, first));
        const held = kept.resolved;
        expect(held && 'kept' in held && !('candidate' in held), 'the request is not held').toBe(true);
        expect(held && 'kept' in held ? held.request : undefined).toBe(requestHash(first));
        expect(held && 'kept' in held ? held.content : undefined).toBe(contentKey(first.candidate));
        expect(held?.estimate.total).toBe(first.estimate.total);
        expect(held?.estimate.currency).toBe(first.estimate.currency);
        const again = await resolveAgain(kept, ctx);
        const sent = again.resolved && 'candidate' in again.resolved ? again.resolved.candidate : undefined;
        // The same bytes on the wire: the client sends JSON.stringify of the candidate.
        expect(JSON.stringify(sent), `seed ${seed} job ${i}`).toBe(JSON.stringify(first.candidate));
      }
    }
  });

  it('hands the request resolved again the content key its parking kept, not one computed anew', async () => {
    const manifest = await randomManifest(2, 5);
    const catalogue = createCatalogue(client);
    const first = await resolveJob(manifest, 0, catalogue);
    const kept = keepResolution(readyState(manifest, 0, first));
    if (!kept.resolved || !('kept' in kept.resolved)) throw new Error('not kept');
    // A key no request has: only the handing on gives it to the submit's content index entry.
    const handed = extend(kept, { resolved: { ...kept.resolved, content: 'f'.repeat(32) } });
    const again = await resolveAgain(handed, { manifest, catalogue } as unknown as StageContext);
    if (!again.resolved || !('candidate' in again.resolved)) throw new Error('not resolved again');
    expect(contentKeyOf(again.resolved.candidate)).toBe('f'.repeat(32));
    expect(contentKey(again.resolved.candidate)).toBe(kept.resolved.content);
  });

  it('is never sent when resolving it again gives another request', async () => {
    const manifest = await randomManifest(3, 7);
    const catalogue = createCatalogue(client);
    const first = await resolveJob(manifest, 1, catalogue);
    const kept = keepResolution(readyState(manifest, 1, first));
    const line = manifest.jobs[1]?.items[0];
    if (!line) throw new Error('no line');
    if (line.sizeQuantities) line.sizeQuantities = { ...line.sizeQuantities, S: 999 };
    else line.quantity = (line.quantity ?? 0) + 1;
    await expect(resolveAgain(kept, { manifest, catalogue } as unknown as StageContext)).rejects.toThrow(
      /is not the request its dry run validated: not sent/,
    );
  });

  it('keeps a job whose links were made from artwork files whole', async () => {
    const manifest = await randomManifest(1, 9);
    const first = await resolveJob(manifest, 0, createCatalogue(client));
    const withArtwork = { ...first, artworkKeys: { 0: 'a'.repeat(64) } };
    const job = readyState(manifest, 0, withArtwork);
    expect(keepResolution(job)).toBe(job);
  });
});
