import type { LineCounter, Node as YamlNode } from 'yaml';
import { UsageError } from '../errors.js';
import type { Settings } from './resolve-settings.js';
import { SETTINGS } from './settings.js';
import { isClearTextUrl } from './url-security.js';
import { yamlLocator, yamlPackage } from './yaml-location.js';

/**
 * Notifications' configuration (docs/notifications.md): the `notify` section of the config
 * file, with errors naming `file:line:col`, and the `notify*` settings for the simple case
 * (HTORDER_NOTIFY_URL), which also give the defaults of what a webhook of the file leaves out.
 * A webhook URL is a secret (Slack's path is its token, a Teams workflow URL carries a
 * signature): no message here ever repeats one, only redactWebhookUrl's host.
 */

export const NOTIFY_EVENTS = ['failed', 'in-doubt', 'api-unavailable', 'api-recovered', 'done'] as const;
export type NotifyEventName = (typeof NOTIFY_EVENTS)[number];

export const NOTIFY_FORMATS = ['slack', 'teams', 'json'] as const;
export type NotifyFormat = (typeof NOTIFY_FORMATS)[number];

export interface WebhookConfig {
  url: string;
  /** For logs: the configured name, else `webhook N (https://host/…)`; never the URL. */
  label: string;
  format: NotifyFormat;
  events: readonly NotifyEventName[];
  apiUnavailableMs: number;
  /** `HH:MM`, local time: a digest of the day's counts then, every day. */
  digestAt?: string;
}

/** One webhook as the config file writes it; absent keys take the settings' values. */
export interface NotifyFileWebhook {
  url: string;
  /** `file:line:col` of the entry, for errors found later (a URL that is not https). */
  at: string;
  /** The entry's field, `notify.webhooks[N]` (numbered from 1, as routes are), for the same errors. */
  field: string;
  name?: string;
  format?: NotifyFormat | 'auto';
  events?: NotifyEventName[];
  apiUnavailableMs?: number;
  digestAt?: string;
}

export interface NotifySection {
  webhooks: NotifyFileWebhook[];
}

const WEBHOOK_KEYS = ['url', 'name', 'format', 'on', 'apiUnavailableMs', 'digestAt'];

/**
 * The `notify` node of a config file (parsed by config-file.ts, with positions), or undefined
 * when the file has none.
 */
export function parseNotifySection(
  sectionNode: unknown,
  ctx: { path: string; lineCounter: LineCounter },
): NotifySection | undefined {
  const { isMap, isScalar, isSeq } = yamlPackage();
  const { path, lineCounter } = ctx;
  const section = sectionNode as YamlNode | null | undefined;
  if (section === undefined || section === null) return undefined;
  const at = yamlLocator(path, lineCounter);
  const fail = (node: YamlNode | null | undefined, field: string, message: string): never => {
    throw new UsageError(`config file ${at(node)}: ${field}: ${message}`);
  };
  if (isScalar(section) && section.value === null) return { webhooks: [] };
  if (!isMap(section)) return fail(section, 'notify', 'must be a mapping with a "webhooks" list');
  for (const pair of section.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '';
    if (key !== 'webhooks') fail(pair.key as YamlNode, `notify.${key}`, 'unknown key (expected "webhooks")');
  }
  const list = section.get('webhooks', true) as YamlNode | undefined;
  if (list === undefined || (isScalar(list) && list.value === null)) return { webhooks: [] };
  if (!isSeq(list)) return fail(list, 'notify.webhooks', 'must be a list of webhooks');
  const webhooks = list.items.map((item, i) => {
    // Numbered from 1, as routes[N] are and as a user counts the list's entries.
    const field = `notify.webhooks[${i + 1}]`;
    const node = item as YamlNode;
    if (!isMap(node)) return fail(node, field, 'must be a mapping with at least a "url"');
    const entry: Partial<NotifyFileWebhook> & { at: string; field: string } = { at: at(node), field };
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : '';
      const value = pair.value as YamlNode | null;
      const name = `${field}.${key}`;
      if (!WEBHOOK_KEYS.includes(key)) {
        fail(pair.key as YamlNode, name, `unknown key (known: ${WEBHOOK_KEYS.join(', ')})`);
      }
      const scalar = isScalar(value) ? value.value : undefined;
      switch (key) {
        case 'url':
          if (typeof scalar !== 'string' || scalar.trim() === '') fail(value, name, 'must be a URL');
          entry.url = checkWebhookUrl(String(scalar).trim(), (why) => fail(value, name, why));
          entry.at = at(value);
          break;
        case 'name':
          if (typeof scalar !== 'string' || scalar.trim() === '') fail(value, name, 'must be text');
          entry.name = String(scalar).trim();
          break;
        case 'format': {
          const formats = ['auto', ...NOTIFY_FORMATS];
          if (typeof scalar !== 'string' || !formats.includes(scalar)) {
            fail(value, name, `must be one of ${formats.join(', ')}, got ${JSON.stringify(scalar ?? null)}`);
          }
          entry.format = scalar as NotifyFileWebhook['format'];
          break;
        }
        case 'on': {
          const words = isSeq(value)
            ? value.items.map((v) => (isScalar(v) ? String(v.value) : ''))
            : typeof scalar === 'string'
              ? scalar.split(',')
              : fail(value, name, 'must be a list of events');
          entry.events = parseNotifyEvents(words, (why) => fail(value, name, why));
          break;
        }
        case 'apiUnavailableMs': {
          const { min, max } = SETTINGS.notifyApiUnavailableMs.type;
          if (typeof scalar !== 'number' || !Number.isInteger(scalar) || scalar < min || scalar > max) {
            fail(value, name, `must be a whole number of milliseconds from ${min} to ${max}`);
          }
          entry.apiUnavailableMs = scalar as number;
          break;
        }
        case 'digestAt':
          entry.digestAt = parseDigestAt(String(scalar ?? ''), (why) => fail(value, name, why));
          break;
      }
    }
    if (entry.url === undefined) fail(node, field, 'has no "url"');
    return entry as NotifyFileWebhook;
  });
  return { webhooks };
}

