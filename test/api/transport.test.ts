import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { createApiClient, type ApiClientOptions } from '../../src/api/client.js';
import { isNotFound, orNull } from '../../src/api/errors.js';
import { transportCause } from '../../src/api/http.js';
import { createLogger } from '../../src/core/log/logger.js';
import { VERSION } from '../../src/core/version.js';
import {
  apiRequests,
  json,
  loopbackConfig,
  SECRET,
  startLoopback,
  tokenReply,
  tokenRequests,
  type Handler,
} from '../support/loopback-server.js';
import { caught } from '../support/api-errors.js';

const FAST: ApiClientOptions = { retry: { baseDelayMs: 1, maxDelayMs: 5, maxAttempts: 4 } };
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** Loopback server whose token endpoint always works; `api` handles /api/*. */
async function server(api: Handler, overrides = {}, options: ApiClientOptions = FAST) {
  let tokens = 0;
  const srv = await startLoopback((req, res) => {
    if (req.url.startsWith('/auth/')) return tokenReply(res, ++tokens);
    return api(req, res);
  });
  const client = createApiClient(loopbackConfig(srv.url, overrides), options);
  cleanups.push(
    () => srv.close(),
    () => client.close(),
  );
  return { srv, client };
}

describe('headers and token', () => {
  it('sends the bearer token, User-Agent, X-Application-Name; the token request is form-encoded', async () => {
    const { srv, client } = await server((_req, res) => json(res, 200, []), { appName: 'ERPX' });
    await client.lookups.jobStatuses();
    const [tok] = tokenRequests(srv.seen);
    expect(tok.url).toBe('/auth/realms/test/protocol/openid-connect/token');
    expect(tok.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(tok.body))).toEqual({
      grant_type: 'client_credentials',
      client_id: 'client-1',
      client_secret: SECRET,
    });
    const [call] = apiRequests(srv.seen);
    expect(call.url).toBe('/api/Lookups/job-statuses');
    expect(call.headers.authorization).toBe('Bearer tok-1-abcdef');
    expect(call.headers['user-agent']).toBe(`htorder/${VERSION}`);
    expect(call.headers['x-application-name']).toBe('ERPX');
  });

  it('concurrent callers share one in-flight token request', async () => {
    let tokens = 0;
    const srv = await startLoopback((req, res) => {
      if (req.url.startsWith('/auth/')) {
        setTimeout(() => tokenReply(res, ++tokens), 50);
        return;
      }
      json(res, 200, []);
    });
    const client = createApiClient(loopbackConfig(srv.url), FAST);
    cleanups.push(
      () => srv.close(),
      () => client.close(),
    );
    await Promise.all(Array.from({ length: 10 }, () => client.lookups.sizeSets()));
    expect(tokenRequests(srv.seen)).toHaveLength(1);
    expect(apiRequests(srv.seen)).toHaveLength(10);
  });

  it('a 401 drops the token and retries exactly once; a second 401 is an auth error', async () => {
    const { srv, client } = await server((_req, res) => json(res, 401, { title: 'Unauthorized', status: 401 }));
    const err = await caught(client.jobs.create({ deliveryAddress: { deliveryMethod: 'UPSGND' }, items: [] }));
    expect(err.kind).toBe('auth');
    expect(err.status).toBe(401);
    expect(apiRequests(srv.seen)).toHaveLength(2);
    expect(tokenRequests(srv.seen)).toHaveLength(2);
    expect(apiRequests(srv.seen)[1].headers.authorization).toBe('Bearer tok-2-abcdef');
  });

  it('a refused token request is an auth error, not retried, without the secret in the message', async () => {
    const srv = await startLoopback((_req, res) =>
      json(res, 401, { error: 'invalid_client', error_description: 'bad credentials' }),
    );
    const client = createApiClient(loopbackConfig(srv.url), FAST);
    cleanups.push(
      () => srv.close(),
      () => client.close(),
    );
    const err = await caught(client.account.get());
    expect(err.kind).toBe('auth');
    expect(err.message).toContain('invalid_client');
    expect(err.message).not.toContain(SECRET);
    expect(JSON.stringify(err)).not.toContain(SECRET);
    expect(srv.seen).toHaveLength(1);
  });

  it('token endpoint outages are retried with backoff, then succeed', async () => {
    let tokenCalls = 0;
    const srv = await startLoopback((req, res) => {
      if (req.url.startsWith('/auth/')) {
        tokenCalls++;
        if (tokenCalls <= 2) return json(res, 503, { title: 'down' });
        return tokenReply(res, tokenCalls);
      }
      json(res, 200, { countries: [], defaultCountry: 'US' });
    });
    const sleeps: number[] = [];
    const client = createApiClient(loopbackConfig(srv.url), { ...FAST, sleep: async (ms) => void sleeps.push(ms) });
    cleanups.push(
      () => srv.close(),
      () => client.close(),
    );
    await client.lookups.countries();
    expect(tokenCalls).toBe(3);
    expect(sleeps).toHaveLength(2);
  });

  it('a token outage costs maxAttempts token requests, not maxAttempts² (the call loop does not retry it again)', async () => {
    const srv = await startLoopback((_req, res) => json(res, 503, { title: 'down' }));
    const client = createApiClient(loopbackConfig(srv.url), FAST);
    cleanups.push(
      () => srv.close(),
      () => client.close(),
    );
    const err = await caught(client.lookups.countries());
    expect(err.kind).toBe('auth');
    expect(err.status).toBe(503);
    expect(tokenRequests(srv.seen)).toHaveLength(4);
    expect(apiRequests(srv.seen)).toHaveLength(0);
  });

  it('after a failed token request the next attempt backs off first', async () => {
    const srv = await startLoopback((_req, res) => json(res, 401, { error: 'invalid_client' }));
    const sleeps: number[] = [];
    let clock = 1_000_000;
    const client = createApiClient(loopbackConfig(srv.url), {
      ...FAST,
      now: () => clock,
      sleep: async (ms) => void sleeps.push(ms),
    });
    cleanups.push(
      () => srv.close(),
      () => client.close(),
    );
    await caught(client.account.get());
    expect(sleeps).toHaveLength(0);
    await caught(client.account.get());
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThan(0);
    clock += 60_000; // long after the backoff: no wait
    await caught(client.account.get());
    expect(sleeps).toHaveLength(1);
  });
});

