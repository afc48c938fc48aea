import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClientOptions } from '../../src/api/client.js';
import { ApiError } from '../../src/api/errors.js';
import { DEADLINE_CODE, TOO_LARGE_CODE } from '../../src/api/http.js';
import type { JobCandidate } from '../../src/api/types.js';
import { caught } from '../support/api-errors.js';
import { json, loopbackConfig, startLoopback, tokenReply, type Handler } from '../support/loopback-server.js';

const FAST: ApiClientOptions = { retry: { baseDelayMs: 1, maxDelayMs: 5, maxAttempts: 2 } };
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await (cleanups.pop() as () => Promise<void>)();
});

async function server(api: Handler, overrides = {}) {
  let tokens = 0;
  const srv = await startLoopback((req, res) => {
    if (req.url.startsWith('/auth/')) return tokenReply(res, ++tokens);
    return api(req, res);
  });
  const client = createApiClient(loopbackConfig(srv.url, overrides), FAST);
  cleanups.push(
    () => srv.close(),
    () => client.close(),
  );
  return { srv, client };
}

const CANDIDATE = { orderNumber: 'PO-1' } as unknown as JobCandidate;

describe('a create answer that cannot be read is in doubt, never a TypeError or a silent success', () => {
  const cases: Array<[string, Handler, string]> = [
    ['null', (_r, res) => json(res, 200, null), 'empty or null'],
    [
      'a non-JSON 200',
      (_r, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>ok</html>'),
      'not JSON',
    ],
    ['an empty 201', (_r, res) => res.writeHead(201).end(), 'empty or null'],
    ['JSON without a job number', (_r, res) => json(res, 200, { ok: true }), 'no job number'],
    ['a job number that is not a number', (_r, res) => json(res, 200, { jobNumber: '70001' }), 'no job number'],
  ];
  for (const [name, handler, why] of cases) {
    it(`${name}: ApiError, may have reached the server, with a message saying what happens next`, async () => {
      const { client, srv } = await server(handler);
      const err = await caught(client.jobs.create(CANDIDATE));
      expect(err).toBeInstanceOf(ApiError);
      const e = err as ApiError;
      expect(e.mayHaveReachedServer).toBe(true);
      expect(e.message).toContain(why);
      expect(e.message).toContain('looked up by its order number');
      // Never resent by the client itself: exactly one POST.
      expect(srv.seen.filter((r) => r.method === 'POST' && r.url === '/api/Jobs')).toHaveLength(1);
    });
  }

  it('a readable answer passes, a malformed line list is dropped rather than failing a created job', async () => {
    const { client } = await server((_r, res) => json(res, 200, { jobNumber: 70001, jobLineDetails: 'x' }));
    const answer = await client.jobs.create(CANDIDATE);
    expect(answer.jobNumber).toBe(70001);
    expect(answer.jobLineDetails).toEqual([]);
  });
});

describe('every exchange has an overall deadline and a size cap', () => {
  it('a body dripped one byte at a time stops at the deadline (the between-chunks timeout never trips)', async () => {
    const timers: NodeJS.Timeout[] = [];
    const { client } = await server(
      (_r, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('[');
        timers.push(setInterval(() => res.write(' '), 50));
      },
      { timeouts: { connectMs: 2000, headersMs: 2000, bodyMs: 2000, deadlineMs: 400 } },
    );
    cleanups.push(async () => timers.forEach(clearInterval));
    const started = Date.now();
    const err = (await caught(client.lookups.jobStatuses())) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.kind).toBe('timeout');
    expect(err.code).toBe(DEADLINE_CODE);
    expect(err.message).toContain('requestDeadlineMs');
    // Two attempts (a GET is retried once here), each cut at 400 ms.
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('a create that trickles is in doubt at the deadline (may have reached the server)', async () => {
    const timers: NodeJS.Timeout[] = [];
    const { client } = await server(
      (_r, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        timers.push(setInterval(() => res.write(' '), 50));
      },
      { timeouts: { connectMs: 2000, headersMs: 2000, bodyMs: 2000, deadlineMs: 300 } },
    );
    cleanups.push(async () => timers.forEach(clearInterval));
    const err = (await caught(client.jobs.create(CANDIDATE))) as ApiError;
    expect(err.code).toBe(DEADLINE_CODE);
    expect(err.mayHaveReachedServer).toBe(true);
  });

  it('a streamed body past the cap is refused before it is all read, and not retried', async () => {
    let sent = 0;
    const { client, srv } = await server(
      (_r, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        const pump = (): void => {
          while (sent < 50 * 1024 * 1024) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('close', () => res.removeAllListeners('drain'));
        pump();
      },
      { maxResponseBytes: 1024 * 1024 },
    );
    const err = (await caught(client.lookups.jobStatuses())) as ApiError;
    expect(err.code).toBe(TOO_LARGE_CODE);
    expect(err.message).toContain('maxResponseBytes');
    expect(srv.seen.filter((r) => r.url.startsWith('/api/'))).toHaveLength(1);
    expect(sent).toBeLessThan(50 * 1024 * 1024);
  });

  it('a declared Content-Length past the cap is refused at once', async () => {
    const { client } = await server(
      (_r, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(10 * 1024 * 1024) });
        res.write('[');
      },
      { maxResponseBytes: 1024 },
    );
    const err = (await caught(client.lookups.jobStatuses())) as ApiError;
    expect(err.code).toBe(TOO_LARGE_CODE);
  });
});
