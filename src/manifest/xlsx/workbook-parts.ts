/**
 * The parts of a workbook read before its sheet — the relationships, the workbook (its sheets in
 * tab order, its date system), the styles (each cell style's number format) and the shared-strings
 * table — each streamed from the archive through saxes, a strict streaming XML parser: a part
 * that is not well-formed XML is an error at its line and column, never half read. Element names
 * are compared without their namespace prefix (`x:sheet` is a `sheet`), as some writers prefix them.
 */
import { posix } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { MAX_NUMBER_FORMAT_CHARS, type NumberFormat, numberFormatOf } from './number-formats.js';
import type { ZipArchive } from './zip-directory.js';

export const RELS = 'xl/_rels/workbook.xml.rels';
export const WORKBOOK = 'xl/workbook.xml';
export const SHARED_STRINGS = 'xl/sharedStrings.xml';
export const STYLES = 'xl/styles.xml';

/** An element's name without its namespace prefix (`x:row` → `row`). */
export function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon < 0 ? name : name.slice(colon + 1);
}

/** Elements nested deeper than this in a part are refused (a sheet's cells are seven deep). */
const MAX_DEPTH = 100;
/** Attributes one element may carry (a workbook's root, the most, declares a few dozen namespaces). */
const MAX_ATTRIBUTES = 1000;

/** A saxes parser without namespace processing (names keep their prefix, attributes are strings). */
type XmlParser = SaxesParser<{ xmlns: false; position: true }>;

/** What a part's reader does with its elements and their text (text and CDATA alike). */
export interface XmlHandlers {
  open?(tag: SaxesTagPlain): void;
  close?(tag: SaxesTagPlain): void;
  text?(text: string): void;
}

/**
 * A strict XML parser whose errors start with the line and column of the break (`3:17: …`).
 * Elements nested past MAX_DEPTH and elements with more than MAX_ATTRIBUTES attributes are
 * refused, so the parser's own memory (its stack of open elements, one tag's attributes) stays
 * a small multiple of the bytes it is fed, whatever the part holds.
 */
export function xmlParser(handlers: XmlHandlers): XmlParser {
  const parser: XmlParser = new SaxesParser({ xmlns: false, position: true });
  let depth = 0;
  let attributes = 0;
  parser.on('opentagstart', () => {
    attributes = 0;
  });
  parser.on('attribute', () => {
    if (++attributes > MAX_ATTRIBUTES) parser.fail(`an element has more than ${MAX_ATTRIBUTES} attributes`);
  });
  parser.on('opentag', (tag: SaxesTagPlain) => {
    if (++depth > MAX_DEPTH) parser.fail(`elements are nested more than ${MAX_DEPTH} deep`);
    handlers.open?.(tag);
  });
  parser.on('closetag', (tag: SaxesTagPlain) => {
    depth--;
    handlers.close?.(tag);
  });
  if (handlers.text !== undefined) {
    parser.on('text', handlers.text);
    parser.on('cdata', handlers.text);
  }
  return parser;
}

/**
 * Streams a whole part through `parser` as text (a character split between chunks is kept
 * whole), then closes it, so a part cut short fails; false when the archive has no such part.
 */
async function parseWhole(archive: ZipArchive, name: string, parser: XmlParser): Promise<boolean> {
  const entry = archive.directory?.entries.get(name);
  if (entry === undefined) return false;
  const decoder = new StringDecoder('utf8');
  for await (const chunk of await archive.openEntry(entry)) parser.write(decoder.write(chunk as Buffer));
  parser.write(decoder.end());
  parser.close();
  return true;
}

/** A parser that hands each `<name …>` element's attributes to `take`, in document order. */
function elementsParser(take: Record<string, (attributes: Record<string, string>) => void>): XmlParser {
  return xmlParser({
    open: (tag) => {
      const name = localName(tag.name);
      if (Object.hasOwn(take, name)) take[name](tag.attributes);
    },
  });
}

/** What is known of the workbook before its sheet is read. */
export interface Book {
  /** The sheets in tab order, each with its part (from the relationships). */
  sheets: Array<{ name: string; part: string | undefined }>;
  /** Dates are counted from 1904 (old Mac workbooks). */
  date1904: boolean;
}

