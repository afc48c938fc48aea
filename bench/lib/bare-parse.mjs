/**
 * The baseline: one csv-parse pass over FILE in arrays mode doing nothing else (same options
 * that matter for speed as the reader: relaxed quotes, relaxed column count). Prints
 * {"ms": …, "records": …}.
 */
import { createReadStream } from 'node:fs';
import { parse } from 'csv-parse';

const file = process.argv[2];
const started = performance.now();
let records = 0;
const parser = createReadStream(file, { highWaterMark: 1 << 20 }).pipe(
  parse({ relax_quotes: true, relax_column_count: true }),
);
for await (const _ of parser) records++;
console.log(JSON.stringify({ ms: performance.now() - started, records }));
