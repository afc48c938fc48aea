/**
 * A workbook's number formats, reduced to what reading a cell needs. A format is consulted for
 * every numeric cell, and a hostile one — thousands of `[`, millions of `0` — would cost time or
 * memory per cell; so each is judged once, when the styles are read, into one of three meanings:
 * a date (the cell reads as an ISO date or date-time), a zero padding (`00000`, Excel's "Zip
 * Code": the number padded to that width), or a plain number. A format longer than Excel allows
 * is refused.
 */

/** Excel refuses a number format longer than this. */
export const MAX_NUMBER_FORMAT_CHARS = 255;

/** What a cell's number format means for its text: a date, zeros padding it to a width, or nothing. */
export type NumberFormat = 'date' | { zeros: number } | undefined;

/** The meaning of a format code, judged in one pass over it. */
export function numberFormat(code: string): NumberFormat {
  if (isDateFormat(code)) return 'date';
  if (/^0+$/.test(code)) return { zeros: code.length };
  return undefined;
}

/**
 * Excel's built-in formats that show a date or time, which a workbook names by number without
 * writing out their code: 14–22 (dates and times), 27–36 and 50–58 (the East Asian locales'
 * dates), 45–47 (minutes and seconds). The other built-ins are numbers, text or General.
 */
function isBuiltInDate(id: number): boolean {
  return (id >= 14 && id <= 22) || (id >= 27 && id <= 36) || (id >= 45 && id <= 47) || (id >= 50 && id <= 58);
}

/** A format's meaning from its id: the workbook's own code for it, else Excel's built-in one. */
export function numberFormatOf(id: number, codes: ReadonlyMap<number, string>): NumberFormat {
  const code = codes.get(id);
  if (code !== undefined) return numberFormat(code);
  return isBuiltInDate(id) ? 'date' : undefined;
}

/** Excel's own test for a date format: a date or time letter outside quotes and [..]. Linear in the format. */
export function isDateFormat(numFmt: string | undefined): boolean {
  if (numFmt === undefined || numFmt === '') return false;
  const bare = withoutEnclosed(withoutEnclosed(numFmt, '[', ']'), '"', '"');
  return /[ymdhsb]/i.test(bare.replace(/general/gi, ''));
}

/**
 * `text` without each `open`…`close` span (the first `close` after an `open` ends it); an `open`
 * never closed stays, as do the rest. Each character is looked at once, where the regex
 * `\[[^\]]*]` looks again from every unclosed `[`.
 */
function withoutEnclosed(text: string, open: string, close: string): string {
  let kept = '';
  let from = 0;
  for (;;) {
    const start = text.indexOf(open, from);
    const end = start < 0 ? -1 : text.indexOf(close, start + 1);
    if (end < 0) return kept + text.slice(from);
    kept += text.slice(from, start);
    from = end + 1;
  }
}
