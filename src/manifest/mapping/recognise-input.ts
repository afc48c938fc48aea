/**
 * The I/O side of recognising a shop export: the input's header (bounded, read-header.ts)
 * against the presets' signatures (recognise.ts). Used by loadManifest for a CSV or `.xlsx`
 * input given no mapping, and for one whose mapping does not fit its header.
 */
import { basename, dirname, resolve } from 'node:path';
import type { ManifestFormat } from '../model.js';
import type { CsvLimits } from '../read-input.js';
import type { Mapping } from './model.js';
import { PRESETS_DIR } from './presets-dir.js';
import { readHeader } from './read-header.js';
import { isTemplateHeader } from '../csv/template.js';

/** What a recognised input is read through, and what the report says of it. */
export interface RecognisedMapping {
  preset: string;
  /** The preset's columns the header has. */
  matchedColumns: string[];
  mapping: Mapping;
}

export type InputRecognition =
  | { kind: 'none' }
  | { kind: 'match'; recognised: RecognisedMapping }
  /** Not read: the one message saying what the input looks like and how to choose. */
  | { kind: 'refused'; message: string };

/** Each preset read once per process: a watcher recognises many exports of one shop (a mapping is never changed by a read). */
const presets = new Map<string, Promise<Mapping>>();

function presetMapping(name: string): Promise<Mapping> {
  let loaded = presets.get(name);
  if (loaded === undefined) {
    loaded = import('./load-mapping.js').then(({ loadMapping }) => loadMapping(name));
    // A failed read is not kept: the next input tries again.
    loaded.catch(() => presets.delete(name));
    presets.set(name, loaded);
  }
  return loaded;
}

/** The mapping an input with none is read through: a preset its header alone fits, or none, or a refusal. */
export async function recogniseInput(
  file: string,
  format: ManifestFormat,
  limits: Partial<CsvLimits> = {},
): Promise<InputRecognition> {
  const header = await readHeader(file, format, limits);
  // The default template's own header needs no preset (and the common case loads none of their code).
  if (header === undefined || isTemplateHeader(header)) return { kind: 'none' };
  const { presetSignatures, recogniseHeader, recognitionMessage, unknownHeaderMessage } = await import(
    './recognise.js'
  );
  const verdict = recogniseHeader(header, presetSignatures());
  if (verdict.kind !== 'match') {
    // Another export of a platform (its products, Etsy's order-level CSV) may nearly fit a preset.
    const { otherExportMessage } = await import('./other-exports.js');
    const other = otherExportMessage(header);
    if (other !== undefined) return { kind: 'refused', message: other };
  }
  if (verdict.kind === 'none') {
    // What the file is instead, when that is clear: one line rather than an error per column.
    const message = unknownHeaderMessage(header);
    return message === undefined ? { kind: 'none' } : { kind: 'refused', message };
  }
  if (verdict.kind !== 'match') return { kind: 'refused', message: recognitionMessage(verdict, header) };
  const mapping = await presetMapping(verdict.preset);
  return { kind: 'match', recognised: { preset: verdict.preset, matchedColumns: verdict.matchedColumns, mapping } };
}

/**
 * For an input its mapping does not fit (the mapping names columns the header lacks): the one
 * message naming the export it looks like, when that is another preset's; else, when only the
 * preset the mapping is (or extends) names the missing columns (`presetOnly`), the one message
 * naming them; else undefined (the mapping's own located errors say it).
 */
export async function wrongMapping(
  file: string,
  format: ManifestFormat,
  mapping: Mapping,
  limits: Partial<CsvLimits> = {},
  presetOnly = false,
): Promise<string | undefined> {
  const header = await readHeader(file, format, limits);
  if (header === undefined) return undefined;
  const { presetOfMapping, presetSignatures, recogniseHeader, wrongMappingMessage, presetMisfitMessage } = await import(
    './recognise.js'
  );
  if (!isTemplateHeader(header)) {
    const presets = presetSignatures();
    const mappingFile = mapping.file;
    const preset =
      mappingFile !== undefined && dirname(mappingFile) === resolve(PRESETS_DIR)
        ? basename(mappingFile, '.yaml')
        : undefined;
    const name = preset ?? (mappingFile === undefined ? 'given' : `"${mappingFile}"`);
    const other = wrongMappingMessage(recogniseHeader(header, presets), presetOfMapping(mapping, presets), name);
    if (other !== undefined) return other;
  }
  return presetOnly && mapping.preset !== undefined ? presetMisfitMessage(mapping, header) : undefined;
}
