/**
 * Workbooks built for hostile-input tests: exceljs writes a real one, then its parts can be
 * changed and zipped again, each part declared at its true unpacked size.
 */
import { writeFile } from 'node:fs/promises';
import { createDeflateRaw } from 'node:zlib';
import ExcelJS from 'exceljs';
import { expect } from 'vitest';
import { ZipArchive } from '../../src/manifest/xlsx/zip-directory.js';
import { tempDirPerTest } from './temp-files.js';

export const HEADER = ['orderNumber', 'deliveryMethod', 'contactName', 'streetAddress', 'city', 'state', 'postalCode'];
export const ROW = ['PO-1', 'UPSGND', 'Ann Lee', '1 Main St', 'Boston', 'MA', '02134'];
export const HEAD = ['country', 'itemType', 'code', 'quantity'];
export const ITEM = ['US', 'Asset', 'A10001', 24];

export type Cell = string | number;

/** A workbook's parts (name → text), written by exceljs's own writer. */
export async function partsOf(rows: Cell[][], style?: (ws: ExcelJS.Worksheet) => void): Promise<Map<string, string>> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Orders');
  for (const r of rows) ws.addRow(r);
  style?.(ws);
  const file = `${await tempDirPerTest()}/written.xlsx`;
  await wb.xlsx.writeFile(file);
  return unpacked(file);
}

/** Every part of a workbook, unpacked through the reader's own zip directory (name → text). */
export async function unpacked(file: string): Promise<Map<string, string>> {
  const archive = await ZipArchive.open(file);
  const parts = new Map<string, string>();
  try {
    for (const [name, entry] of archive.directory?.entries ?? []) {
      const chunks: Buffer[] = [];
      for await (const chunk of await archive.openEntry(entry)) chunks.push(chunk as Buffer);
      parts.set(name, Buffer.concat(chunks).toString('utf8'));
    }
  } finally {
    await archive.close();
  }
  return parts;
}

/** A part's text, or pieces of it repeated (written `times` times) so a huge part costs no memory to build. */
export type PartText = string | Array<{ text: string; times?: number }>;

/** Deflates a part piece by piece: its unpacked size and its deflated bytes. */
async function deflated(text: PartText): Promise<{ size: number; data: Buffer }> {
  const pieces = typeof text === 'string' ? [{ text }] : text;
  const deflate = createDeflateRaw({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => out.push(chunk));
  let size = 0;
  for (const { text: piece, times = 1 } of pieces) {
    const bytes = Buffer.from(piece);
    for (let i = 0; i < times; i++) {
      size += bytes.length;
      if (!deflate.write(bytes)) await new Promise((resolve) => deflate.once('drain', resolve));
    }
  }
  const done = new Promise((resolve) => deflate.once('end', resolve));
  deflate.end();
  await done;
  return { size, data: Buffer.concat(out) };
}

/** A zip of `parts`, each deflated and declared at its true unpacked size (no checksum: nothing checks one). */
export async function zipOf(parts: Map<string, PartText>): Promise<string> {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const [name, text] of parts) {
    const { size, data } = await deflated(text);
    const nameBytes = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE(8, 10);
    entry.writeUInt32LE(data.length, 20);
    entry.writeUInt32LE(size, 24);
    entry.writeUInt16LE(nameBytes.length, 28);
    entry.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    central.push(entry, nameBytes);
    offset += 30 + nameBytes.length + data.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(parts.size, 8);
  end.writeUInt16LE(parts.size, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  const file = `${await tempDirPerTest()}/orders.xlsx`;
  await writeFile(file, Buffer.concat([...locals, directory, end]));
  return file;
}

/** An order sheet of `rows` rows whose quantity cells (column K) carry the number format `format`. */
export async function formatted(format: string, rows = 50): Promise<string> {
  const sheet = [[...HEADER, ...HEAD], ...Array.from({ length: rows }, () => [...ROW, ...ITEM])];
  const parts = await partsOf(sheet, (ws) => {
    for (let r = 2; r <= rows + 1; r++) ws.getCell(`K${r}`).numFmt = 'FORMAT';
  });
  const styles = (parts.get('xl/styles.xml') as string).replace('formatCode="FORMAT"', `formatCode="${format}"`);
  expect(styles).not.toContain('FORMAT');
  return zipOf(new Map([...parts, ['xl/styles.xml', styles]]));
}
