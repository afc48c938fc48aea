import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import { type AddressRules, refusalText, refusedAddress } from './artwork-addresses.js';

/**
 * Asks an artwork link what the printer will get when it fetches it: `HEAD`, then a ranged
 * `GET` of the first bytes where `HEAD` is refused, following at most a few redirects, each
 * bounded in time and size. The printer fetches from the internet, so a host that resolves to
 * a private, loopback or link-local address is refused — checked on the address actually
 * connected to (the lookup of the connection itself), so a name that resolves differently the
 * second time cannot slip past (artwork-addresses.ts). One probe, every request and redirect
 * included, ends at its deadline whatever the server does (a body sent a byte at a time).
 * Messages name the link without its query string (a signature is a credential).
 */

export interface ProbeOptions extends AddressRules {
  /** How long a request may wait for its connection, its headers or its next bytes. Default 10 s. */
  timeoutMs?: number;
  /** The whole probe: every request and redirect, from the first connection to the last byte read. Default 30 s. */
  deadlineMs?: number;
  /** Redirects followed at most. Default 3. */
  maxRedirects?: number;
  /** Ends the probe early (the input's budget for its artwork checks is spent): the result is `budget`. */
  signal?: AbortSignal;
}

/** A probe's whole time when not set: a few requests of a slow but honest host. */
export const PROBE_DEADLINE_MS = 30_000;

export type ProbeResult =
  | { ok: true; contentType: string; finalUrl: string }
  | { ok: false; code: string; message: string; budget?: true };

/** Bytes read at most from an answer's body: enough to tell an image by its first bytes. */
const SNIFF_BYTES = 512;

const ACCEPTED = [
  /^image\//,
  /^application\/pdf$/,
  /^application\/(postscript|eps|x-eps|illustrator|vnd\.adobe\.illustrator)$/,
];

/** One agent per probe run: its own connections, and the lookup that refuses private addresses. */
export function artworkAgent(opts: ProbeOptions): Agent {
  const t = opts.timeoutMs ?? 10_000;
  return new Agent({
    connect: { timeout: t, lookup: guardedLookup(opts) },
    headersTimeout: t,
    bodyTimeout: t,
    connections: 4,
  });
}

export async function probeArtwork(link: string, agent: Agent, opts: ProbeOptions = {}): Promise<ProbeResult> {
  const deadlineMs = opts.deadlineMs ?? PROBE_DEADLINE_MS;
  const deadline = AbortSignal.timeout(deadlineMs);
  const signal = opts.signal ? AbortSignal.any([deadline, opts.signal]) : deadline;
  let url = new URL(link);
  if (opts.signal?.aborted) return budgetSpent(url);
  for (let hop = 0; hop <= (opts.maxRedirects ?? 3); hop++) {
    const refused = addressRefusal(url, opts);
    if (refused) return refused;
    let answer: Answer;
    try {
      answer = await ask(url, agent, signal);
    } catch (err) {
      if (opts.signal?.aborted) return budgetSpent(url);
      if (deadline.aborted)
        return { ok: false, code: 'artwork.unreachable', message: `${slow(deadlineMs)} (${safe(url)})` };
      return networkFailure(url, err);
    }
    if (answer.location === undefined) return judge(url, answer);
    url = new URL(answer.location, url);
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && opts.allowLoopback))
      return { ok: false, code: 'artwork.redirect', message: `redirects to a link that is not https (${safe(url)})` };
  }
  return { ok: false, code: 'artwork.redirect', message: `redirects more than ${opts.maxRedirects ?? 3} times` };
}

/** scheme://host/path: the link as messages show it, never its query or user name. */
export function safe(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

interface Answer {
  status: number;
  contentType: string;
  head: Buffer;
  location?: string;
}

/** The words for a probe cut at its deadline. */
function slow(deadlineMs: number): string {
  return `cannot be fetched: its host did not answer in full within ${deadlineMs / 1000} s`;
}

/** What a probe the input's budget cut short (or never began) says. */
function budgetSpent(url: URL): ProbeResult {
  return {
    ok: false,
    code: 'artwork.unchecked',
    message: `not checked: this input's artwork checks took all the time they may (setting artworkCheckBudgetMs) (${safe(url)})`,
    budget: true,
  };
}

async function ask(url: URL, agent: Agent, signal: AbortSignal): Promise<Answer> {
  const head = await once(url, agent, 'HEAD', signal);
  if (![403, 405, 501].includes(head.status)) return head;
  return once(url, agent, 'GET', signal);
}

async function once(url: URL, agent: Agent, method: 'HEAD' | 'GET', signal: AbortSignal): Promise<Answer> {
  const res = await request(url, {
    method,
    dispatcher: agent,
    signal,
    headers: method === 'GET' ? { range: `bytes=0-${SNIFF_BYTES - 1}` } : {},
  });
  const header = (name: string): string | undefined => {
    const v = res.headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const head = await firstBytes(res.body);
  const redirect = res.statusCode >= 300 && res.statusCode < 400 ? header('location') : undefined;
  return { status: res.statusCode, contentType: header('content-type') ?? '', head, location: redirect };
}

/** Reads at most SNIFF_BYTES of a body and lets the rest go. */
async function firstBytes(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= SNIFF_BYTES) break;
  }
  body.destroy();
  return Buffer.concat(chunks).subarray(0, SNIFF_BYTES);
}

