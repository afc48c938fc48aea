import { readFileSync } from 'node:fs';
import { pointerKeys } from '../field-path.js';

/**
 * The manifest JSON Schema (schemas/manifest.schema.json), read once. The file is the
 * single source of field truth: the validator compiles it and the YAML reader asks it
 * which fields are text (so `postalCode: 01234` keeps its zero).
 */

export type SchemaNode = boolean | SchemaObject;
export interface SchemaObject {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode;
  items?: SchemaNode;
  required?: string[];
  const?: unknown;
  minimum?: number;
  description?: string;
  allOf?: SchemaNode[];
  anyOf?: SchemaNode[];
  if?: SchemaNode;
  then?: SchemaNode;
  $defs?: Record<string, SchemaNode>;
  [key: string]: unknown;
}

// Three levels up from src/manifest/schema/ and from dist/manifest/schema/ alike.
export const manifestSchema: SchemaObject = JSON.parse(
  readFileSync(new URL('../../../schemas/manifest.schema.json', import.meta.url), 'utf8'),
) as SchemaObject;

/** Pointer → target: the YAML reader resolves refs for every node it converts. */
const refCache = new Map<string, SchemaNode | undefined>();

/** Follows `$ref` JSON pointers (`#/$defs/job/properties/dateDue`) within the manifest schema. */
export function resolveRef(node: SchemaNode | undefined): SchemaNode | undefined {
  let current = node;
  for (let hops = 0; hops < 16 && typeof current === 'object' && current.$ref !== undefined; hops++) {
    current = lookupPointer(current.$ref);
  }
  return current;
}

function lookupPointer(ref: string): SchemaNode | undefined {
  if (refCache.has(ref)) return refCache.get(ref);
  let target: unknown;
  if (ref.startsWith('#')) {
    target = manifestSchema;
    for (const key of pointerKeys(ref.slice(1))) target = (target as Record<string, unknown> | undefined)?.[key];
  }
  refCache.set(ref, target as SchemaNode | undefined);
  return target as SchemaNode | undefined;
}

/** The schema for a child (`key` of an object, or any index of an array) of `node`. */
export function childSchema(node: SchemaNode | undefined, key: string | number): SchemaNode | undefined {
  const resolved = resolveRef(node);
  if (typeof resolved !== 'object') return undefined;
  if (typeof key === 'number') return resolved.items;
  const own = resolved.properties && Object.hasOwn(resolved.properties, key) ? resolved.properties[key] : undefined;
  if (own !== undefined) return own;
  return typeof resolved.additionalProperties === 'object' ? resolved.additionalProperties : undefined;
}

/** True when the schema at `node` wants text: a scalar there is taken as written. */
export function wantsString(node: SchemaNode | undefined): boolean {
  const resolved = resolveRef(node);
  return typeof resolved === 'object' && resolved.type === 'string';
}
