import { notifyWebhooks } from '../core/config/notify-config.js';
import type { Settings } from '../core/config/resolve-settings.js';
import { SETTING_NAMES, setting, type SettingName } from '../core/config/settings.js';
import { UsageError } from '../core/errors.js';
import { checkLedgerUrl } from '../storage/pg/pg-connection.js';
import { parseS3Url } from '../storage/s3/s3-url.js';
import { isSafeName } from '../watch/sources/drop-names.js';

/** Settings that name a bucket and prefix, `s3://BUCKET/PREFIX/`. */
const S3_URL_SETTINGS = ['artworkStore', 'bucketLedger'] as const satisfies SettingName[];

/** The names of a drop location's sub-folders (or sub-prefixes): each one plain name. */
const DROP_FOLDER_SETTINGS = ['processingDir', 'doneDir', 'failedDir', 'heldDir'] as const satisfies SettingName[];

/**
 * Every setting checked as a command starts, before anything is read, watched or sent: each
 * value in force parsed by its type (Settings.checkAll), then what a type cannot say — a drop
 * folder name that is one plain name, an artwork store or bucket ledger that is an s3:// URL, a ledger database's URL, the webhooks and
 * their events and digest time. A bad one throws UsageError (exit 2) naming the setting and
 * where it was set (docs/configuration.md#configuration-errors-exit-code-2), whether or not this
 * command reads it: a mistyped limit must never wait for the first order to be found out.
 */
export function checkSettings(settings: Settings): void {
  settings.checkAll();
  const source = (name: SettingName): string => settings.raw(name)?.source ?? name;
  for (const name of DROP_FOLDER_SETTINGS) {
    const value = settings.get(name);
    if (!isSafeName(value)) {
      throw new UsageError(`${source(name)} must be one plain folder name (no / or \\, not . or ..), got "${value}"`);
    }
  }
  for (const name of S3_URL_SETTINGS) {
    const url = settings.get(name);
    const where = url === undefined ? undefined : parseS3Url(url);
    if (where && 'error' in where) throw new UsageError(`${source(name)}: ${where.error}`);
  }
  const ledgerUrl = settings.get('ledgerUrl');
  if (ledgerUrl !== undefined) {
    try {
      checkLedgerUrl(ledgerUrl, settings.get('allowInsecure') === true, process.env);
    } catch (err) {
      const source = settings.raw('ledgerUrl')?.source ?? 'ledgerUrl';
      throw err instanceof UsageError ? new UsageError(`${source}: ${err.message.replace(/^ledgerUrl:? ?/, '')}`) : err;
    }
  }
  notifyWebhooks(settings);
}

/**
 * What `--log-level debug` shows at a command's start: each setting given anywhere but the
 * defaults, with its value (a secret's only as `[set]`) and where it came from, e.g.
 * `maxJobCost=500 (maxJobCost of profile "shop" in /etc/htorder/config.yaml)`: the answer to
 * "which value is in force, and why".
 */
export function settingsInForce(settings: Settings): string[] {
  return SETTING_NAMES.flatMap((name) => {
    const raw = settings.raw(name);
    if (raw === undefined || raw.layer === 'default') return [];
    const value = setting(name).secret ? '[set]' : String(settings.get(name));
    return [`${name}=${value} (${raw.source})`];
  });
}
