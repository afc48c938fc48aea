import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../../src/core/config/config-file.js';
import { notifyWebhooks } from '../../../src/core/config/notify-config.js';
import { resolveSettings } from '../../../src/core/config/resolve-settings.js';
import { UsageError } from '../../../src/core/errors.js';
import { tempDirPerTest } from '../../support/temp-files.js';

const SLACK = 'https://hooks.slack.com/services/T0001/B0002/Zx9SecretToken42';
const TEAMS =
  'https://prod-01.westus.logic.azure.com:443/workflows/abc/triggers/manual/paths/invoke?api-version=1&sig=S1gn4ture';

function error(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error('expected a UsageError');
}

async function webhooksOf(yaml: string | undefined, env: Record<string, string> = {}, flags = {}) {
  const dir = await tempDirPerTest('htorder-notify-config-');
  const extra: Record<string, string> = {};
  if (yaml !== undefined) {
    const path = join(dir, 'config.yaml');
    await writeFile(path, yaml, { mode: 0o600 });
    extra.HTORDER_CONFIG = path;
  }
  return notifyWebhooks(resolveSettings({ env: { ...env, ...extra }, flags, cwd: dir, home: dir }));
}

describe('notify configuration', () => {
  it('a config file section: each webhook with its format, events, threshold and digest', async () => {
    const hooks = await webhooksOf(
      [
        'notify:',
        '  webhooks:',
        `    - url: ${SLACK}`,
        '      name: ops-slack',
        '      on: [failed, in-doubt, done]',
        '      digestAt: "8:30"',
        `    - url: "${TEAMS}"`,
        '      apiUnavailableMs: 60000',
        '    - url: http://127.0.0.1:9/hook',
        '      format: json',
        '',
      ].join('\n'),
    );
    expect(hooks.map((h) => ({ ...h, url: undefined }))).toEqual([
      {
        label: 'ops-slack',
        format: 'slack',
        events: ['failed', 'in-doubt', 'done'],
        apiUnavailableMs: 600_000,
        digestAt: '08:30',
        url: undefined,
      },
      {
        label: 'webhook 2 (https://prod-01.westus.logic.azure.com/…)',
        format: 'teams',
        events: ['failed', 'in-doubt', 'api-unavailable', 'api-recovered', 'awaiting-approval'],
        apiUnavailableMs: 60_000,
        url: undefined,
      },
      {
        label: 'webhook 3 (http://127.0.0.1:9/…)',
        format: 'json',
        events: ['failed', 'in-doubt', 'api-unavailable', 'api-recovered', 'awaiting-approval'],
        apiUnavailableMs: 600_000,
        url: undefined,
      },
    ]);
    expect(hooks[0]?.url).toBe(SLACK);
  });

  it('the simple case: HTORDER_NOTIFY_URL (several, space-separated) with the notify* settings; flags outrank env', async () => {
    const hooks = await webhooksOf(
      undefined,
      { HTORDER_NOTIFY_URL: `${SLACK}  http://localhost:8080/x`, HTORDER_NOTIFY_ON: 'failed' },
      { notifyOn: 'failed,api-unavailable', notifyApiUnavailableMs: '120000' },
    );
    expect(hooks.map((h) => [h.format, h.events, h.apiUnavailableMs])).toEqual([
      ['slack', ['failed', 'api-unavailable'], 120_000],
      ['json', ['failed', 'api-unavailable'], 120_000],
    ]);
    expect(await webhooksOf(undefined)).toEqual([]);
  });

  it('errors in the section name file:line:col and the field, never the URL', () => {
    const at = (yaml: string) => error(() => parseConfigFile(yaml, '/etc/htorder.yaml'));
    expect(at('notify:\n  webhooks:\n    - url: https://x.example/h\n      format: slak\n')).toBe(
      'config file /etc/htorder.yaml:4:15: notify.webhooks[1].format: must be one of auto, slack, teams, json, got "slak"',
    );
    expect(at('notify:\n  webhooks:\n    - url: https://x.example/h\n      on: [failed, faild]\n')).toBe(
      'config file /etc/htorder.yaml:4:11: notify.webhooks[1].on: unknown event "faild" ' +
        '(known: failed, in-doubt, api-unavailable, api-recovered, done, awaiting-approval, dispatched)',
    );
    expect(at('notify:\n  webhooks:\n    - name: x\n')).toBe(
      'config file /etc/htorder.yaml:3:7: notify.webhooks[1]: has no "url"',
    );
    expect(at('notify:\n  webhooks:\n    - url: https://x.example/h\n      digestAt: "25:00"\n')).toMatch(
      /^config file \/etc\/htorder.yaml:4:17: notify.webhooks\[1\].digestAt: must be a time of day as HH:MM/,
    );
    expect(at('notify:\n  hooks: []\n')).toBe(
      'config file /etc/htorder.yaml:2:3: notify.hooks: unknown key (expected "webhooks")',
    );
    expect(at(`notify:\n  webhooks:\n    - url: ${SLACK}\n      colour: red\n`)).toMatch(
      /^config file \/etc\/htorder.yaml:4:7: notify.webhooks\[1\].colour: unknown key/,
    );
  });

  it('plain http is let through to loopback only (127.0.0.1, localhost, [::1]); look-alikes are refused', async () => {
    const refused = (url: string, env: Record<string, string> = {}) =>
      webhooksOf(undefined, { HTORDER_NOTIFY_URL: url, ...env }).then(
        () => '',
        (err: Error) => err.message,
      );
    for (const url of [
      'http://127.0.0.1:9/hook',
      'http://localhost:8080/x',
      'http://LOCALHOST/x',
      'http://[::1]:9/h',
    ]) {
      expect(await refused(url), url).toBe('');
    }
    // The same exception in the config file.
    expect(await webhooksOf('notify:\n  webhooks:\n    - url: http://[::1]:9/hook\n')).toHaveLength(1);
    // The host is what the URL parser says, not a substring: a user part, a fragment or a
    // longer name that contains a loopback name still sends the token across the network.
    for (const url of [
      'http://localhost.example.com/h',
      'http://127.0.0.1.example.com/h',
      'http://127.0.0.1@hooks.example.com/h',
      'http://hooks.example.com/h#@127.0.0.1',
      'http://10.0.0.1/h',
      'http://127.0.0.2/h',
      'http://[::2]/h',
    ]) {
      expect(await refused(url), url).toMatch(
        /^HTORDER_NOTIFY_URL: webhook .* is not https; refusing to send its token/,
      );
    }
    // allowInsecure is the one way past it (test rigs).
    expect(await refused('http://hooks.example.com/h', { HTORDER_ALLOW_INSECURE: '1' })).toBe('');
  });

  it('a webhook that is not https (other than loopback) is refused, named by its place and host only', async () => {
    // The second entry: numbered from 1, as routes[N] are.
    const message = await webhooksOf(
      `notify:\n  webhooks:\n    - url: ${SLACK}\n    - url: http://hooks.example.com/services/SECRETPATH\n`,
    ).then(
      () => '',
      (err: Error) => err.message,
    );
    expect(message).toMatch(
      /^config file .*config\.yaml:4:12: notify\.webhooks\[2\]\.url: webhook http:\/\/hooks\.example\.com\/… is not https/,
    );
    expect(message).not.toContain('SECRETPATH');
    const env = await webhooksOf(undefined, { HTORDER_NOTIFY_URL: 'http://hooks.example.com/SECRETPATH' }).then(
      () => '',
      (err: Error) => err.message,
    );
    expect(env).toMatch(/^HTORDER_NOTIFY_URL: webhook http:\/\/hooks\.example\.com\/… is not https/);
    expect(env).not.toContain('SECRETPATH');
    const bad = await webhooksOf(undefined, {
      HTORDER_NOTIFY_URL: SLACK,
      HTORDER_NOTIFY_ON: 'failed,everything',
    }).then(
      () => '',
      (err: Error) => err.message,
    );
    expect(bad).toBe(
      'HTORDER_NOTIFY_ON: unknown event "everything" (known: failed, in-doubt, api-unavailable, api-recovered, done, awaiting-approval, dispatched)',
    );
  });
});
