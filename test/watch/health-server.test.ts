import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { instrumentApi } from '../../src/watch/api-instrumentation.js';
import { startHealthServer, type HealthServer, type HealthState } from '../../src/watch/health-server.js';
import { WatchMetrics } from '../../src/watch/metrics.js';

let health: HealthServer | undefined;
afterEach(async () => {
  await health?.close();
  health = undefined;
});

describe('health server', () => {
  it('answers /healthz 200 while ok and 503 while stopping; /metrics in Prometheus format', async () => {
    const metrics = new WatchMetrics({ processMetrics: false });
    let state: HealthState = { status: 'ok', processed: 3 };
    health = await startHealthServer({ port: 0, registry: metrics.registry, health: () => state });
    let res = await fetch(`${health.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', processed: 3 });
    state = { status: 'stopping' };
    res = await fetch(`${health.url}/healthz`);
    expect(res.status).toBe(503);
    metrics.files.inc({ outcome: 'done' });
    res = await fetch(`${health.url}/metrics`);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(await res.text()).toContain('htorder_watch_files_total{outcome="done"} 1');
    expect((await fetch(`${health.url}/other`)).status).toBe(404);
    expect((await fetch(`${health.url}/healthz`, { method: 'POST' })).status).toBe(405);
  });
});

describe('API instrumentation', () => {
  it('counts requests to the configured origins only, by method and status, and connection errors', async () => {
    const server = createServer((req, res) => res.writeHead(req.url === '/fail' ? 503 : 200).end('x'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const other = createServer((_req, res) => res.end('y'));
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const elsewhere = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    const metrics = new WatchMetrics({ processMetrics: false });
    const stop = instrumentApi(metrics, [`${api}/us/api`]);
    try {
      // Each origin twice: the second time its answer (ours or not) is the remembered one.
      for (let i = 0; i < 2; i++) {
        await (await request(`${api}/ok`)).body.text();
        await (await request(`${elsewhere}/ok`)).body.text();
      }
      await (await request(`${api}/fail`, { method: 'POST' })).body.text();
      const text = await metrics.registry.metrics();
      expect(text).toContain('htorder_api_requests_total{method="GET",status="200"} 2');
      expect(text).toContain('htorder_api_requests_total{method="POST",status="503"} 1');
      expect(text).toContain('htorder_api_errors_total{kind="http-5xx"} 1');
      expect(text).toContain('htorder_api_request_duration_seconds_count{method="GET"} 2');
    } finally {
      stop();
      server.close();
      other.close();
    }
  });
});
