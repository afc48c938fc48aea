/**
 * Part of `npm run build` (build/build.mjs), after the emit of dist/: writes ajv's standalone code
 * of the manifest validator to dist/manifest/schema/ and of the sandbox's snapshot validator to
 * dist/sandbox/, each stamped with its schema's hash, so processes start without compiling them
 * (src/core/standalone-validator.ts loads them; each module compiles its schema itself when the
 * file is missing or stamped for another schema).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import standaloneCode from 'ajv/dist/standalone/index.js';
import { schemaStamp } from '../dist/core/standalone-validator.js';
import { MANIFEST_AJV_OPTIONS, STANDALONE_FILE } from '../dist/manifest/schema/manifest-validator.js';
import { SNAPSHOT_AJV_OPTIONS, SNAPSHOT_SCHEMA, SNAPSHOT_STANDALONE_FILE } from '../dist/sandbox/snapshot.js';

const schema = JSON.parse(readFileSync(new URL('../schemas/manifest.schema.json', import.meta.url), 'utf8'));
const ajv = new Ajv2020({ ...MANIFEST_AJV_OPTIONS, code: { source: true } });
const generated = standaloneCode.default(ajv, ajv.compile(schema));

// ajv gathers a referenced validator's errors (every job's) with `vErrors.concat(...)`: a new
// array per faulty job, copying all errors so far, which made a file of 100,000 faulty rows
// spend 6 s there. The arrays are the validator's own (each call starts a fresh one), so they
// are appended in place instead: the same errors in the same order. The build fails if ajv
// changes that code, rather than silently keeping it.
const CONCAT = /vErrors = vErrors === null \? (validate\d+)\.errors : vErrors\.concat\(\1\.errors\);/g;
const code = generated.replace(
  CONCAT,
  (_, fn) =>
    `if (vErrors === null) vErrors = ${fn}.errors; else for (let e_ = 0; e_ < ${fn}.errors.length; e_++) vErrors.push(${fn}.errors[e_]);`,
);
if (code === generated || code.includes('.concat(')) {
  throw new Error('build/standalone-validators.mjs: ajv no longer gathers errors with vErrors.concat as expected');
}
/** Writes `code` (ajv's standalone module.exports = validate) to `path` in dist/, stamped for `schema`. */
function writeStandalone(path, code, schema) {
  writeFileSync(
    new URL(`../dist/${path}`, import.meta.url),
    `${code}\nmodule.exports = { validate: module.exports, stamp: ${JSON.stringify(schemaStamp(schema))} };\n`,
  );
}

writeStandalone(`manifest/schema/${STANDALONE_FILE}`, code, schema);

const snapshotAjv = new Ajv({ ...SNAPSHOT_AJV_OPTIONS, code: { source: true } });
writeStandalone(
  `sandbox/${SNAPSHOT_STANDALONE_FILE}`,
  standaloneCode.default(snapshotAjv, snapshotAjv.compile(SNAPSHOT_SCHEMA)),
  SNAPSHOT_SCHEMA,
);