/** `onPart` is told each part as its reading starts (for a located error). Undefined without a workbook part. */
export async function readBook(archive: ZipArchive, onPart: (name: string) => void): Promise<Book | undefined> {
  const targets = new Map<string, string>();
  const rels = elementsParser({
    Relationship: (a) => {
      if (a.Id !== undefined && a.Target !== undefined) targets.set(a.Id, partPath(a.Target));
    },
  });
  onPart(RELS);
  await parseWhole(archive, RELS, rels);
  const sheets: Book['sheets'] = [];
  let date1904 = false;
  const workbook = elementsParser({
    sheet: (a) => {
      const rId = Object.entries(a).find(([name]) => name === 'id' || name.endsWith(':id'))?.[1];
      sheets.push({ name: a.name ?? '', part: rId === undefined ? undefined : targets.get(rId) });
    },
    workbookPr: (a) => {
      date1904 = a.date1904 === '1' || a.date1904 === 'true';
    },
  });
  onPart(WORKBOOK);
  return (await parseWhole(archive, WORKBOOK, workbook)) ? { sheets, date1904 } : undefined;
}

/** A relationship's target (relative to `xl/`, or absolute from the archive's root) as a part name. */
function partPath(target: string): string {
  return target.startsWith('/') ? posix.normalize(target.slice(1)) : posix.normalize(`xl/${target}`);
}

/** Each cell style's number format (by the cell's `s`), or the length of a format too long to read. */
export type Styles = { formats: NumberFormat[] } | { tooLong: number };

/**
 * The number format of each cell style (`cellXfs`), each judged once (number-formats.ts); any
 * format code in the part longer than Excel allows refuses it. No styles part: every cell General.
 */
export async function readStyles(archive: ZipArchive): Promise<Styles> {
  const codes = new Map<number, string>();
  const ids: number[] = [];
  let tooLong: number | undefined;
  // The element a numFmt or xf is in: only `numFmts` codes and `cellXfs` styles are the cells'.
  let within: string | undefined;
  const parser = xmlParser({
    open: ({ name: qualified, attributes: a, isSelfClosing }) => {
      const name = localName(qualified);
      if (name === 'numFmts' || name === 'cellXfs') within = isSelfClosing ? undefined : name;
      else if (name === 'numFmt' && a.formatCode !== undefined) {
        if (a.formatCode.length > MAX_NUMBER_FORMAT_CHARS) tooLong ??= a.formatCode.length;
        else if (within === 'numFmts') codes.set(Number(a.numFmtId), a.formatCode);
      } else if (name === 'xf' && within === 'cellXfs') ids.push(Number(a.numFmtId ?? 0));
    },
    close: (tag) => {
      if (localName(tag.name) === within) within = undefined;
    },
  });
  await parseWhole(archive, STYLES, parser);
  if (tooLong !== undefined) return { tooLong };
  return { formats: ids.map((id) => numberFormatOf(id, codes)) };
}

/**
 * The shared-strings table: each `<si>`'s text, its rich-text runs joined, its phonetic guide
 * (`<rPh>`, the reading shown above East Asian text) left out, as Excel shows the cell.
 */
export async function readSharedStrings(archive: ZipArchive): Promise<string[]> {
  const strings: string[] = [];
  let text: string | undefined;
  let inText = false;
  let phonetic = 0;
  const parser = xmlParser({
    open: (tag) => {
      const name = localName(tag.name);
      if (name === 'si') text = '';
      else if (name === 'rPh') phonetic++;
      else if (name === 't') inText = text !== undefined && phonetic === 0;
    },
    text: (t) => {
      if (inText) text += t;
    },
    close: (tag) => {
      const name = localName(tag.name);
      if (name === 't') inText = false;
      else if (name === 'rPh') phonetic--;
      else if (name === 'si' && text !== undefined) {
        strings.push(text);
        text = undefined;
      }
    },
  });
  await parseWhole(archive, SHARED_STRINGS, parser);
  return strings;
}
