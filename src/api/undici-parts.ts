import { createRequire } from 'node:module';
import type { Agent as UndiciAgent, Dispatcher } from 'undici';

/**
 * The two parts of undici htorder uses, Agent and request, loaded from their own files.
 * undici's entry point loads all of it — fetch, WebSocket, EventSource, cookies, the mock and
 * cache layers — which took 70–90 ms of every `run`'s start on a 2-core machine, against
 * ~30 ms for these two: `run` is measured against a bare client (issue 16) and its start is on
 * the critical path before the first order is sent. undici 7 has no `exports` map, so these
 * files are part of what it publishes; the lockfile pins the version, and every test that
 * talks to the sandbox goes through both (a move in an upgrade fails them at once).
 */
const require = createRequire(import.meta.url);

export const Agent = require('undici/lib/dispatcher/agent') as typeof UndiciAgent;
export type Agent = UndiciAgent;

type RequestOptions = Omit<Dispatcher.RequestOptions, 'origin' | 'path' | 'method'> & {
  dispatcher: Dispatcher;
  method: Dispatcher.HttpMethod;
};

const dispatcherRequest = require('undici/lib/api/api-request') as (
  this: Dispatcher,
  opts: Dispatcher.RequestOptions,
) => Promise<Dispatcher.ResponseData>;

/**
 * undici's `request(url, opts)`: what its entry point does before handing the request to the
 * dispatcher (the URL split into origin and path), then the dispatcher's own request.
 */
export function request(url: string | URL, opts: RequestOptions): Promise<Dispatcher.ResponseData> {
  const { dispatcher, ...rest } = opts;
  const parsed = typeof url === 'string' ? new URL(url) : url;
  return dispatcherRequest.call(dispatcher, {
    ...rest,
    origin: parsed.origin,
    path: `${parsed.pathname}${parsed.search}`,
  });
}
