import type { NotifyFormat } from '../../core/config/notify-config.js';
import { duration, type Notification } from './notification.js';

/**
 * One notification in each webhook's format. Pure. Text from outside (file names, locations,
 * problems, order numbers inside an API message) is neutralised for the receiver's markup, so
 * a file called `<!channel>.csv` pings nobody and `**x**` stays as written.
 */
export function payloadFor(format: NotifyFormat, n: Notification): unknown {
  switch (format) {
    case 'slack':
      return slackPayload(n);
    case 'teams':
      return teamsPayload(n);
    case 'json':
      return { ...n, text: plainText(n) };
  }
}

/** One plain line, for receivers that show text (the JSON format's `text`). */
export function plainText(n: Notification): string {
  const parts = [`htorder: ${n.title}`];
  if (n.input) parts.push(n.input.name);
  if (n.problem) parts.push(n.problem);
  if (n.dispatch) {
    const d = n.dispatch;
    parts.push([`order ${d.shopOrderNumber}`, d.carrier, d.trackingNumber].filter(Boolean).join(' '));
  }
  return parts.join(' — ');
}

const SLACK_ICON: Record<Notification['severity'], string> = {
  error: ':x:',
  warning: ':warning:',
  ok: ':white_check_mark:',
  info: ':information_source:',
};

/**
 * Slack's incoming-webhook message: `text` (the notification's own line, and the fallback
 * where blocks are not shown) plus `blocks` (header, sections, context). Slack reads `&`, `<`
 * and `>` as markup in mrkdwn (`<!channel>` notifies everyone, `<url|label>` is a link) and
 * asks for exactly those three to be escaped as `&amp;`, `&lt;`, `&gt;`
 * (https://api.slack.com/reference/surfaces/formatting#escaping); text from outside is also
 * put in code spans or blocks, with its backticks replaced, so `*`, `_` and `~` stay literal.
 * Limits kept: header text ≤ 150 characters, section text ≤ 3000, at most 10 fields
 * (https://api.slack.com/reference/block-kit/blocks).
 */
function slackPayload(n: Notification): unknown {
  const icon = SLACK_ICON[n.severity];
  const blocks: unknown[] = [
    { type: 'header', text: { type: 'plain_text', text: clip(`${icon} htorder: ${n.title}`, 150), emoji: true } },
  ];
  const lines = facts(n).map(([label, value, outside]) => `*${label}* ${outside ? slackCode(value) : value}`);
  if (lines.length) blocks.push(section(lines.join('\n')));
  if (n.problem) blocks.push(section(`*Problem*\n\`\`\`${clip(slackEscape(noBackticks(n.problem)), 2900)}\`\`\``));
  const counts = countFields(n);
  for (let i = 0; i < counts.length; i += 10) {
    blocks.push({
      type: 'section',
      fields: counts.slice(i, i + 10).map(([label, value]) => ({ type: 'mrkdwn', text: `*${label}*\n${value}` })),
    });
  }
  blocks.push({
    type: 'context',
    elements: [{ type: 'mrkdwn', text: clip(`${slackEscape(n.origin)} · ${n.at}`, 3000) }],
  });
  const text = `${icon} htorder: ${n.title}${n.input ? ` ${slackCode(n.input.name)}` : ''}`;
  return { text: clip(text, 3000), blocks };
}

function section(text: string): unknown {
  return { type: 'section', text: { type: 'mrkdwn', text: clip(text, 3000) } };
}

/** Slack's three control characters as the entities Slack asks for. */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A code span, its content cut to keep two spans and their labels within a section's 3000. */
function slackCode(text: string): string {
  return `\`${clip(slackEscape(noBackticks(text)), 1400)}\``;
}

