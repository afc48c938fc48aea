/**
 * Part of `npm run build`, after tsc: writes ajv's standalone code of the manifest validator to
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
const code = standaloneCode.default(ajv, ajv.compile(schema));
writeFileSync(
  new URL(`../dist/manifest/schema/${STANDALONE_FILE}`, import.meta.url),
  `${code}\nmodule.exports = { validate: module.exports, stamp: ${JSON.stringify(schemaStamp(schema))} };\n`,
);
