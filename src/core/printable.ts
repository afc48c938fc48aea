/**
 * Text from outside (order numbers, keys, countries, file names, API messages) shown to a
 * person: every control character is written as an escape (`\x1b`, `\u202e`), so nothing an
 * input or a server says can drive the terminal (colours, cursor moves, OSC 52 writing the
 * clipboard, OSC 8 links), forge a line of errors.txt, or reorder what is shown (bidi
 * overrides). Escaped: C0 (U+0000–U+001F) but tab, DEL, C1 (U+0080–U+009F), the line and
 * paragraph separators U+2028/U+2029, and the bidirectional controls (U+061C, U+200E/U+200F,
 * U+202A–U+202E, U+2066–U+2069). Machine outputs keep the data exact: result.json is JSON
 * (which escapes C0 itself), result.csv keeps cells as they are.
 */
// Built from a string: the characters to find are control characters (a regex literal of them trips the linter).
const OTHERS = '\\u007f-\\u009f\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069';
const UNPRINTABLE = new RegExp(`[\\u0000-\\u0008\\u000a-\\u001f${OTHERS}]`, 'g');
const UNPRINTABLE_BUT_LF = new RegExp(`[\\u0000-\\u0008\\u000b-\\u001f${OTHERS}]`, 'g');

function escaped(ch: string): string {
  const code = ch.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** One line of text: line feeds are escaped too, so a value cannot start a line of its own. */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, escaped);
}

/** Several lines htorder composed itself: its own line feeds stay, everything else is escaped. */
export function printableLines(text: string): string {
  return text.replace(UNPRINTABLE_BUT_LF, escaped);
}
