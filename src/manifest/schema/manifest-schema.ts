import { readFileSync } from 'node:fs';

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
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  minLength?: number;
  minItems?: number;
  minProperties?: number;
  description?: string;
  allOf?: SchemaNode[];
  anyOf?: SchemaNode[];
  if?: SchemaNode;
  then?: SchemaNode;
  $defs?: Record<string, SchemaNode>;
  [key: string]: unknown;
}

// Two levels up from src/schema/ and from dist/schema/ alike.
export const MANIFEST_SCHEMA_URL = new URL('../../../schemas/manifest.schema.json', import.meta.url);

export const manifestSchema: SchemaObject = JSON.parse(readFileSync(MANIFEST_SCHEMA_URL, 'utf8')) as SchemaObject;

/** Pointer → target, per root: the YAML reader resolves refs for every node it converts. */
const refCache = new WeakMap<SchemaObject, Map<string, SchemaNode | undefined>>();

/** Follows `$ref` JSON pointers (`#/$defs/job/properties/dateDue`) within the manifest schema. */
export function resolveRef(node: SchemaNode | undefined, root: SchemaObject = manifestSchema): SchemaNode | undefined {
  let current = node;
  for (let hops = 0; hops < 16 && typeof current === 'object' && current.$ref !== undefined; hops++) {
    current = lookupPointer(current.$ref, root);
  }
  return current;
}

function lookupPointer(ref: string, root: SchemaObject): SchemaNode | undefined {
  let cache = refCache.get(root);
  if (!cache) {
    cache = new Map();
    refCache.set(root, cache);
  }
  if (cache.has(ref)) return cache.get(ref);
  let target: unknown;
  if (ref.startsWith('#')) {
    target = root;
    for (const raw of ref
      .slice(2)
      .split('/')
      .filter((s) => s !== '')) {
      const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      target = (target as Record<string, unknown> | undefined)?.[key];
    }
  }
  cache.set(ref, target as SchemaNode | undefined);
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

/** The schema at a path of segments from the manifest root, or undefined when the path is unknown. */
export function schemaAt(segments: readonly (string | number)[]): SchemaNode | undefined {
  let node: SchemaNode | undefined = manifestSchema;
  for (const seg of segments) {
    node = childSchema(node, seg);
    if (node === undefined) return undefined;
  }
  return resolveRef(node);
}