describe('calls in flight', () => {
  it('puts the call waiting for a slot on the wire before handing the answer that freed it back', async () => {
    // undici writes a request on a reused keep-alive connection only in the event loop's check
    // phase; the caller of the finished call must not go on (a job's ledger and report work)
    // before then, or the waiting call sits behind that work.
    const { client } = await server((_req, res) => json(res, 200, { ok: true }), { concurrency: 1 });
    await client.request({ method: 'GET', path: '/warm' }); // the connection is now a reused one
    const written: string[] = [];
    const onHeaders = (message: unknown) => {
      written.push((message as { request: { path: string } }).request.path);
    };
    subscribe('undici:client:sendHeaders', onHeaders);
    try {
      let writtenWhenFirstAnswered: string[] = [];
      const first = client.request({ method: 'GET', path: '/first' }).then(() => {
        writtenWhenFirstAnswered = [...written];
      });
      const second = client.request({ method: 'GET', path: '/second' });
      await Promise.all([first, second]);
      expect(writtenWhenFirstAnswered).toEqual(['/api/first', '/api/second']);
    } finally {
      unsubscribe('undici:client:sendHeaders', onHeaders);
    }
  });
});

describe('answers handed back in the check phase', () => {
  it('every caller gets its own answer, whatever the timing: what a plain hand-back gives', async () => {
    // The hand-back changes when an answer reaches its caller, never which: random calls with
    // random delays and statuses, concurrency 1 to 4, each answered with its own path.
    const { client } = await server(
      (req, res) => {
        const u = new URL(req.url, 'http://x');
        setTimeout(
          () => json(res, Number(u.searchParams.get('status')), { path: u.pathname }),
          Number(u.searchParams.get('delay')),
        );
      },
      { concurrency: 3 },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ delay: fc.integer({ min: 0, max: 3 }), status: fc.constantFrom(200, 201, 404) }), {
          minLength: 1,
          maxLength: 12,
        }),
        async (calls) => {
          const answers = await Promise.all(
            calls.map((c, i) =>
              client.send({ method: 'GET', path: `/call-${i}`, query: { delay: c.delay, status: c.status } }).then(
                (r) => ({ status: r.status, body: r.body }),
                (e: { status?: number }) => ({ status: e.status }),
              ),
            ),
          );
          expect(answers).toEqual(
            calls.map((c, i) =>
              c.status === 404 ? { status: 404 } : { status: c.status, body: { path: `/api/call-${i}` } },
            ),
          );
        },
      ),
      { numRuns: 25 },
    );
  });
});