/** A backtick would end the code span or block early; U+02CB looks the same and does not. */
function noBackticks(text: string): string {
  return text.replace(/`/g, 'ˋ');
}

const TEAMS_COLOR: Record<Notification['severity'], string> = {
  error: 'Attention',
  warning: 'Warning',
  ok: 'Good',
  info: 'Default',
};

/**
 * Microsoft Teams: the message a Workflows webhook ("Post to a channel when a webhook request
 * is received", which replaces the retiring Office 365 connectors) posts — an activity of
 * `type: "message"` whose `attachments` hold one Adaptive Card, content type
 * `application/vnd.microsoft.card.adaptive`
 * (https://learn.microsoft.com/microsoftteams/platform/webhooks-and-connectors/how-to/add-incoming-webhook).
 * Version 1.4 is what Teams renders everywhere. TextBlock and FactSet read Markdown
 * (https://learn.microsoft.com/microsoftteams/platform/task-modules-and-cards/cards/cards-format),
 * so they carry only our own words and numbers; text from outside goes in a RichTextBlock's
 * TextRuns, which read no Markdown at all
 * (https://learn.microsoft.com/adaptive-cards/create/textfeatures), with `{{` broken so no
 * `{{DATE(…)}}` function is evaluated.
 */
function teamsPayload(n: Notification): unknown {
  const body: unknown[] = [
    {
      type: 'TextBlock',
      text: `htorder: ${n.title}`,
      weight: 'Bolder',
      size: 'Medium',
      color: TEAMS_COLOR[n.severity],
      wrap: true,
    },
  ];
  const row = (label: string, value: string, monospace: boolean): unknown => ({
    type: 'RichTextBlock',
    inlines: [
      { type: 'TextRun', text: `${label} `, weight: 'Bolder' },
      { type: 'TextRun', text: teamsText(value), ...(monospace ? { fontType: 'Monospace' } : {}) },
    ],
  });
  for (const [label, value, outside] of facts(n)) body.push(row(label, value, outside));
  if (n.problem) body.push(row('Problem', n.problem, true));
  const counts = countFields(n);
  if (counts.length) body.push({ type: 'FactSet', facts: counts.map(([title, value]) => ({ title, value })) });
  body.push({
    type: 'RichTextBlock',
    inlines: [{ type: 'TextRun', text: teamsText(`${n.origin} · ${n.at}`), isSubtle: true, size: 'Small' }],
  });
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          msteams: { width: 'Full' },
          body,
        },
      },
    ],
  };
}

/** Teams' template functions start with `{{`; a zero-width space between the braces disarms them. */
export function teamsText(text: string): string {
  return text.replace(/\{\{/g, '{\u200b{').replace(/\}\}/g, '}\u200b}');
}

/** What the message says beside its title, as label, text and whether the text is from outside (shown as code). */
function facts(n: Notification): [label: string, value: string, outside: boolean][] {
  const out: [string, string, boolean][] = [];
  if (n.input) out.push(['File', n.input.name, true], ['Now in', n.input.location, true]);
  if (n.outage) out.push(['Unavailable since', n.outage.since, false]);
  if (n.digest) out.push(['Period', `${n.digest.from} – ${n.digest.to}`, false]);
  if (n.durationMs !== undefined) out.push(['Took', duration(n.durationMs), false]);
  if (n.dispatch) {
    const d = n.dispatch;
    out.push(['Shop order', d.shopOrderNumber, true], ['Job', String(d.jobNumber), false]);
    if (d.carrier) out.push(['Carrier', d.carrier, true]);
    if (d.trackingNumber) out.push(['Tracking number', d.trackingNumber, true]);
    if (d.trackingLink) out.push(['Tracking link', d.trackingLink, true]);
    out.push(['Despatched', d.despatchDate, true]);
  }
  return out;
}

/** Label/number pairs: the input's jobs by status, or the digest's counts. Our words and numbers only. */
function countFields(n: Notification): [string, string][] {
  if (n.digest) {
    const d = n.digest;
    return [
      ['Inputs done', String(d.inputsDone)],
      ['Inputs failed', String(d.inputsFailed)],
      ['Inputs with jobs in doubt', String(d.inputsInDoubt)],
      ['API outages', String(d.apiOutages)],
      ...Object.entries(d.jobs).map(([status, count]): [string, string] => [`Jobs ${status}`, String(count)]),
    ];
  }
  return Object.entries(n.jobs ?? {}).map(([status, count]) => [`Jobs ${status}`, String(count)]);
}

/** At most `max` characters, never ending inside an `&…;` entity. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max - 1).replace(/&[a-z]*$/, '')}…`;
}