function judge(url: URL, a: Answer): ProbeResult {
  if (a.status < 200 || a.status > 299)
    return { ok: false, code: 'artwork.unreachable', message: `answers ${a.status} (${safe(url)})` };
  const type = (a.contentType.split(';')[0] ?? '').trim().toLowerCase();
  if (ACCEPTED.some((re) => re.test(type)) || (isGeneric(type) && looksLikeArtwork(a.head)))
    return { ok: true, contentType: type, finalUrl: safe(url) };
  if (isGeneric(type) && a.head.length === 0) return { ok: true, contentType: type, finalUrl: safe(url) };
  return {
    ok: false,
    code: 'artwork.not-an-image',
    message: `answers with ${type || 'no content type'}, not an image, PDF or PostScript file (${safe(url)})`,
  };
}

function isGeneric(type: string): boolean {
  return type === '' || type === 'application/octet-stream' || type === 'binary/octet-stream';
}

/** PNG, JPEG, GIF, TIFF, WebP, PDF, PostScript/EPS, SVG: what an untyped file's first bytes say. */
function looksLikeArtwork(head: Buffer): boolean {
  const text = head.subarray(0, 16).toString('latin1');
  return (
    head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) ||
    (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) ||
    /^(GIF8|II\*\0|MM\0\*|%PDF-|%!PS)/.test(text) ||
    (text.startsWith('RIFF') && head.subarray(8, 12).toString('latin1') === 'WEBP') ||
    /^\s*(<\?xml[^>]*>\s*)?<svg[\s>]/.test(head.toString('utf8'))
  );
}

function networkFailure(url: URL, err: unknown): ProbeResult {
  const e = err as { code?: string; message?: string; cause?: { code?: string } };
  if (e.code === 'ERR_ARTWORK_PRIVATE_ADDRESS')
    return { ok: false, code: 'artwork.private-address', message: `${e.message} (${safe(url)})` };
  const cause = e.code ?? e.cause?.code ?? 'error';
  const what: Record<string, string> = {
    ENOTFOUND: 'its host name is not found',
    ECONNREFUSED: 'its host refuses the connection',
    UND_ERR_CONNECT_TIMEOUT: 'its host does not answer (connect timeout)',
    UND_ERR_HEADERS_TIMEOUT: 'its host does not answer in time',
    UND_ERR_BODY_TIMEOUT: 'its host stops answering mid-answer',
  };
  return {
    ok: false,
    code: 'artwork.unreachable',
    message: `cannot be fetched: ${what[cause] ?? cause} (${safe(url)})`,
  };
}

/** A link written with an address (no lookup happens for it): refused here when the lookup would refuse it. */
function addressRefusal(url: URL, opts: ProbeOptions): ProbeResult | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) === 0 || !refusedAddress(host, opts)) return undefined;
  return { ok: false, code: 'artwork.private-address', message: `${refusalText(host)} (${safe(url)})` };
}

function guardedLookup(opts: ProbeOptions): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 4);
      const refused = addresses.find((a) => refusedAddress(a.address, opts));
      if (refused) {
        const e = Object.assign(new Error(`${hostname}: ${refusalText(refused.address)}`), {
          code: 'ERR_ARTWORK_PRIVATE_ADDRESS',
        });
        return callback(e, '', 4);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as AllCallback)(null, addresses);
      const [first] = addresses;
      if (!first) return callback(Object.assign(new Error(`${hostname}: no address`), { code: 'ENOTFOUND' }), '', 4);
      return callback(null, first.address, first.family);
    });
  };
}

type AllCallback = (err: null, addresses: LookupAddress[]) => void;