describe('retries', () => {
  it('retries a GET on 502/503/504 and 429, then succeeds', async () => {
    const statuses = [502, 503, 429];
    const { srv, client } = await server((_req, res) => {
      const s = statuses.shift();
      if (s) return json(res, s, { title: 'busy' });
      json(res, 200, { processes: [] });
    });
    expect(await client.priceCodes.processes()).toEqual({ processes: [] });
    expect(apiRequests(srv.seen)).toHaveLength(4);
  });

  it('gives up after maxAttempts', async () => {
    const { srv, client } = await server((_req, res) => json(res, 503, { title: 'down' }));
    const err = await caught(client.lookups.countries());
    expect(err.status).toBe(503);
    expect(apiRequests(srv.seen)).toHaveLength(4);
  });

  it('retries a 500 once only', async () => {
    const { srv, client } = await server((_req, res) => json(res, 500, { title: 'oops', status: 500 }));
    const err = await caught(client.lookups.countries());
    expect(err.status).toBe(500);
    expect(apiRequests(srv.seen)).toHaveLength(2);
  });

  it('never retries 4xx answers', async () => {
    const { srv, client } = await server((_req, res) =>
      json(res, 400, { title: 'bad', errors: { market: ['required'] } }),
    );
    const err = await caught(client.stock.shipping({ market: '' }));
    expect(err.errors).toEqual({ market: ['required'] });
    expect(apiRequests(srv.seen)).toHaveLength(1);
  });

  it.each([
    [
      'POST /Jobs',
      (c: ReturnType<typeof createApiClient>) => c.jobs.create({ deliveryAddress: { deliveryMethod: 'X' }, items: [] }),
    ],
    ['PATCH', (c: ReturnType<typeof createApiClient>) => c.jobs.patch(5, { description: 'x' })],
    ['cancel', (c: ReturnType<typeof createApiClient>) => c.jobs.cancel(5)],
  ])('never retries %s, and reports that it may have reached the server', async (_name, call) => {
    const { srv, client } = await server((_req, res) => json(res, 503, { title: 'down' }));
    const err = await caught(call(client));
    expect(err.status).toBe(503);
    expect(err.mayHaveReachedServer).toBe(true);
    expect(apiRequests(srv.seen)).toHaveLength(1);
  });

  it('does retry a validateOnly POST /Jobs (it creates nothing)', async () => {
    let n = 0;
    const { srv, client } = await server((_req, res) => {
      if (n++ === 0) return json(res, 503, {});
      json(res, 200, { isValid: true, message: 'Validated with NO Errors. Job NOT created.' });
    });
    const r = await client.jobs.validate({ deliveryAddress: { deliveryMethod: 'X' }, items: [] });
    expect(r.message).toBe('Validated with NO Errors. Job NOT created.');
    expect(apiRequests(srv.seen)).toHaveLength(2);
    expect(JSON.parse(apiRequests(srv.seen)[1].body).validateOnly).toBe(true);
  });

  it('honours Retry-After given as an HTTP date', async () => {
    const now = Date.parse('2026-03-01T00:00:00Z');
    let n = 0;
    const sleeps: number[] = [];
    const { srv, client } = await server(
      (_req, res) => {
        if (n++ === 0) return json(res, 429, {}, { 'retry-after': new Date(now + 7_000).toUTCString() });
        json(res, 200, []);
      },
      {},
      { ...FAST, now: () => now, sleep: async (ms) => void sleeps.push(ms) },
    );
    await client.lookups.sizeSets();
    expect(sleeps).toEqual([7_000]);
    expect(apiRequests(srv.seen)).toHaveLength(2);
  });

  it('caps a huge Retry-After', async () => {
    let n = 0;
    const sleeps: number[] = [];
    const { client } = await server(
      (_req, res) => (n++ === 0 ? json(res, 503, {}, { 'retry-after': '86400' }) : json(res, 200, [])),
      {},
      { retry: { ...FAST.retry, maxRetryAfterMs: 2_000 }, sleep: async (ms) => void sleeps.push(ms) },
    );
    await client.lookups.sizeSets();
    expect(sleeps).toEqual([2_000]);
  });
});

