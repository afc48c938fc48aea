import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { parseRetryAfter } from '../../api/retry-policy.js';
import { backoffDelay } from '../../core/backoff.js';
import type { Logger } from '../../core/log/logger.js';
import { rememberSecretUrl } from '../../core/log/redact.js';
import { outsideText } from './notification.js';

export interface SenderOptions {
  /** Messages waiting at most; when full the oldest is dropped (and logged). Default 100. */
  maxQueue?: number;
  /** One POST, connect to last byte of the answer. Default 10 s. */
  timeoutMs?: number;
  /** Tries per message, the first included. Default 6 (about a minute of backoff). */
  maxAttempts?: number;
  /** First backoff; doubles each try, with jitter (core/backoff.ts), up to maxDelayMs. Default 1 s. */
  baseDelayMs?: number;
  /** Longest backoff, and the most a Retry-After is honoured for. Default 60 s. */
  maxDelayMs?: number;
  /** 0 ≤ x < 1; tests make jitter predictable. Default Math.random. */
  random?: () => number;
}

interface Queued {
  body: string;
  what: string;
}

/**
 * Delivers messages to one webhook, in order, one POST at a time, without ever making its
 * caller wait: `send` queues and returns. Network errors, timeouts, 408, 429 and 5xx are tried
 * again after the one backoff (core/backoff.ts; a Retry-After, in seconds or as a date, is
 * honoured instead, up to maxDelayMs); any other answer is final. The queue is bounded: when the
 * receiver is down for long, the oldest messages go first. The URL is a secret: logs name the
 * webhook by its label, and an error's text has the URL and its secret parts scrubbed out (rememberSecretUrl).
 */
export class WebhookSender {
  private readonly queue: Queued[] = [];
  private running: Promise<void> | undefined;
  /** Aborted when close() begins: no more messages, no more backoff (each queued one gets its last try). */
  private readonly closing = new AbortController();
  /** Aborted when close() gives up: the request in flight ends at once. */
  private readonly stop = new AbortController();
  private readonly dispatcher: Agent;
  private readonly opts: Required<SenderOptions>;

  constructor(
    private readonly url: string,
    private readonly label: string,
    private readonly logger: Logger,
    options: SenderOptions = {},
  ) {
    rememberSecretUrl(url);
    this.opts = {
      maxQueue: options.maxQueue ?? 100,
      timeoutMs: options.timeoutMs ?? 10_000,
      maxAttempts: options.maxAttempts ?? 6,
      baseDelayMs: options.baseDelayMs ?? 1000,
      maxDelayMs: options.maxDelayMs ?? 60_000,
      random: options.random ?? Math.random,
    };
    const t = this.opts.timeoutMs;
    // Its own connections: a slow receiver never takes a socket the API client could use.
    this.dispatcher = new Agent({ connect: { timeout: t }, headersTimeout: t, bodyTimeout: t, connections: 2 });
  }

