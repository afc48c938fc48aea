import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ShapeRules } from './shape.js';

/** The fixtures transcribed from the API specification: see spec-examples/README.md. */
export const EXAMPLES_DIR = fileURLToPath(new URL('./spec-examples/', import.meta.url));

export interface ExampleEntry extends ShapeRules {
  file: string | null;
  kind: 'request' | 'response' | 'query';
  method: string;
  path: string;
  status: number | null;
  section: string;
  origin: 'inline' | 'prose' | 'field-table';
  original?: string;
  note?: string;
}

export const INDEX: readonly ExampleEntry[] = (
  JSON.parse(readFileSync(`${EXAMPLES_DIR}index.json`, 'utf8')) as { examples: ExampleEntry[] }
).examples;

export function entry(file: string): ExampleEntry {
  const e = INDEX.find((x) => x.file === file);
  if (!e) throw new Error(`${file} is not listed in spec-examples/index.json`);
  return e;
}

export function example<T = any>(file: string): T {
  entry(file);
  return JSON.parse(readFileSync(`${EXAMPLES_DIR}${file}`, 'utf8')) as T;
}

export function exampleText(file: string): string {
  entry(file);
  return readFileSync(`${EXAMPLES_DIR}${file}`, 'utf8');
}

/** Every JSON fixture of one kind, so a test can assert it covered them all. */
export function jsonFiles(kind: ExampleEntry['kind']): string[] {
  const onDisk = new Set(readdirSync(EXAMPLES_DIR));
  return INDEX.filter((e) => e.kind === kind && e.file?.endsWith('.json') && onDisk.has(e.file)).map(
    (e) => e.file as string,
  );
}