describe('transport failures', () => {
  it('a server that never answers times out; a GET is retried, a POST /Jobs is not', async () => {
    const { srv, client } = await server(
      () => {
        /* never answer */
      },
      { timeouts: { connectMs: 1000, headersMs: 150, bodyMs: 150 } },
      { retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 } },
    );
    const err = await caught(client.jobs.get(1));
    expect(err.kind).toBe('timeout');
    expect(err.code).toBe('UND_ERR_HEADERS_TIMEOUT');
    expect(err.mayHaveReachedServer).toBe(true);
    expect(err.route).toBe('/Jobs/1');
    // The message names the host and the cause, and the setting that bounds the wait.
    expect(err.message).toBe(
      `GET /Jobs/1: ${new URL(srv.url).host} did not answer in time (setting requestTimeoutMs) (UND_ERR_HEADERS_TIMEOUT)`,
    );
    expect(apiRequests(srv.seen)).toHaveLength(2);

    const before = apiRequests(srv.seen).length;
    const post = await caught(client.jobs.create({ deliveryAddress: { deliveryMethod: 'X' }, items: [] }));
    expect(post.kind).toBe('timeout');
    expect(post.mayHaveReachedServer).toBe(true);
    expect(apiRequests(srv.seen).length - before).toBe(1);
  });

  it('a refused connection never reached the server', async () => {
    const dead = await startLoopback(() => undefined);
    const deadUrl = dead.url;
    await dead.close();
    const auth = await startLoopback((_req, res) => tokenReply(res, 1));
    const client = createApiClient(loopbackConfig(auth.url, { baseUrl: `${deadUrl}/api` }), {
      retry: { maxAttempts: 1 },
    });
    cleanups.push(
      () => auth.close(),
      () => client.close(),
    );
    const err = await caught(client.jobs.create({ deliveryAddress: { deliveryMethod: 'X' }, items: [] }));
    expect(err.kind).toBe('network');
    expect(err.code).toBe('ECONNREFUSED');
    expect(err.mayHaveReachedServer).toBe(false);
    expect(err.message).toBe(
      `POST /Jobs: ${new URL(deadUrl).host} refused the connection (nothing listens there) (ECONNREFUSED)`,
    );
  });

  it('TLS spoken to a server that does not speak it names the host and the handshake', async () => {
    const plain = await startLoopback((_req, res) => tokenReply(res, 1));
    const https = plain.url.replace(/^http:/, 'https:');
    const client = createApiClient(loopbackConfig(https), { retry: { maxAttempts: 1 } });
    cleanups.push(
      () => plain.close(),
      () => client.close(),
    );
    const err = await caught(client.jobs.get(1));
    expect(err.kind).toBe('network');
    expect(err.message).toMatch(
      new RegExp(`^POST /realms/test/.*: the TLS handshake with ${new URL(https).host} failed \\(`),
    );
  });

  it('every transport cause names the host: DNS, refusals, timeouts, certificates', () => {
    const host = 'api.example.com';
    expect(transportCause(host, 'ENOTFOUND', 'network')).toBe(
      'no such host: api.example.com does not resolve (check the URL) (ENOTFOUND)',
    );
    for (const code of [
      'EAI_AGAIN',
      'ECONNRESET',
      'EHOSTUNREACH',
      'UND_ERR_CONNECT_TIMEOUT',
      'ETIMEDOUT',
      'CERT_HAS_EXPIRED',
      'DEPTH_ZERO_SELF_SIGNED_CERT',
      'ERR_TLS_CERT_ALTNAME_INVALID',
      'ERR_SSL_WRONG_VERSION_NUMBER',
      'SOMETHING_NEW',
    ])
      expect(transportCause(host, code, 'network')).toMatch(
        new RegExp(`${host.replace(/\./g, '\\.')}.*\\(${code}\\)$`),
      );
    expect(transportCause(host, 'CERT_HAS_EXPIRED', 'network')).toContain('certificate');
    expect(transportCause(host, null, 'timeout')).toBe('api.example.com did not answer in time');
  });

  it('a connection reset after sending may have reached the server', async () => {
    const { client } = await server((_req, res) => void res.socket?.destroy(), {}, { retry: { maxAttempts: 1 } });
    const err = await caught(client.jobs.cancel(9));
    expect(err.kind).toBe('network');
    expect(err.mayHaveReachedServer).toBe(true);
  });
});

