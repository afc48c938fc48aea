import { type DestinationStream, type Logger as PinoLogger, type LevelWithSilent, pino } from 'pino';
import { printableLines } from '../printable.js';
import { redactDeep, scrubServerText } from './redact.js';
import { lateRequire } from '../late-require.js';

export type Logger = PinoLogger;
export type LogLevel = LevelWithSilent;

export interface LoggerOptions {
  /** Default `warn`: the CLI's stdout is for JSON and its stderr for humans, so logs stay quiet. */
  level?: LogLevel;
  /** Human-readable lines (pino-pretty) instead of JSON lines. */
  pretty?: boolean;
  /** Colours in pretty lines; the caller decides (a TTY and no NO_COLOR: see wantsColor). Default off. */
  colorize?: boolean;
  /** Where lines go; default stderr (fd 2), never stdout, which carries machine output. */
  destination?: DestinationStream | NodeJS.WritableStream;
}

export function isLogLevel(value: string): value is LogLevel {
  return value === 'silent' || Object.hasOwn(pino.levels.values, value);
}

/**
 * The one pino logger of a process. Redaction happens in two places
 * because pino's own `redact` only knows fixed paths: the `log` formatter deep-redacts every key
 * that looks like a secret or token (whatever its depth or spelling), and the `logMethod` hook
 * strips query strings from URLs written into the message text.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'warn';
  const destination = options.destination ?? (options.pretty ? undefined : pino.destination({ fd: 2, sync: true }));
  const stream = options.pretty
    ? prettyStream()({
        destination: (destination as NodeJS.WritableStream | undefined) ?? 2,
        colorize: options.colorize === true,
        sync: true,
      })
    : destination;
  // Secrets scrubbed, signed URLs cut; in pretty mode (a person's terminal) control
  // characters escaped too, since pino-pretty prints the message as it is. Chosen once per
  // logger, not per line.
  const clean = options.pretty ? (a: string): string => printableLines(scrubServerText(a)) : scrubServerText;
  return pino(
    {
      level,
      base: undefined,
      // Fixed paths first (cheap); the formatter below catches everything else.
      redact: {
        paths: ['headers.authorization', 'req.headers.authorization', 'client_secret', 'access_token'],
        censor: '[redacted]',
      },
      formatters: {
        log: (obj) => redactDeep(obj) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          const cleaned = args.map((a) => (typeof a === 'string' ? clean(a) : a)) as Parameters<typeof method>;
          method.apply(this, cleaned);
        },
      },
    },
    stream as DestinationStream,
  );
}

/**
 * pino-pretty and its dependencies (some 45 modules), loaded only for a logger that prints for a
 * person: a run whose stderr is a file, a pipe or a container log writes JSON lines and never
 * needs them.
 */
function prettyStream(): typeof import('pino-pretty').PinoPretty {
  return lateRequire<typeof import('pino-pretty')>('pino-pretty').PinoPretty;
}

/**
 * Colour only for a person at a terminal: never when the stream is not a TTY (a file, a
 * pipe, a container log) and never when NO_COLOR is set to anything non-empty (no-color.org).
 */
export function wantsColor(stream: { isTTY?: boolean }, env: Record<string, string | undefined>): boolean {
  return stream.isTTY === true && !env.NO_COLOR;
}

/** A logger that writes nothing; the default for library callers that pass none. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
