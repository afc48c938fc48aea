import type { Bindings, ChildLoggerOptions, Logger } from 'pino';

/** pino's own level numbers (htorder defines no custom levels); `silent` is above every line. */
const LEVEL_VALUES: ReadonlyMap<string, number> = new Map([
  ['trace', 10],
  ['debug', 20],
  ['info', 30],
  ['warn', 40],
  ['error', 50],
  ['fatal', 60],
  ['silent', Number.POSITIVE_INFINITY],
]);

const LINE_METHODS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;

function levelValue(level: string): number {
  const value = LEVEL_VALUES.get(level);
  // pino's own words for a level it does not know, thrown where pino would throw them.
  if (value === undefined) throw new Error(`unknown level ${level}`);
  return value;
}

/**
 * A logger that becomes a pino logger (made by `make`, given the level it has by then) only when
 * a line at an enabled level is logged or something else of pino's is asked for. Loading pino
 * and its dependencies (sonic-boom, the serializers, fast-redact compiling the redact paths)
 * costs ~16 ms of CPU on the critical path of every command that talks to the API, and at the
 * default level (`warn`) most runs never write a line: a call at a disabled level costs a
 * comparison and loads nothing.
 *
 * Why a Proxy typed as pino's Logger, not a smaller interface of our own: `Logger` is part of
 * the library's API (src/index.ts) and has always been pino's; a library user may call anything
 * of pino's on what createLogger returns (`flush`, `bindings`, `on('level-change')`). The
 * members htorder uses are answered here without pino; any other is forwarded to the real pino
 * logger, made on that first use, so the type stays true. Once made, every call goes to it and
 * it alone decides (the level, the hooks, the redaction): the lines are those a pino logger made
 * up front writes, handed to it in the order they were logged (the first one loads pino
 * synchronously, before it returns).
 */
export function lazyLogger(level: string, make: (level: string) => Logger): Logger {
  // pino's words for a default level it does not know.
  if (!LEVEL_VALUES.has(level)) throw new Error(`default level:${level} must be included in custom levels`);
  return lazy(
    level,
    () => level,
    (own) => make(own ?? level),
  );
}

/**
 * `own`: the level set on this logger itself; a child without one follows its parent's level,
 * as pino's children do (they inherit it through their prototype until their own is set).
 */
function lazy(own: string | undefined, inherited: () => string, make: (own: string | undefined) => Logger): Logger {
  let real: Logger | undefined;
  const realize = (): Logger => {
    real ??= make(own);
    return real;
  };
  const currentLevel = (): string => (real === undefined ? (own ?? inherited()) : real.level);
  const line = (name: (typeof LINE_METHODS)[number]) => {
    const value = levelValue(name);
    return (...args: unknown[]): void => {
      if (real === undefined && value < levelValue(own ?? inherited())) return;
      const logger = realize();
      Reflect.apply(logger[name], logger, args);
    };
  };
  const facade = {
    get level(): string {
      return currentLevel();
    },
    set level(next: string) {
      if (real !== undefined) {
        real.level = next;
        return;
      }
      levelValue(next);
      own = next;
    },
    isLevelEnabled(name: string): boolean {
      if (real !== undefined) return real.isLevelEnabled(name);
      const value = LEVEL_VALUES.get(name);
      return value !== undefined && value >= levelValue(currentLevel());
    },
    /**
     * A child keeps pino's semantics: its bindings on every line; its own level if one is given
     * that differs from the parent's, else the parent's, following the parent's later changes.
     */
    child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
      if (real !== undefined) return real.child(bindings, options);
      const parentLevel = currentLevel();
      const childOwn = options?.level !== undefined && options.level !== parentLevel ? options.level : undefined;
      if (childOwn !== undefined) levelValue(childOwn);
      const { level: _given, ...rest } = options ?? {};
      return lazy(childOwn, currentLevel, (ownNow) => {
        const child = realize().child(bindings, rest);
        // Set on the child itself (pino then keeps it apart from the parent's), even if it
        // happens to equal the parent's level by now.
        if (ownNow !== undefined) child.level = ownNow;
        return child;
      });
    },
    silent(): void {},
    fatal: line('fatal'),
    error: line('error'),
    warn: line('warn'),
    info: line('info'),
    debug: line('debug'),
    trace: line('trace'),
  };
  return new Proxy(facade, {
    get(target, prop) {
      if (Object.hasOwn(target, prop)) return Reflect.get(target, prop);
      // A logger returned from an async function is probed for `then`; pino has none, and
      // answering that must not load it.
      if (prop === 'then' && real === undefined) return undefined;
      const logger = realize();
      const value: unknown = Reflect.get(logger, prop);
      return typeof value === 'function' ? value.bind(logger) : value;
    },
    set(target, prop, value) {
      return Object.hasOwn(target, prop) ? Reflect.set(target, prop, value) : Reflect.set(realize(), prop, value);
    },
    has(target, prop) {
      return prop in target || prop in realize();
    },
    // The proxy's type is pino's Logger: every member the facade lacks is read from pino's own logger above.
  }) as unknown as Logger;
}
