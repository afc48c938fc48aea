/**
 * A workbook's number formats, made harmless before exceljs reads them. A cell's format is
 * consulted for every numeric cell (by exceljs's date test and by cellText), and a hostile one —
 * thousands of `[`, millions of `0` — costs time or memory per cell. Each format is reduced to
 * what the reading needs, with the same meaning: a date format becomes `yyyy-mm-dd` (the cell
 * still reads as a date or date-time), a zero-padding format (`00000`) stays as it is, and any
 * other becomes `General` (a number written plainly). A format longer than Excel allows is refused.
 */

/** Excel refuses a number format longer than this. */
export const MAX_NUMBER_FORMAT_CHARS = 255;

/** The styles part with every format replaced by its plain equivalent, or the length of one that is too long. */
export function plainNumberFormats(styles: string): { styles: string } | { tooLong: number } {
  let tooLong: number | undefined;
  // Attribute values hold no `<`, and a quote ends at the next quote: one pass, linear in the text.
  const plain = styles.replace(
    /\bformatCode(\s*=\s*)(?:"([^"]*)"|'([^']*)')/g,
    (_, eq: string, dq?: string, sq?: string) => {
      const code = decodeEntities(dq ?? sq ?? '');
      if (code.length > MAX_NUMBER_FORMAT_CHARS) tooLong ??= code.length;
      return `formatCode${eq}"${plainFormat(code)}"`;
    },
  );
  return tooLong === undefined ? { styles: plain } : { tooLong };
}

/** The format reading gives the same text as `code`, from three that are cheap to test. */
function plainFormat(code: string): string {
  if (isDateFormat(code)) return 'yyyy-mm-dd';
  if (/^0+$/.test(code)) return code;
  return 'General';
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

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** An XML attribute value's text, its entity and character references decoded. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, e: string) => {
    if (e[0] !== '#') return ENTITIES[e] ?? whole;
    const code = e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1));
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}
