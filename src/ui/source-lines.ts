import { decodeText, readHead } from './safe-files.js';

/** Bytes of an input read to show its lines; errors past them are shown without their line. */
const MAX_INPUT_BYTES = 8 * 1024 * 1024;
/** Characters of one shown line. */
const MAX_LINE_CHARS = 400;
const BINARY = /\.xlsx$/i;

/**
 * The input's own lines that errors point at (YAML/JSON lines, CSV rows: both are physical
 * line numbers of the file, 1-based). Read bounded and never through a link; a workbook has
 * no lines to show.
 */
export async function sourceLines(inputPath: string | null, wanted: ReadonlySet<number>): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  if (!inputPath || wanted.size === 0 || BINARY.test(inputPath)) return out;
  const head = await readHead(inputPath, MAX_INPUT_BYTES);
  if (!head) return out;
  let bytes = head.bytes;
  // A cut file ends mid-line (maybe mid-character): keep whole lines only.
  if (!head.whole) bytes = bytes.subarray(0, bytes.lastIndexOf(0x0a) + 1);
  const lines = decodeText(bytes)
    .replace(/^\uFEFF/, '')
    .split(/\r\n|\n|\r/);
  for (const n of wanted) {
    const line = lines[n - 1];
    if (line !== undefined && (n < lines.length || head.whole))
      out.set(n, line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line);
  }
  return out;
}