describe('error values', () => {
  it('carries the RFC 7807 fields, validationMessages, and a route without query', async () => {
    const { client } = await server((req, res) => {
      if (req.url.startsWith('/api/Jobs/active')) {
        return json(res, 403, {
          type: 'about:blank',
          title: 'Forbidden',
          status: 403,
          detail: 'role',
          instance: '/Jobs/active',
        });
      }
      json(res, 400, { isValid: false, validationMessages: [{ errorCode: 'E1', message: 'quantity below minimum' }] });
    });
    const err = await caught(client.jobs.active({ searchText: 'PO-1', includeClosedJobs: true }));
    expect(err).toMatchObject({
      kind: 'http',
      status: 403,
      method: 'GET',
      route: '/Jobs/active',
      title: 'Forbidden',
      detail: 'role',
    });
    expect(err.message).toBe('GET /Jobs/active: 403: Forbidden; role');
    const v = await caught(client.jobs.create({ deliveryAddress: { deliveryMethod: 'X' }, items: [] }));
    expect(v.validationMessages).toEqual([{ errorCode: 'E1', message: 'quantity below minimum' }]);
    expect(v.message).toContain('[E1] quantity below minimum');
  });

  it('a 404 is a testable value', async () => {
    const { client } = await server((_req, res) => json(res, 404, { title: 'Not Found', status: 404 }));
    const err = await caught(client.assets.get('A99999'));
    expect(isNotFound(err)).toBe(true);
    expect(await orNull(client.jobs.get(42))).toBeNull();
  });

  it('strips signed query strings that the server echoes into a message', async () => {
    const { client } = await server((_req, res) =>
      json(res, 400, { title: 'Bad', detail: 'cannot fetch https://cdn.example.com/a.png?X-Amz-Signature=LEAKME' }),
    );
    const err = await caught(client.jobs.create({ deliveryAddress: { deliveryMethod: 'X' }, items: [] }));
    expect(err.message).toContain('https://cdn.example.com/a.png');
    expect(err.message).not.toContain('LEAKME');
  });
});

describe('logging', () => {
  it('no secret, token or signed query string reaches the log, even at trace level', async () => {
    const out = new PassThrough();
    const chunks: Buffer[] = [];
    out.on('data', (c: Buffer) => chunks.push(c));
    const logger = createLogger({ level: 'trace', destination: out });
    let n = 0;
    const { client } = await server(
      (req, res) =>
        n++ < 1
          ? json(res, 401, {})
          : n < 4
            ? json(res, 503, {})
            : json(res, 200, req.url.endsWith('/Jobs') ? { jobNumber: 700001 } : []),
      {},
      { ...FAST, logger },
    );
    await client.lookups.sizeSets();
    await client.jobs.create({
      deliveryAddress: { deliveryMethod: 'X' },
      items: [{ itemType: 'PriceCode', code: 'c', externalArtworkUrl: 'https://cdn.example.com/x.png?sig=SIGLEAK' }],
    });
    const text = Buffer.concat(chunks).toString('utf8');
    expect(text).toContain('retrying');
    for (const leaked of [SECRET, 'tok-1-abcdef', 'tok-2-abcdef', 'SIGLEAK']) expect(text).not.toContain(leaked);
  });
});
