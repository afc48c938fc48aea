import type { ServerResponse } from 'node:http';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startLoopback, type SeenRequest } from '../../support/loopback-server.js';
import { startWatch, waitFor, watchFixture } from '../../support/watch-harness.js';
import { manifest } from '../../support/yaml-manifests.js';

/** Where the receiver listens: a Slack-like path whose last segment is the token. */
const HOOK_PATH = '/services/T0001/B0002/Zx9SecretToken42';

const fx = watchFixture('htorder-notify-');
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function receiver(reply: (req: SeenRequest, res: ServerResponse) => void = (_q, res) => res.end('ok')) {
  const server = await startLoopback(reply);
  closers.push(server.close);
  return { ...server, hook: `${server.url}${HOOK_PATH}`, bodies: () => server.seen.map((r) => JSON.parse(r.body)) };
}

const finished = async (name: string): Promise<string | undefined> => {
  for (const folder of ['done', 'failed']) {
    const names = await readdir(join(fx.drop.path, folder)).catch(() => [] as string[]);
    if (names.includes(name)) return folder;
  }
  return undefined;
};

describe('notifications from a real watcher', () => {
  it('a failed drop sends a Slack message naming the file and the problem; the webhook URL is never logged', async () => {
    const hook = await receiver();
    const w = await startWatch(
      { target: fx.drop.path },
      { ...fx.env, HTORDER_NOTIFY_URL: hook.hook, HTORDER_NOTIFY_FORMAT: 'slack' },
    );
    try {
      await writeFile(join(fx.drop.path, 'broken <orders>.yaml'), 'version: 1\njobs: [ {');
      await waitFor(() => (hook.seen.length > 0 ? true : undefined), 'a notification');
    } finally {
      expect(await w.stop()).toBe(0);
    }
    expect(hook.seen).toHaveLength(1);
    expect(hook.seen[0]?.url).toBe(HOOK_PATH);
    const slack = hook.bodies()[0] as { text: string; blocks: { type: string; text?: { text: string } }[] };
    expect(slack.text).toContain('htorder: Input failed');
    expect(slack.text).toContain('broken &lt;orders&gt;.yaml');
    expect(slack.blocks[0]?.type).toBe('header');
    const sections = slack.blocks.map((b) => b.text?.text ?? '').join('\n');
    expect(sections).toContain('*File* `broken &lt;orders&gt;.yaml`');
    expect(sections).toContain(join(fx.drop.path, 'failed'));
    expect(sections).toMatch(/\*Problem\*\n```.+```/s);
    const logs = JSON.stringify(w.logs());
    expect(logs).toContain('notifications on');
    expect(logs).not.toContain('Zx9SecretToken42');
    expect(logs).not.toContain(HOOK_PATH);
  });

  it('jobs in doubt notify once, when first seen; the input that then fails tells its counts', async () => {
    const hook = await receiver();
    const w = await startWatch({ target: fx.drop.path }, { ...fx.env, HTORDER_NOTIFY_URL: hook.hook });
    try {
      // A first file lets the ledger vouch for the account, so the next create is not preceded by a search.
      await writeFile(join(fx.drop.path, 'first.yaml'), manifest('NF', 1));
      await waitFor(() => finished('first.yaml'), 'the first input');
      // The create reaches the API, its answer is lost, and the search that would settle it fails:
      // the job is in doubt and the input is retried; on the retry the search still fails, and the
      // input fails with its job still in doubt (docs/notifications.md).
      await fx.sandbox.admin.setFaults([
        { route: 'POST /Jobs', kind: 'create-then-drop', when: 'create' },
        { route: 'GET /Jobs/active', kind: 'status', status: 503, retryAfterSeconds: 0 },
      ]);
      await writeFile(join(fx.drop.path, 'doubt.yaml'), manifest('ND', 1));
      await waitFor(async () => ((await finished('doubt.yaml')) === 'failed' ? true : undefined), 'doubt.yaml ended');
      await waitFor(() => (hook.seen.length >= 2 ? true : undefined), 'two notifications');
    } finally {
      expect(await w.stop()).toBe(0);
    }
    const phases = w
      .events()
      .filter((e) => e.kind === 'input' && e.name === 'doubt.yaml')
      .map((e) => (e.kind === 'input' ? e.phase : ''));
    expect(phases).toEqual(['waiting', 'processing', 'retry', 'processing', 'failed']);
    const bodies = hook.bodies() as { event: string; input?: { name: string }; jobs?: Record<string, number> }[];
    // Nothing for first.yaml (success is not asked for by default), one in-doubt, one failed.
    expect(bodies.map((b) => [b.event, b.input?.name, b.jobs])).toEqual([
      ['in-doubt', 'doubt.yaml', { 'in-doubt': 1 }],
      ['failed', 'doubt.yaml', { 'in-doubt': 1 }],
    ]);
  });

  it('the API unavailable for longer than N notifies once, then once more when it is back', async () => {
    const hook = await receiver();
    await fx.sandbox.admin.setFaults([{ route: '*', kind: 'status', status: 503, retryAfterSeconds: 0 }]);
    const w = await startWatch(
      { target: fx.drop.path },
      { ...fx.env, HTORDER_NOTIFY_URL: hook.hook, HTORDER_NOTIFY_API_UNAVAILABLE_MS: '300' },
    );
    try {
      await writeFile(join(fx.drop.path, 'later.yaml'), manifest('NL', 1));
      await waitFor(() => (hook.seen.length > 0 ? true : undefined), 'the outage notification');
      // Still down through several more retries: no second outage notification.
      await waitFor(
        () => (w.events().filter((e) => e.kind === 'input' && e.phase === 'retry').length >= 3 ? true : undefined),
        'more retries',
      );
      expect(hook.seen).toHaveLength(1);
      await fx.sandbox.admin.setFaults([]);
      await waitFor(() => (hook.seen.length === 2 ? true : undefined), 'the recovery notification');
    } finally {
      expect(await w.stop()).toBe(0);
    }
    const [down, up] = hook.bodies() as { event: string; title: string; outage: { since: string; forMs: number } }[];
    expect(down?.event).toBe('api-unavailable');
    expect(down?.title).toMatch(/^API unavailable for \d+ m?s$/);
    expect(down?.outage.forMs).toBeGreaterThanOrEqual(300);
    expect(up?.event).toBe('api-recovered');
    expect(up?.outage.since).toBe(down?.outage.since);
  });

  it('a receiver that never answers does not hold up processing, and stop still returns', async () => {
    const hook = await receiver(() => undefined); // takes the POST, never answers
    const w = await startWatch(
      { target: fx.drop.path },
      { ...fx.env, HTORDER_NOTIFY_URL: hook.hook, HTORDER_NOTIFY_ON: 'failed,done' },
    );
    try {
      await writeFile(join(fx.drop.path, 'bad.yaml'), 'version: 1\njobs: [ {');
      await writeFile(join(fx.drop.path, 'good.yaml'), manifest('NH', 1));
      await writeFile(join(fx.drop.path, 'also-bad.yaml'), 'nope: [');
      // All three finish while the first notification's POST is still held by the receiver.
      await waitFor(async () => {
        const all = await Promise.all(['bad.yaml', 'good.yaml', 'also-bad.yaml'].map(finished));
        return all.every(Boolean) ? true : undefined;
      }, 'every input finished');
      expect(hook.seen).toHaveLength(1);
    } finally {
      // The watcher's stop waits a bounded time for notifications, then drops them (logged).
      expect(await w.stop()).toBe(0);
    }
    expect(JSON.stringify(w.logs())).toContain('stopping: notifications not delivered in time were dropped');
  });

  it('a mistake in the config file’s notify section stops watch before it starts, naming file:line:col', async () => {
    const config = join(fx.drop.path, 'htorder.yaml');
    await writeFile(
      config,
      `notify:\n  webhooks:\n    - url: ${'https://hooks.slack.com/x'}\n      on: failed, nope\n`,
      {
        mode: 0o600,
      },
    );
    await expect(startWatch({ target: fx.drop.path }, { ...fx.env, HTORDER_CONFIG: config })).rejects.toThrow(
      `config file ${config}:4:11: notify.webhooks[1].on: unknown event "nope"`,
    );
  });
});

