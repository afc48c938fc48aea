import { describe, expect, it } from 'vitest';
import type { InputEvent } from '../../../src/watch/events.js';
import {
  apiNotification,
  digestNotification,
  emptyDigest,
  inputNotification,
  nextDigestAt,
} from '../../../src/watch/notify/notification.js';
import { payloadFor } from '../../../src/watch/notify/payloads.js';
import type { ReportSummary } from '../../../src/report/model.js';
import { reportSummary } from '../../support/report-summary.js';

const summary = (byStatus: Partial<ReportSummary['byStatus']>): ReportSummary => reportSummary(byStatus, { errors: 1 });

/** A drop whose author chose every character: Slack and Teams markup, a template function, a token, a signed URL. */
const hostile: InputEvent = {
  kind: 'input',
  name: '<!channel> *urgent* & `x`.csv',
  location: '/drop/failed/<!channel> *urgent* & `x`.csv',
  phase: 'failed',
  at: Date.UTC(2026, 10, 22, 19, 0, 0),
  problem:
    'row 3: {{DATE(2017-02-14T06:08:00Z)}} <https://evil.example|click> Bearer abc.def.ghi ' +
    'see https://assets.example/a.pdf?X-Amz-Signature=deadbeef',
  summary: summary({ invalid: 2, 'not-submitted': 1 }),
  durationMs: 1500,
};

const slackTexts = (payload: unknown): string[] => {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (typeof o.text === 'string') out.push(o.text);
      for (const [k, x] of Object.entries(o)) if (k !== 'text') walk(x);
      if (o.text && typeof o.text === 'object') walk(o.text);
    }
  };
  walk(payload);
  return out;
};

describe('notification payloads', () => {
  const n = inputNotification('failed', hostile, 'htorder watch on test-host');

  it('Slack: text plus header/section/context blocks naming the file and the problem, markup neutralised', () => {
    const p = payloadFor('slack', n) as { text: string; blocks: { type: string }[] };
    expect(p.text).toContain('htorder: Input failed');
    expect(p.blocks.map((b) => b.type)).toEqual(['header', 'section', 'section', 'section', 'context']);
    const all = slackTexts(p).join('\n');
    // The file is named, with Slack's three control characters escaped and in a code span.
    expect(all).toContain('`&lt;!channel&gt; *urgent* &amp; ˋxˋ.csv`');
    // Nothing from outside can form a mention or a link: no raw `<` or `>` anywhere.
    expect(all).not.toMatch(/<!channel>|<https?:/);
    expect(all).not.toMatch(/[<>]/);
    expect(all).toContain('Jobs invalid');
    expect(all).toContain('row 3:');
  });

  it('never carries a bearer token or a signed URL’s query, in any format', () => {
    for (const format of ['slack', 'teams', 'json'] as const) {
      const text = JSON.stringify(payloadFor(format, n));
      expect(text).not.toContain('abc.def.ghi');
      expect(text).not.toContain('deadbeef');
      expect(text).toContain('https://assets.example/a.pdf?[redacted]');
    }
  });

  it('Teams: a message with one Adaptive Card attachment; text from outside only in TextRuns, {{…}} disarmed', () => {
    const p = payloadFor('teams', n) as {
      type: string;
      attachments: { contentType: string; contentUrl: null; content: Record<string, unknown> }[];
    };
    expect(p.type).toBe('message');
    expect(p.attachments).toHaveLength(1);
    const [a] = p.attachments;
    expect(a?.contentType).toBe('application/vnd.microsoft.card.adaptive');
    expect(a?.content.type).toBe('AdaptiveCard');
    expect(a?.content.version).toBe('1.4');
    const body = a?.content.body as { type: string; text?: string; inlines?: { text: string }[] }[];
    // Markdown-reading elements carry no text from outside.
    for (const block of body.filter((b) => b.type === 'TextBlock')) expect(block.text).not.toContain('urgent');
    const runs = body.flatMap((b) => b.inlines ?? []).map((r) => r.text);
    expect(runs).toContain('<!channel> *urgent* & `x`.csv');
    const problem = runs.find((r) => r.startsWith('row 3'));
    expect(problem).not.toContain('{{');
    expect(problem).toContain('DATE(2017-02-14T06:08:00Z)');
  });

  it('JSON: the notification itself, with the event, the input, the counts and a plain line', () => {
    const p = payloadFor('json', n) as Record<string, unknown>;
    expect(p).toMatchObject({
      schema: 'htorder.notification/1',
      event: 'failed',
      severity: 'error',
      at: '2026-11-22T19:00:00.000Z',
      input: { name: hostile.name, location: hostile.location },
      jobs: { invalid: 2, 'not-submitted': 1 },
      durationMs: 1500,
    });
    expect(p.text).toContain('Input failed');
  });

  it('an outage says how long, a recovery too; a digest counts the day', () => {
    const since = Date.UTC(2026, 0, 1, 8, 0, 0);
    expect(apiNotification('api-unavailable', since, since + 12 * 60_000, 'o').title).toBe(
      'API unavailable for 12 min',
    );
    expect(apiNotification('api-recovered', since, since + 125 * 60_000, 'o').title).toBe(
      'API available again after 2 h 5 min',
    );
    const d = digestNotification(
      { ...emptyDigest(), inputsDone: 4, inputsFailed: 1, jobs: { submitted: 9 } },
      since,
      since + 1,
      'o',
    );
    expect(d.title).toBe('Daily digest: 4 done, 1 failed');
    const slack = slackTexts(payloadFor('slack', d)).join('\n');
    expect(slack).toContain('*Jobs submitted*\n9');
  });

  it('the next digest is at the next HH:MM of the local clock, never now', () => {
    const now = new Date(2026, 5, 10, 8, 0, 0).getTime();
    expect(nextDigestAt(now, '08:00')).toBe(new Date(2026, 5, 11, 8, 0, 0).getTime());
    expect(nextDigestAt(now, '08:01')).toBe(new Date(2026, 5, 10, 8, 1, 0).getTime());
    expect(nextDigestAt(now, '07:59')).toBe(new Date(2026, 5, 11, 7, 59, 0).getTime());
  });
});
