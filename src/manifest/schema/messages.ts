import type { ErrorObject } from 'ajv/dist/2020.js';
import type { PathSegment } from '../field-path.js';
import { manifestSchema, resolveRef, type SchemaObject } from './manifest-schema.js';
import { suggest } from '../../core/suggest.js';

/** What one ajv error means for a person: where (segments, at the key or the value), a code, a message. */
interface DescribedError {
  segments: PathSegment[];
  code: string;
  message: string;
  /** Point at the key rather than its value (unknown keys). */
  atKey?: boolean;
}

/** Fields a job may not take from `defaults`: each job needs its own. */
const JOB_ONLY_FIELDS = new Set(['orderNumber', 'items', 'cancel']);

export function describeError(error: ErrorObject, segments: PathSegment[]): DescribedError {
  const schema = error.parentSchema as SchemaObject | undefined;
  switch (error.keyword) {
    case 'required': {
      const missing = (error.params as { missingProperty: string }).missingProperty;
      const itemType = itemTypeOfThen(error.schemaPath);
      const why = itemType ? ` (required for ${itemType} items)` : '';
      return {
        segments: [...segments, missing],
        code: 'schema.required',
        message: `missing required field "${missing}"${why}`,
      };
    }
    case 'anyOf': {
      const names = ((schema?.anyOf ?? []) as SchemaObject[]).flatMap((branch) => branch.required ?? []);
      const itemType = itemTypeOfThen(error.schemaPath);
      const why = itemType ? ` (${itemType} items)` : '';
      return { segments, code: 'schema.required', message: `needs ${names.map((n) => `"${n}"`).join(' or ')}${why}` };
    }
    case 'additionalProperties':
      return describeUnknownKey((error.params as { additionalProperty: string }).additionalProperty, segments, schema);
    case 'not': {
      const field = String(segments[segments.length - 1]);
      const itemType = itemTypeOfThen(error.schemaPath);
      const users = ITEM_TYPE_BRANCHES.filter((b) => !forbids(b, field)).map((b) => b.itemType);
      return {
        segments,
        code: 'schema.not-allowed',
        message: `"${field}" is not used by ${itemType ?? 'this'} items (it applies to ${users.join(', ')} items); the API would ignore it`,
      };
    }
    case 'type':
    case 'minimum':
      return {
        segments,
        code: 'schema.type',
        message: `must be ${expected(schema)}, got ${describeValue(error.data)}`,
      };
    case 'minLength':
      return { segments, code: 'schema.empty', message: 'must not be empty' };
    case 'minItems': {
      const last = segments[segments.length - 1];
      const message =
        last === 'jobs'
          ? 'the manifest has no jobs'
          : last === 'items'
            ? 'a job needs at least one item'
            : 'must not be empty';
      return { segments, code: 'schema.empty', message };
    }
    case 'minProperties':
      return { segments, code: 'schema.empty', message: 'must have at least one entry' };
    case 'propertyNames':
      return { segments, code: 'schema.empty', message: 'names must not be empty' };
    case 'enum': {
      const allowed = (error.params as { allowedValues: unknown[] }).allowedValues.map(String);
      const got = describeValue(error.data);
      const hint = typeof error.data === 'string' ? suggest(error.data, allowed) : undefined;
      return {
        segments,
        code: 'schema.enum',
        message: `must be one of ${allowed.join(', ')}, got ${got}${hint ? `; did you mean "${hint}"?` : ''}`,
      };
    }
    case 'const':
      return {
        segments,
        code: 'schema.const',
        message: `must be ${JSON.stringify((error.params as { allowedValue: unknown }).allowedValue)}, got ${describeValue(error.data)}`,
      };
    default:
      return { segments, code: `schema.${error.keyword}`, message: error.message ?? 'is not valid' };
  }
}

function describeUnknownKey(key: string, parent: PathSegment[], schema: SchemaObject | undefined): DescribedError {
  const unknown = (message: string): DescribedError => ({
    segments: [...parent, key],
    atKey: true,
    code: 'schema.unknown-field',
    message,
  });
  const known = Object.keys(schema?.properties ?? {});
  const where =
    parent.length === 0 ? 'the manifest' : parent[parent.length - 1] === 'defaults' ? 'defaults' : undefined;
  if (key === '<<') return unknown('YAML merge keys (<<) are not supported; put shared values under `defaults:`');
  if (where === 'defaults' && JOB_ONLY_FIELDS.has(key))
    return unknown(`"${key}" cannot be a default; set it on each job`);
  const hint = suggest(key, known);
  if (hint) return unknown(`unknown field "${key}"; did you mean "${hint}"?`);
  // A delivery field written at job level (or in defaults) belongs one level down.
  const isJobLevel = parent[0] === 'jobs' && parent.length === 2;
  const addressFields = Object.keys(
    (resolveRef(manifestSchema.$defs?.deliveryAddress) as SchemaObject).properties ?? {},
  );
  const field = addressFields.find((f) => f.toLowerCase() === key.toLowerCase());
  if ((isJobLevel || where === 'defaults') && field !== undefined) {
    return unknown(`unknown field "${key}"; did you mean "deliveryAddress.${field}"?`);
  }
  const scope = where === undefined ? 'here' : `in ${where}`;
  return unknown(
    `unknown field "${key}" (the API would silently ignore it); known fields ${scope}: ${known.join(', ')}`,
  );
}

/** The item schema's `if: { itemType: const }` / `then` branches, by their index in its allOf. */
const ITEM_TYPE_BRANCHES = ((manifestSchema.$defs?.item as SchemaObject | undefined)?.allOf ?? []).map((node) => {
  const branch = node as SchemaObject;
  const cond = (branch.if as SchemaObject | undefined)?.properties?.itemType as SchemaObject | undefined;
  const itemType = typeof cond?.const === 'string' ? cond.const : undefined;
  return { itemType, thenSchema: branch.then as SchemaObject | undefined };
});

/** `#/$defs/item/allOf/0/then/required` → the itemType that `then` branch is for. */
function itemTypeOfThen(schemaPath: string): string | undefined {
  const m = /\/allOf\/(\d+)\/then\//.exec(schemaPath);
  return m ? ITEM_TYPE_BRANCHES[Number(m[1])]?.itemType : undefined;
}

/** Whether an itemType's `then` branch forbids `field` (`not: {}`). */
function forbids(branch: (typeof ITEM_TYPE_BRANCHES)[number], field: string): boolean {
  const sub = branch.thenSchema?.properties?.[field];
  return typeof sub === 'object' && 'not' in sub;
}

/** "an integer ≥ 1", "text", "true or false" … from the schema a value failed. */
function expected(schema: SchemaObject | undefined): string {
  const type = schema?.type;
  switch (type) {
    case 'integer':
      return schema?.minimum !== undefined ? `an integer ≥ ${schema.minimum}` : 'an integer';
    case 'number':
      return schema?.minimum !== undefined ? `a number ≥ ${schema.minimum}` : 'a number';
    case 'string':
      return 'text';
    case 'boolean':
      return 'true or false';
    case 'object':
      return 'a mapping (key: value)';
    case 'array':
      return 'a list';
    default:
      return Array.isArray(type) ? type.join(' or ') : 'valid';
  }
}

/** A short, safe rendering of an offending value for a message. */
function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'nothing (null)';
  if (typeof value === 'string') {
    const shown = value.length > 40 ? `${value.slice(0, 37)}...` : value;
    return JSON.stringify(shown);
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return 'a list';
  return 'a mapping';
}
