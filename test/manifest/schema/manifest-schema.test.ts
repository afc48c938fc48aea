import { describe, expect, it } from 'vitest';
import {
  childSchema,
  manifestSchema,
  resolveRef,
  wantsString,
  type SchemaNode,
  type SchemaObject,
} from '../../../src/manifest/schema/manifest-schema.js';
import type { DeliveryAddress, JobCandidate } from '../../../src/api/types.js';

/** The schema at a path of segments from the manifest root, as the YAML readers walk it (childSchema). */
function schemaAt(segments: readonly (string | number)[]): SchemaNode | undefined {
  let node: SchemaNode | undefined = manifestSchema;
  for (const seg of segments) {
    node = childSchema(node, seg);
    if (node === undefined) return undefined;
  }
  return resolveRef(node);
}

/** Every (path, property schema) in the schema, refs not followed. */
function* properties(node: SchemaNode, path: string): Generator<[string, SchemaNode, SchemaObject]> {
  if (typeof node !== 'object') return;
  for (const [name, sub] of Object.entries(node.properties ?? {})) {
    yield [`${path}.${name}`, sub, node];
    yield* properties(sub, `${path}.${name}`);
  }
  for (const [name, sub] of Object.entries(node.$defs ?? {})) yield* properties(sub, `$defs.${name}`);
  for (const [i, sub] of (node.allOf ?? []).entries()) {
    yield* properties(sub, `${path}.allOf[${i}]`);
    if (typeof sub === 'object' && sub.then) yield* properties(sub.then, `${path}.allOf[${i}].then`);
  }
  if (typeof node.items === 'object') yield* properties(node.items, `${path}[]`);
  if (typeof node.additionalProperties === 'object') yield* properties(node.additionalProperties, `${path}.*`);
}

describe('schemas/manifest.schema.json', () => {
  it('describes every property (directly or through its $ref), for editor hovers', () => {
    const missing: string[] = [];
    for (const [path, sub] of properties(manifestSchema, '')) {
      const own = typeof sub === 'object' && sub.description;
      const viaRef = typeof resolveRef(sub) === 'object' && (resolveRef(sub) as SchemaObject).description;
      if (!own && !viaRef) missing.push(path);
    }
    expect(missing).toEqual([]);
  });

  it('closes every object with properties (additionalProperties: false), except per-itemType branches', () => {
    const open: string[] = [];
    const visit = (node: SchemaNode, path: string, branch: boolean) => {
      if (typeof node !== 'object') return;
      if (node.properties && !branch && node.additionalProperties !== false) open.push(path);
      for (const [k, v] of Object.entries(node.properties ?? {})) visit(v, `${path}.${k}`, false);
      for (const [k, v] of Object.entries(node.$defs ?? {})) visit(v, `$defs.${k}`, false);
      for (const v of node.allOf ?? []) if (typeof v === 'object') visit(v.then ?? {}, `${path}.then`, true);
    };
    visit(manifestSchema, '', false);
    expect(open).toEqual([]);
  });

  it('mirrors the API job create request: every JobCandidate and DeliveryAddress field is there', () => {
    const jobFields: (keyof JobCandidate)[] = [
      'orderNumber',
      'orderComment',
      'customerUserId',
      'dateDue',
      'mustDate',
      'timeSensitive',
      'description',
      'deliveryAddress',
      'promocode',
      'items',
      'orderGroup',
      'orderGroupSequence',
      'locationCodeOverride',
    ];
    const addressFields: (keyof DeliveryAddress)[] = [
      'deliveryMethod',
      'shippingInstructions',
      'contactName',
      'organisation',
      'phone',
      'mobile',
      'emailAddress',
      'isSaturdayDelivery',
      'streetAddress',
      'address2',
      'suburb',
      'city',
      'state',
      'stateCode',
      'postalCode',
      'countryCodeISO2',
      'country',
    ];
    const job = resolveRef(manifestSchema.$defs!.job) as SchemaObject;
    const address = resolveRef(manifestSchema.$defs!.deliveryAddress) as SchemaObject;
    expect(Object.keys(job.properties!).sort()).toEqual([...jobFields, 'cancel'].sort());
    expect(Object.keys(address.properties!).sort()).toEqual([...addressFields].sort());
    expect(job.properties!.validateOnly).toBeUndefined();
  });

  it('knows which fields are text', () => {
    expect(wantsString(schemaAt(['jobs', 0, 'deliveryAddress', 'postalCode']))).toBe(true);
    expect(wantsString(schemaAt(['defaults', 'dateDue']))).toBe(true);
    expect(wantsString(schemaAt(['jobs', 3, 'items', 0, 'attributes', 'Colors']))).toBe(true);
    expect(wantsString(schemaAt(['jobs', 0, 'items', 0, 'quantity']))).toBe(false);
    expect(wantsString(schemaAt(['jobs', 0, 'items', 0, 'sizeQuantities', 'M']))).toBe(false);
    expect(schemaAt(['jobs', 0, 'nonsense'])).toBeUndefined();
    expect(childSchema(undefined, 'x')).toBeUndefined();
  });
});
