import { afterEach, describe, expect, it } from 'vitest';
import type { WebhookConfig } from '../../../src/core/config/notify-config.js';
import { createLogger } from '../../../src/core/log/logger.js';
import { Notifier } from '../../../src/watch/notify/notifier.js';
import { WatchEvents } from '../../../src/watch/events.js';
import type { ReportSummary } from '../../../src/report/model.js';
import { startLoopback } from '../../support/loopback-server.js';
import { sink } from '../../support/sink.js';
import { waitFor } from '../../support/watch-harness.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

const summary = (byStatus: Partial<ReportSummary['byStatus']>): ReportSummary =>
  ({ jobs: 0, items: 0, errors: 0, warnings: 0, byStatus }) as ReportSummary;

async function setUp(config: Partial<WebhookConfig>) {
  const server = await startLoopback((_req, res) => {
    res.end('ok');
  });
  closers.push(server.close);
  const notifier = new Notifier(
    [
      {
        url: `${server.url}/hook`,
        label: 'test',
        format: 'json',
        events: ['failed', 'in-doubt', 'api-unavailable', 'api-recovered'],
        apiUnavailableMs: 600_000,
        ...config,
      },
    ],
    { logger: createLogger({ level: 'silent', destination: sink().stream }), command: 'watch' },
  );
  closers.push(() => notifier.close(1000));
  const events = new WatchEvents();
  events.on(notifier.listener);
  return {
    server,
    notifier,
    events,
    bodies: () => server.seen.map((r) => JSON.parse(r.body) as Record<string, unknown>),
  };
}

describe('notifier', () => {
  it('a digest counts the inputs, their jobs and the outages since the last one, then starts afresh', async () => {
    const { notifier, events, bodies } = await setUp({ events: [], digestAt: '23:59' });
    events.input({ name: 'a.csv', location: '/d/done/a.csv', phase: 'done', summary: summary({ submitted: 3 }) });
    events.input({ name: 'b.csv', location: '/d/done/b.csv', phase: 'done', summary: summary({ submitted: 2 }) });
    events.input({
      name: 'c.csv',
      location: '/d/failed/c.csv',
      phase: 'failed',
      summary: summary({ invalid: 1, 'not-submitted': 4 }),
    });
    events.apiSeen(false, 'down');
    events.apiSeen(true);
    notifier.sendDigests();
    notifier.sendDigests();
    await waitFor(() => (bodies().length === 2 ? true : undefined), 'two digests');
    const [day, next] = bodies() as { event: string; title: string; digest: Record<string, unknown> }[];
    expect(day?.event).toBe('digest');
    expect(day?.title).toBe('Daily digest: 2 done, 1 failed');
    expect(day?.digest).toMatchObject({
      inputsDone: 2,
      inputsFailed: 1,
      inputsInDoubt: 0,
      apiOutages: 1,
      jobs: { submitted: 5, invalid: 1, 'not-submitted': 4 },
    });
    // The webhook asked for no other event: nothing but digests was sent.
    expect(next?.digest).toMatchObject({ inputsDone: 0, inputsFailed: 0, apiOutages: 0, jobs: {} });
  });

  it('an outage shorter than the threshold says nothing, and neither does its end', async () => {
    const { events, server } = await setUp({
      apiUnavailableMs: 60_000,
      events: ['api-unavailable', 'api-recovered', 'failed'],
    });
    events.apiSeen(false, 'down');
    events.apiSeen(true);
    // A failure afterwards is told: had the outage been, it would have come first.
    events.input({ name: 'x.yaml', location: '/d/failed/x.yaml', phase: 'failed', problem: 'bad' });
    await waitFor(() => (server.seen.length > 0 ? true : undefined), 'a notification');
    expect(server.seen.map((r) => (JSON.parse(r.body) as { event: string }).event)).toEqual(['failed']);
  });
});
