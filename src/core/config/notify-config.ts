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

export const NOTIFY_EVENTS = [
  'failed',
  'in-doubt',
  'api-unavailable',
  'api-recovered',
  'done',
  'awaiting-approval',
  'dispatched',
] as const;
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

type Fail = (why: string) => never;
const nonBlank = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';
const FILE_FORMATS: readonly string[] = SETTINGS.notifyFormat.type.values;

/** Each key of a webhook entry, and what its value (as plain data) makes of it. */
const WEBHOOK_KEYS: Record<string, (value: unknown, fail: Fail) => Partial<NotifyFileWebhook>> = {
  url: (v, fail) => ({ url: nonBlank(v) ? checkWebhookUrl(v.trim(), fail) : fail('must be a URL') }),
  name: (v, fail) => ({ name: nonBlank(v) ? v.trim() : fail('must be text') }),
  format: (v, fail) => ({
    format: FILE_FORMATS.includes(v as string)
      ? (v as NotifyFileWebhook['format'])
      : fail(`must be one of ${FILE_FORMATS.join(', ')}, got ${JSON.stringify(v ?? null)}`),
  }),
  on: (v, fail) => {
    const words = Array.isArray(v)
      ? v.map(String)
      : typeof v === 'string'
        ? v.split(',')
        : fail('must be a list of events');
    return { events: parseNotifyEvents(words, fail) };
  },
  apiUnavailableMs: (v, fail) => {
    const { min, max } = SETTINGS.notifyApiUnavailableMs.type;
    const ok = typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
    return { apiUnavailableMs: ok ? v : fail(`must be a whole number of milliseconds from ${min} to ${max}`) };
  },
  digestAt: (v, fail) => ({ digestAt: parseDigestAt(String(v ?? ''), fail) }),
};

/**
 * The `notify` node of a config file (parsed by config-file.ts, with positions), or undefined
 * when the file has none.
 */
export function parseNotifySection(
  sectionNode: unknown,
  ctx: { path: string; lineCounter: LineCounter },
): NotifySection | undefined {
  const { isMap, isNode, isScalar, isSeq } = yamlPackage();
  const section = sectionNode as YamlNode | null | undefined;
  if (section === undefined || section === null) return undefined;
  const at = yamlLocator(ctx.path, ctx.lineCounter);
  const fail = (node: unknown, field: string, message: string): never => {
    throw new UsageError(`config file ${at(node)}: ${field}: ${message}`);
  };
  const keyOf = (key: unknown): string => (isScalar(key) ? String(key.value) : '');
  if (isScalar(section) && section.value === null) return { webhooks: [] };
  if (!isMap(section)) return fail(section, 'notify', 'must be a mapping with a "webhooks" list');
  for (const { key } of section.items) {
    if (keyOf(key) !== 'webhooks') fail(key, `notify.${keyOf(key)}`, 'unknown key (expected "webhooks")');
  }
  const list = section.get('webhooks', true) as YamlNode | undefined;
  if (list === undefined || (isScalar(list) && list.value === null)) return { webhooks: [] };
  if (!isSeq(list)) return fail(list, 'notify.webhooks', 'must be a list of webhooks');
  const webhooks = list.items.map((node, i) => {
    // Numbered from 1, as routes[N] are and as a user counts the list's entries.
    const field = `notify.webhooks[${i + 1}]`;
    if (!isMap(node)) return fail(node, field, 'must be a mapping with at least a "url"');
    const entry: Partial<NotifyFileWebhook> & { at: string; field: string } = { at: at(node), field };
    for (const pair of node.items) {
      const key = keyOf(pair.key);
      const read = Object.hasOwn(WEBHOOK_KEYS, key) ? WEBHOOK_KEYS[key] : undefined;
      if (!read)
        return fail(pair.key, `${field}.${key}`, `unknown key (known: ${Object.keys(WEBHOOK_KEYS).join(', ')})`);
      const v = pair.value;
      Object.assign(
        entry,
        read(isNode(v) ? v.toJSON() : v, (why) => fail(v, `${field}.${key}`, why)),
      );
      if (key === 'url') entry.at = at(v);
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
  const source = (name: 'notifyOn' | 'notifyDigestAt' | 'notifyUrl'): string =>
    settings.raw(name)?.source ?? SETTINGS[name].env;
  const failAt =
    (name: 'notifyOn' | 'notifyDigestAt' | 'notifyUrl') =>
    (why: string): never => {
      throw new UsageError(`${source(name)}: ${why}`);
    };
  const digestText = settings.get('notifyDigestAt');
  const defaults = {
    format: settings.get('notifyFormat') as NotifyFormat | 'auto',
    events: parseNotifyEvents(settings.get('notifyOn').split(','), failAt('notifyOn')),
    apiUnavailableMs: settings.get('notifyApiUnavailableMs'),
    digestAt: digestText === undefined ? undefined : parseDigestAt(digestText, failAt('notifyDigestAt')),
  };
  const urls = settings.get('notifyUrl')?.split(/\s+/).filter(Boolean) ?? [];
  /** `at`: where the URL was given, `file:line:col: field` or the setting's source. */
  const hooks: (typeof defaults & { url: string; at: string; name?: string })[] = [
    ...(settings.configFile?.notify?.webhooks ?? []).map((w) => ({
      ...defaults,
      ...w,
      at: `config file ${w.at}: ${w.field}.url`,
    })),
    ...urls.map((raw) => ({ ...defaults, url: checkWebhookUrl(raw, failAt('notifyUrl')), at: source('notifyUrl') })),
  ];
  return hooks.map((w, i) => {
    if (!settings.get('allowInsecure') && isClearTextUrl(w.url)) {
      throw new UsageError(
        `${w.at}: webhook ${redactWebhookUrl(w.url)} is not https; refusing to send its token in clear ` +
          '(plain http only to loopback, or set allowInsecure)',
      );
    }
    return {
      url: w.url,
      label: w.name ?? `webhook ${i + 1} (${redactWebhookUrl(w.url)})`,
      format: resolveFormat(w.format, w.url),
      events: w.events,
      apiUnavailableMs: w.apiUnavailableMs,
      digestAt: w.digestAt,
    };
  });
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
function resolveFormat(format: NotifyFormat | 'auto', url: string): NotifyFormat {
  if (format !== 'auto') return format;
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
