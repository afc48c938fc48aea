import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PipelineHarness } from './pipeline-harness.js';

/** One request through the proxy: its method, path and body as the client sent them. */
export interface Exchange {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** A `POST /Jobs` (a dry run or a create), with its `validateOnly` flag. */
  jobsPost?: { validateOnly: boolean };
}

/** What the proxy does otherwise than pass each request and answer through. */
export interface ProxyRules {
  /** Answers a request itself, the sandbox never asked: true when it did. */
  answer?(x: Exchange, res: ServerResponse): boolean;
  /** The body the sandbox is sent (the client's by default). */
  send?(x: Exchange): Buffer;
  /** Gives the client another answer than the sandbox's: true when it did. */
  reply?(x: Exchange, sandbox: { status: number; ok: boolean; text: string }, res: ServerResponse): boolean;
}

/**
 * A loopback proxy in front of a harness's sandbox, for `run` against an API that behaves
 * otherwise than the spec (a gateway that drops a flag, an answer broken on the way, an API that
 * quotes credentials back), with the real sandbox behind it for everything else.
 * `env()` points a CLI run at it.
 */
export async function startSandboxProxy(
  h: PipelineHarness,
  rules: ProxyRules,
): Promise<{ env(): Record<string, string>; close(): Promise<void> }> {
  const target = new URL(h.env().HTORDER_BASE_URL);
  const proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const x: Exchange = {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      if (x.method === 'POST' && /\/Jobs$/.test(x.url))
        x.jobsPost = { validateOnly: JSON.parse(x.body.toString()).validateOnly === true };
      if (rules.answer?.(x, res)) return;
      const headers = { ...req.headers } as Record<string, string>;
      delete headers.host;
      delete headers['content-length'];
      const body = rules.send?.(x) ?? x.body;
      const answer = await fetch(`${target.origin}${x.url}`, {
        method: x.method,
        headers,
        ...(body.length > 0 ? { body } : {}),
      });
      const sandbox = { status: answer.status, ok: answer.ok, text: await answer.text() };
      if (rules.reply?.(x, sandbox, res)) return;
      res.writeHead(sandbox.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
      res.end(sandbox.text);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  return {
    env: () => ({ HTORDER_BASE_URL: `${origin}${target.pathname}`.replace(/\/$/, '') }),
    close: async () => {
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}