/**
 * Every webhook to notify: those of the config file's `notify` section, then each URL of the
 * `notifyUrl` setting. The settings give what a file's webhook does not say (events, format,
 * the outage threshold, the digest time). Values that are wrong throw UsageError (exit 2)
 * naming their source, never a URL.
 */
export function notifyWebhooks(settings: Settings): WebhookConfig[] {
  const allowInsecure = settings.get('allowInsecure') === true;
  const source = (name: 'notifyOn' | 'notifyDigestAt' | 'notifyUrl'): string =>
    settings.raw(name)?.source ?? SETTINGS[name].env;
  const onText = settings.get('notifyOn') ?? SETTINGS.notifyOn.default;
  const events = parseNotifyEvents(onText.split(','), (why) => {
    throw new UsageError(`${source('notifyOn')}: ${why}`);
  });
  const digestText = settings.get('notifyDigestAt');
  const digestAt =
    digestText === undefined
      ? undefined
      : parseDigestAt(digestText, (why) => {
          throw new UsageError(`${source('notifyDigestAt')}: ${why}`);
        });
  const format = settings.get('notifyFormat') ?? SETTINGS.notifyFormat.default;
  const apiUnavailableMs = settings.get('notifyApiUnavailableMs') ?? SETTINGS.notifyApiUnavailableMs.default;
  const out: WebhookConfig[] = [];
  /** `at`: where the URL was given, `file:line:col: field` or the setting's source. */
  const add = (w: Omit<WebhookConfig, 'label'> & { name?: string }, at: string): void => {
    if (!allowInsecure && isClearTextUrl(w.url)) {
      throw new UsageError(
        `${at}: webhook ${redactWebhookUrl(w.url)} is not https; refusing to send its token in clear ` +
          '(plain http only to loopback, or set allowInsecure)',
      );
    }
    const n = out.length + 1;
    const { name, ...rest } = w;
    out.push({ ...rest, label: name ?? `webhook ${n} (${redactWebhookUrl(w.url)})` });
  };
  const file = settings.configFile;
  for (const w of file?.notify?.webhooks ?? []) {
    add(
      {
        url: w.url,
        ...(w.name === undefined ? {} : { name: w.name }),
        format: resolveFormat(w.format ?? format, w.url),
        events: w.events ?? events,
        apiUnavailableMs: w.apiUnavailableMs ?? apiUnavailableMs,
        ...((w.digestAt ?? digestAt) === undefined ? {} : { digestAt: w.digestAt ?? digestAt }),
      },
      `config file ${w.at}: ${w.field}.url`,
    );
  }
  const urls = settings.get('notifyUrl');
  for (const raw of urls === undefined ? [] : urls.split(/\s+/).filter(Boolean)) {
    const url = checkWebhookUrl(raw, (why) => {
      throw new UsageError(`${source('notifyUrl')}: ${why}`);
    });
    add(
      {
        url,
        format: resolveFormat(format, url),
        events,
        apiUnavailableMs,
        ...(digestAt === undefined ? {} : { digestAt }),
      },
      source('notifyUrl'),
    );
  }
  return out;
}

/**
 * A webhook URL as it may be shown: scheme and host only. Slack's token is its path, a Teams
 * workflow's signature its query; neither survives.
 */
export function redactWebhookUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}/…`;
  } catch {
    return '[not a URL]';
  }
}

/**
 * The payload a host expects, for `format: auto`: Slack's incoming webhooks live on
 * hooks.slack.com; Teams' Workflows webhooks on Power Automate / Logic Apps hosts (and the
 * retiring Office 365 connectors on *.webhook.office.com). Anything else gets plain JSON.
 */
function resolveFormat(format: NotifyFormat | 'auto' | string, url: string): NotifyFormat {
  if (format !== 'auto') return format as NotifyFormat;
  const host = new URL(url).hostname.toLowerCase();
  if (host === 'hooks.slack.com') return 'slack';
  if (/(^|\.)(webhook\.office\.com|logic\.azure\.com|powerautomate\.com|powerplatform\.com)$/.test(host)) {
    return 'teams';
  }
  return 'json';
}

/** An absolute http(s) URL; the message never repeats it (it is a secret). */
function checkWebhookUrl(raw: string, fail: (why: string) => never): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail('is not an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return fail('must be an https URL');
  return url.toString();
}

function parseNotifyEvents(words: readonly string[], fail: (why: string) => never): NotifyEventName[] {
  const events: NotifyEventName[] = [];
  for (const word of words.map((w) => w.trim()).filter(Boolean)) {
    if (!(NOTIFY_EVENTS as readonly string[]).includes(word)) {
      fail(`unknown event "${word}" (known: ${NOTIFY_EVENTS.join(', ')})`);
    }
    if (!events.includes(word as NotifyEventName)) events.push(word as NotifyEventName);
  }
  return events;
}

function parseDigestAt(text: string, fail: (why: string) => never): string {
  const m = /^([01]?\d|2[0-3]):([0-5]\d)$/.exec(text.trim());
  if (!m) return fail(`must be a time of day as HH:MM (24-hour, local time), got ${JSON.stringify(text)}`);
  return `${m[1]?.padStart(2, '0')}:${m[2]}`;
}
