import type { ServerResponse } from 'node:http';
import { startLoopback } from './loopback-server.js';

/** A PNG's first bytes: enough for a sniffer, and for the sandbox to take it as an image. */
export const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);

/**
 * A small artwork host on loopback: /good.png (an image), /missing.png (404), /page.html (an
 * HTML page), /untyped (a PNG sent as octet-stream, HEAD refused), /hop/N (N redirects, then the
 * image). `down` makes every path answer 503.
 */
export async function startArtworkServer(): Promise<{
  url: string;
  requests(): { method: string; url: string }[];
  setDown(down: boolean): void;
  close(): Promise<void>;
}> {
  let down = false;
  const server = await startLoopback((req, res) => route(req.method, req.url, res, down));
  return {
    url: server.url,
    requests: () => server.seen.map(({ method, url }) => ({ method, url })),
    setDown: (d) => {
      down = d;
    },
    close: () => server.close(),
  };
}

function route(method: string, url: string, res: ServerResponse, down: boolean): void {
  const path = url.split('?')[0] ?? '';
  const send = (status: number, type: string, body: Buffer | string): void => {
    res.writeHead(status, { 'content-type': type });
    res.end(method === 'HEAD' ? undefined : body);
  };
  if (down) send(503, 'text/plain', 'down');
  else if (path.startsWith('/hop/')) {
    const n = Number(path.slice(5));
    res.writeHead(302, { location: n > 1 ? `/hop/${n - 1}` : '/good.png' });
    res.end();
  } else if (path === '/good.png' || path === '/signed.png') send(200, 'image/png', PNG);
  else if (path === '/page.html') send(200, 'text/html; charset=utf-8', '<html><body>Sign in</body></html>');
  else if (path === '/untyped' && method === 'HEAD') send(405, 'text/plain', '');
  else if (path === '/untyped') send(206, 'application/octet-stream', PNG);
  else send(404, 'text/plain', 'not found');
}