describe('awaiting-approval', () => {
  it('an input held for approval sends the awaiting-approval event (on by default) with its counts', async () => {
    const hook = await receiver();
    const w = await startWatch(
      { target: fx.drop.path },
      { ...fx.env, HTORDER_NOTIFY_URL: hook.hook, HTORDER_NOTIFY_FORMAT: 'json', HTORDER_MAX_JOB_COST: '1' },
    );
    try {
      await writeFile(join(fx.drop.path, 'big.yaml'), manifest('NA', 2));
      await waitFor(() => (hook.seen.length > 0 ? true : undefined), 'a notification');
    } finally {
      expect(await w.stop()).toBe(0);
    }
    expect(hook.bodies()).toEqual([
      expect.objectContaining({
        event: 'awaiting-approval',
        severity: 'warning',
        title: '2 jobs awaiting approval',
        jobs: { 'awaiting-approval': 2 },
      }),
    ]);
    // Why, as failed quotes its errors: each job's reason as its errors.txt has it.
    expect(hook.bodies()[0]?.problem).toMatch(
      /^2 reasons: big\.yaml:\d+:\d+: jobs\[0\]: awaiting approval: estimate [\d,.]+ USD is over maxJobCost 1\.00 USD \(htorder approve\) \| big\.yaml:\d+:\d+: jobs\[1\]: /,
    );
  });
});
