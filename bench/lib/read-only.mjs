/**
 * The CSV reader alone (built code): readCsvDocument over FILE, no schema validation, no
 * reports. Prints {"ms": …, "jobs": …, "diagnostics": …}.
 */
import { readCsvDocument } from '../../dist/manifest/csv/read-csv.js';

const file = process.argv[2];
const started = performance.now();
const raw = await readCsvDocument(file);
const ms = performance.now() - started;
console.log(JSON.stringify({ ms, jobs: raw.doc?.jobs.length ?? 0, diagnostics: raw.diagnostics.length }));