  /** Queues one message (`what` names it in logs: "failed: orders.csv"); never throws, never waits. */
  send(payload: unknown, what: string): void {
    if (this.closing.signal.aborted) return;
    if (this.queue.length >= this.opts.maxQueue) {
      const dropped = this.queue.shift();
      this.logger.warn(
        { webhook: this.label, dropped: dropped?.what, queued: this.queue.length },
        'notification queue full: dropped the oldest notification',
      );
    }
    this.queue.push({ body: JSON.stringify(payload), what });
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
    });
  }

  /**
   * Delivers what is queued within `waitMs` (no more backoff: each message gets its last try),
   * then gives up on the rest, logging how many were not sent. Idempotent.
   */
  async close(waitMs: number): Promise<void> {
    this.closing.abort();
    if (this.running) {
      const waited = new AbortController();
      await Promise.race([this.running, sleep(waitMs, undefined, { signal: waited.signal }).catch(() => undefined)]);
      waited.abort();
    }
    if (this.queue.length > 0 || this.running) {
      this.logger.warn(
        { webhook: this.label, unsent: this.queue.length + (this.running ? 1 : 0) },
        'stopping: notifications not delivered in time were dropped',
      );
    }
    this.queue.length = 0;
    this.stop.abort();
    await this.running?.catch(() => undefined);
    await this.dispatcher.close().catch(() => undefined);
  }

  private async drain(): Promise<void> {
    for (;;) {
      const next = this.queue.shift();
      if (next === undefined) return;
      await this.deliver(next);
    }
  }

  private async deliver(message: Queued): Promise<void> {
    const about = { webhook: this.label, notification: message.what };
    for (let attempt = 1; ; attempt++) {
      const result = await this.post(message.body);
      if (result.ok) {
        this.logger.debug({ ...about, attempt }, 'notification delivered');
        return;
      }
      if (attempt >= this.opts.maxAttempts || this.closing.signal.aborted || !result.retry) {
        this.logger.warn(
          { ...about, attempts: attempt, problem: result.problem },
          result.retry ? 'notification not delivered; giving up' : 'notification refused by the webhook',
        );
        return;
      }
      const delay =
        result.retryAfterMs === undefined
          ? backoffDelay(attempt, { baseMs: this.opts.baseDelayMs, maxMs: this.opts.maxDelayMs }, this.opts.random)
          : Math.min(this.opts.maxDelayMs, result.retryAfterMs);
      const retryInMs = Math.round(delay);
      this.logger.debug(
        { ...about, attempt, retryInMs, problem: result.problem },
        'notification not delivered; will retry',
      );
      await sleep(delay, undefined, { signal: this.closing.signal, ref: false }).catch(() => undefined);
    }
  }

  private async post(
    body: string,
  ): Promise<{ ok: true } | { ok: false; retry: boolean; problem: string; retryAfterMs?: number }> {
    const signal = AbortSignal.any([this.stop.signal, AbortSignal.timeout(this.opts.timeoutMs)]);
    try {
      const res = await request(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', 'user-agent': 'htorder-notify' },
        body,
        signal,
        dispatcher: this.dispatcher,
      });
      const text = await boundedText(res.body, 300);
      if (res.statusCode >= 200 && res.statusCode < 300) return { ok: true };
      const retry = res.statusCode === 408 || res.statusCode === 429 || res.statusCode >= 500;
      // The API client's reading of Retry-After (seconds or a date), capped where send caps it anyway.
      const retryAfterMs = parseRetryAfter(res.headers['retry-after'], Date.now(), this.opts.maxDelayMs);
      return {
        ok: false,
        retry,
        problem: `HTTP ${res.statusCode}${text ? `: ${outsideText(text, 200)}` : ''}`,
        ...(retryAfterMs === null ? {} : { retryAfterMs }),
      };
    } catch (err) {
      const e = err as Error & { code?: string };
      // undici's messages name host and port at most; outsideText scrubs the URL all the same.
      const problem = signal.aborted && !this.stop.signal.aborted ? 'timed out' : (e.code ?? e.message);
      return { ok: false, retry: true, problem: outsideText(problem, 200) };
    }
  }
}

/**
 * The start of an answer's body, for the log (Slack says why in words: `invalid_token`); the rest
 * is discarded. A body cut short loses its last word too: it may be the start of an echoed token,
 * which the scrubber, knowing only whole secrets, would not recognise.
 */
async function boundedText(body: AsyncIterable<Buffer> & { destroy(): unknown }, max: number): Promise<string> {
  let text = '';
  for await (const chunk of body) {
    text += chunk.toString('utf8');
    if (text.length > max) {
      body.destroy();
      let end = max;
      while (end > 0 && !WORD_END.includes(text[end - 1])) end--;
      return text.slice(0, end).trim();
    }
  }
  return text.trim();
}

/** Characters no token contains: where a cut body's last whole word ends. */
const WORD_END = ' \t\r\n/?&=:,;"\'<>()[]{}';
