/**
 * Part of `npm run build` (build/build.mjs), after the emit of dist/: writes the shipped presets' signatures (what recognising an
 * export by its header compares it with) to dist/manifest/mapping/, stamped with the hash of the
 * preset files, so a recognised input costs no parse of every preset
 * (src/manifest/mapping/built-signatures.ts reads it, and the signatures are computed when the
 * file is missing or stamped for other presets).
 */
import { writeFileSync } from 'node:fs';
import { BUILT_SIGNATURES_FILE, presetsStamp } from '../dist/manifest/mapping/built-signatures.js';
import { computedSignatures, presetTexts } from '../dist/manifest/mapping/recognise.js';

const texts = presetTexts();
writeFileSync(
  new URL(`../dist/manifest/mapping/${BUILT_SIGNATURES_FILE}`, import.meta.url),
  `${JSON.stringify({ stamp: presetsStamp(texts), signatures: computedSignatures(texts) })}\n`,
);
