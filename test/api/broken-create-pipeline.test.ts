import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PipelineHarness } from '../support/pipeline-harness.js';
import { ITEMS, manifest } from '../support/yaml-manifests.js';

/**
 * `htorder run` against the real sandbox, through a loopback proxy that lets each real create
 * happen and then replaces its answer: the job exists, the answer cannot be read. The pipeline
 * must settle it by search: exactly one job, reported submitted with its job number.
 */
let h: PipelineHarness;
let proxy: Server;
let proxyOrigin = '';
/** What the next real creates are answered with (undefined: the sandbox's own answer). */
let breakCreate: ((res: import('node:http').ServerResponse) => void) | undefined;

beforeAll(async () => {
  h = await PipelineHarness.start();
  const target = new URL(h.env().HTORDER_BASE_URL).origin;
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      const headers = { ...req.headers } as Record<string, string>;
      delete headers.host;
      delete headers['content-length'];
      const answer = await fetch(`${target}${req.url}`, {
        method: req.method,
        headers,
        ...(body.length > 0 ? { body } : {}),
      });
      const text = await answer.text();
      const isCreate =
        req.method === 'POST' && /\/Jobs$/.test(req.url ?? '') && JSON.parse(body.toString()).validateOnly === false;
      if (isCreate && answer.ok && breakCreate) return breakCreate(res);
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
      res.end(text);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyOrigin = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(async () => {
  proxy.closeAllConnections();
  await new Promise<void>((resolve) => proxy.close(() => resolve()));
  await h.close();
});
beforeEach(async () => {
  breakCreate = undefined;
  await h.reset();
});

function viaProxy(): Record<string, string> {
  const base = new URL(h.env().HTORDER_BASE_URL);
  return { HTORDER_BASE_URL: `${proxyOrigin}${base.pathname}`.replace(/\/$/, '') };
}

const BROKEN: Array<[string, (res: import('node:http').ServerResponse) => void]> = [
  ['null', (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('null')],
  ['a non-JSON 200', (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('Created OK')],
  ['JSON without a job number', (res) => res.writeHead(201, { 'content-type': 'application/json' }).end('{}')],
];

describe('htorder run: a create answer that cannot be read is settled by search', () => {
  for (const [name, reply] of BROKEN) {
    it(`${name}: exactly one job, reported submitted with its job number`, async () => {
      breakCreate = reply;
      const file = await h.write('order.yaml', manifest([{ orderNumber: 'PO-BROKEN-1', items: ITEMS.reorder }]));
      const { code, stderr } = await h.cli('run', [file], { env: viaProxy() });
      const created = await h.sandbox.admin.jobs();
      expect(created).toHaveLength(1);
      const report = await h.report(file);
      expect(report.jobs[0]).toMatchObject({ status: 'submitted', jobNumber: created[0]?.jobNumber });
      expect(code).toBe(0);
      expect(stderr).not.toContain('TypeError');
      expect(stderr).not.toContain('Cannot read properties');
    });
  }
});
