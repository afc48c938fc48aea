import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadManifest, type LoadOptions, type LoadResult } from '../../src/manifest/load-manifest.js';
import type { Diagnostic, Manifest } from '../../src/manifest/model.js';
import { buildReport } from '../../src/report/build-report.js';
import type { ReportCommand, ResultReport } from '../../src/report/model.js';
import { tempDirPerTest } from './temp-files.js';

/** Writes a manifest file named `name` into `dir`, or into a temp folder removed after the test. */
export async function writeInput(name: string, text: string | Uint8Array, dir?: string): Promise<string> {
  const file = join(dir ?? (await tempDirPerTest()), name);
  await writeFile(file, text);
  return file;
}

/** Writes `text` to a temp file named `name` and loads it. */
export async function loadText(
  text: string,
  name = 'orders.yaml',
  opts: LoadOptions = {},
): Promise<LoadResult & { file: string }> {
  const file = await writeInput(name, text);
  return { file, ...(await loadManifest(file, opts)) };
}

/** The report a command begins for the input at `file` (default `run`, as prepareInput builds it), started at a fixed time. */
export async function reportOfInput(
  file: string,
  opts: { command?: ReportCommand; finishedAt?: Date } = {},
): Promise<{ report: ResultReport; manifest: Manifest | undefined; loaded: LoadResult }> {
  const loaded = await loadManifest(file);
  const report = buildReport({
    command: opts.command ?? 'run',
    input: loaded.input,
    manifest: loaded.manifest,
    diagnostics: loaded.diagnostics,
    startedAt: new Date('2026-03-01T10:00:00Z'),
    ...(opts.finishedAt ? { finishedAt: opts.finishedAt } : {}),
  });
  return { report, manifest: loaded.manifest, loaded };
}

export const errors = (ds: Diagnostic[]): Diagnostic[] => ds.filter((d) => d.severity === 'error');

/** `line:col code field` triples, for compact assertions. */
export const brief = (ds: Diagnostic[]): string[] =>
  ds.map((d) => `${d.source?.line ?? '-'}:${d.source?.column ?? '-'} ${d.code} ${d.field ?? ''}`.trim());

/** A minimal valid job in YAML flow style, for building test manifests. */
export const ADDRESS = '{ deliveryMethod: UPS Ground, country: United States }';
export const ASSET_ITEM = '{ itemType: Asset, code: A10001, quantity: 50 }';
