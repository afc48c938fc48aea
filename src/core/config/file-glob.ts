/**
 * A route's file-name glob, matched in time linear in the name for each of its alternatives.
 * The names are a dropper's: a regular expression built from `*-*-*-*-*.csv` backtracks
 * polynomially on a name of dashes (seconds for 250 of them), and extglob repeats exponentially.
 * So braces and `@(a|b)`/`?(a|b)` are expanded into plain alternatives when the config is read,
 * and each alternative — literals, `?`, `[…]` and `*` — is matched by the two-pointer wildcard
 * scan, which returns to the last `*` only: at most name length × glob length steps.
 */

/** One character of a name: a literal (lower case), any character, or a bracket class. */
type Token = { kind: 'star' } | { kind: 'any' } | { kind: 'literal'; char: string } | { kind: 'class'; re: RegExp };

/** Alternatives one glob expands into, at most: `{a,b}{c,d}…` grows as a product. */
const MAX_ALTERNATIVES = 256;

class GlobError extends Error {}

/** A case-insensitive matcher of one file name; hidden names match only a glob that starts with `.`. */
export function compileFileGlob(glob: string): (name: string) => boolean {
  const parser = { glob, at: 0 };
  const alternatives = sequence(parser, '');
  return (name) => {
    const text = name.toLowerCase();
    return alternatives.some((tokens) => matches(tokens, text));
  };
}

/** The two-pointer wildcard scan: on a mismatch, the last `*` takes one more character. */
function matches(tokens: readonly Token[], name: string): boolean {
  const first = tokens[0];
  if (name.startsWith('.') && !(first?.kind === 'literal' && first.char === '.')) return false;
  let t = 0;
  let i = 0;
  let star = -1;
  let starAt = 0;
  while (i < name.length) {
    const token = tokens[t];
    if (token !== undefined && token.kind === 'star') {
      star = t++;
      starAt = i;
    } else if (token !== undefined && one(token, name[i])) {
      t++;
      i++;
    } else if (star >= 0) {
      t = star + 1;
      i = ++starAt;
    } else return false;
  }
  while (tokens[t]?.kind === 'star') t++;
  return t === tokens.length;
}

function one(token: Token, char: string): boolean {
  if (token.kind === 'any') return true;
  if (token.kind === 'literal') return token.char === char;
  return token.kind === 'class' && token.re.test(char);
}

interface Parser {
  glob: string;
  at: number;
}

/** The alternatives of the text up to one of `stops` (not consumed), each a list of tokens. */
function sequence(p: Parser, stops: string): Token[][] {
  let out: Token[][] = [[]];
  const append = (alts: Token[][]): void => {
    const next: Token[][] = [];
    for (const a of out) for (const b of alts) next.push([...a, ...b]);
    if (next.length > MAX_ALTERNATIVES) throw new GlobError(`more than ${MAX_ALTERNATIVES} alternatives`);
    out = next;
  };
  while (p.at < p.glob.length && !stops.includes(p.glob[p.at])) {
    const c = p.glob[p.at];
    const next = p.glob[p.at + 1];
    if (c === '\\' && next !== undefined) {
      p.at += 2;
      append([[literal(next)]]);
    } else if (c === '*' && next === '(') throw unsupported('*(…)');
    else if (c === '+' && next === '(') throw unsupported('+(…)');
    else if (c === '!' && next === '(') throw unsupported('!(…)');
    else if (c === '*') {
      while (p.glob[p.at] === '*') p.at++;
      append([[{ kind: 'star' }]]);
    } else if ((c === '@' || c === '?') && next === '(') {
      p.at += 2;
      const alts = group(p, '|', ')');
      append(c === '?' ? [[], ...alts] : alts);
    } else if (c === '(') {
      p.at++;
      append(group(p, '|', ')'));
    } else if (c === '{') {
      p.at++;
      append(group(p, ',', '}'));
    } else if (c === '?') {
      p.at++;
      append([[{ kind: 'any' }]]);
    } else if (c === '[') append([[bracket(p)]]);
    else {
      p.at++;
      append([[literal(c)]]);
    }
  }
  return out;
}

/** `a|b)` or `a,b}` after the opening: every alternative, each possibly with its own wildcards. */
function group(p: Parser, separator: string, close: string): Token[][] {
  const alts: Token[][] = [];
  for (;;) {
    alts.push(...sequence(p, `${separator}${close}`));
    if (alts.length > MAX_ALTERNATIVES) throw new GlobError(`more than ${MAX_ALTERNATIVES} alternatives`);
    const c = p.glob[p.at++];
    if (c === close) return alts;
    if (c !== separator) throw new GlobError(`Missing closing: "${close}"`);
  }
}

/** `[a-z]`, `[^0-9]`: one character; POSIX classes (`[[:alpha:]]`) are not supported. */
function bracket(p: Parser): Token {
  const start = p.at;
  let i = start + 1;
  if (p.glob[i] === '^') i++;
  if (p.glob[i] === ']') i++;
  while (i < p.glob.length && p.glob[i] !== ']') {
    if (p.glob[i] === '[' && p.glob[i + 1] === ':') throw unsupported('[:class:]');
    i += p.glob[i] === '\\' ? 2 : 1;
  }
  if (i >= p.glob.length) throw new GlobError('Missing closing: "]"');
  p.at = i + 1;
  // `[^…]` negates, `!` is a character as picomatch reads it; a `]` first is a character of the class.
  const body = p.glob.slice(start + 1, i).replace(/^(\^?)\]/, '$1\\]');
  try {
    return { kind: 'class', re: new RegExp(`^[${body}]$`, 'i') };
  } catch (err) {
    throw new GlobError((err as Error).message);
  }
}

function literal(char: string): Token {
  return { kind: 'literal', char: char.toLowerCase() };
}

function unsupported(what: string): GlobError {
  return new GlobError(`${what} is not supported (its matching can take exponential time)`);
}
