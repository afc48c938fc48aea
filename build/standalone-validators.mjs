/**
 * Part of `npm run build` (build/build.mjs), after the emit of dist/: writes ajv's standalone code of the manifest validator to
 * dist/manifest/schema/, stamped with the schema's hash, so commands start without compiling
 * the schema (src/manifest/schema/manifest-validator.ts loads it, and compiles the schema itself
 * when the file is missing or stamped for another schema).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import standaloneCode from 'ajv/dist/standalone/index.js';
import {
  MANIFEST_AJV_OPTIONS,
  STANDALONE_FILE,
  schemaStamp,
} from '../dist/manifest/schema/manifest-validator.js';

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
writeFileSync(
  new URL(`../dist/manifest/schema/${STANDALONE_FILE}`, import.meta.url),
  `${code}\nmodule.exports = { validate: module.exports, stamp: ${JSON.stringify(schemaStamp(schema))} };\n`,
);
