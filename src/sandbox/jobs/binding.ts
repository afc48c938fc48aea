/**
 * JSON → job candidate, the way a lenient ASP.NET server binds it: only exact-case known
 * properties are read (unknown or mis-cased ones are silently dropped, so `countryCodeIso2`
 * simply means "no country"), and a known property of the wrong JSON type is a 400 with
 * field errors keyed by JSON path (`$.items[0].quantity`).
 */

const CLR = { string: 'System.String', int: 'System.Int32', bool: 'System.Boolean' } as const;
type Kind = keyof typeof CLR;
const IS: Record<Kind, (v: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  int: (v) => Number.isInteger(v),
  bool: (v) => typeof v === 'boolean',
};

/**
 * A model's scalar properties and their kinds, in the order they are checked; `!` marks a
 * value type (bool, int) that refuses null.
 */
type Scalars = Record<string, Kind | `${Kind}!`>;
/** What a model binds to: each property optional (absent, or null where that is allowed). */
type Bound<M extends Scalars> = {
  -readonly [K in keyof M]?: M[K] extends `string${string}` ? string : M[K] extends `int${string}` ? number : boolean;
};

const CANDIDATE = {
  orderNumber: 'string',
  orderComment: 'string',
  customerUserId: 'int',
  dateDue: 'string',
  mustDate: 'bool!',
  timeSensitive: 'bool!',
  description: 'string',
  promocode: 'string',
  orderGroup: 'string',
  orderGroupSequence: 'int',
  validateOnly: 'bool!',
  locationCodeOverride: 'string',
} as const satisfies Scalars;

const ADDRESS = {
  deliveryMethod: 'string',
  shippingInstructions: 'string',
  contactName: 'string',
  organisation: 'string',
  phone: 'string',
  mobile: 'string',
  emailAddress: 'string',
  streetAddress: 'string',
  address2: 'string',
  suburb: 'string',
  city: 'string',
  state: 'string',
  stateCode: 'string',
  postalCode: 'string',
  countryCodeISO2: 'string',
  country: 'string',
  isSaturdayDelivery: 'bool!',
} as const satisfies Scalars;

const LINE = {
  itemType: 'string',
  code: 'string',
  customerReference: 'string',
  groupHead: 'string',
  group: 'string',
  externalArtworkUrl: 'string',
  externalId: 'string',
  garment: 'string',
  comment: 'string',
  variantCode: 'string',
  quantity: 'int!',
  isSample: 'bool!',
} as const satisfies Scalars;

/** The fields a PATCH /Jobs/{n} may carry (null leaves a field as it is). */
const PATCH = {
  description: 'string',
  comments: 'string',
  orderNumber: 'string',
  dateDue: 'string',
  locationCode: 'string',
  mustDate: 'bool',
} as const satisfies Scalars;

export type BoundLine = Bound<typeof LINE> & {
  attributes?: Record<string, string>;
  sizeQuantities?: Record<string, number>;
};
export type BoundCandidate = Bound<typeof CANDIDATE> & { deliveryAddress?: Bound<typeof ADDRESS>; items?: BoundLine[] };

type Obj = Record<string, unknown>;
type Errors = Record<string, string[]>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function fail(errors: Errors, path: string, type: string): undefined {
  errors[path] ??= [];
  errors[path].push(`The JSON value could not be converted to ${type}. Path: ${path}.`);
  return undefined;
}

/** The model's properties present in `src` with the right kind; each wrong one is an error. */
function pick<M extends Scalars>(src: Obj, path: string, model: M, errors: Errors): Bound<M> {
  const out: Obj = {};
  for (const [key, spec] of Object.entries(model)) {
    if (!Object.hasOwn(src, key)) continue;
    const v = src[key];
    const kind = spec.replace('!', '') as Kind;
    if (v === null) {
      if (spec.endsWith('!')) fail(errors, `${path}.${key}`, CLR[kind]);
    } else if (!IS[kind](v)) fail(errors, `${path}.${key}`, CLR[kind]);
    else out[key] = v;
  }
  return out as Bound<M>;
}

/** A dictionary of non-null `kind` values; undefined when absent, null or not an object. */
function dictionary<V>(src: Obj, key: string, kind: Kind, path: string, errors: Errors) {
  const v = src[key];
  if (!Object.hasOwn(src, key) || v === null) return undefined;
  if (!isObj(v))
    return fail(errors, `${path}.${key}`, `System.Collections.Generic.Dictionary\`2[System.String,${CLR[kind]}]`);
  const model: Scalars = Object.fromEntries(Object.keys(v).map((k) => [k, `${kind}!`]));
  return pick(v, `${path}.${key}`, model, errors) as Record<string, V>;
}

function bindLine(raw: unknown, path: string, errors: Errors): BoundLine {
  if (!isObj(raw)) {
    fail(errors, path, 'JobLine');
    return {};
  }
  const line: BoundLine = pick(raw, path, LINE, errors);
  const attributes = dictionary<string>(raw, 'attributes', 'string', path, errors);
  if (attributes) line.attributes = attributes;
  const sizes = dictionary<number>(raw, 'sizeQuantities', 'int', path, errors);
  if (sizes) line.sizeQuantities = sizes;
  return line;
}

export function bindCandidate(body: unknown): { value: BoundCandidate; errors: Errors } {
  const errors: Errors = {};
  if (!isObj(body)) {
    fail(errors, '$', 'JobCandidate');
    return { value: {}, errors };
  }
  const value: BoundCandidate = pick(body, '$', CANDIDATE, errors);
  const { deliveryAddress: da, items } = body;
  if (Object.hasOwn(body, 'deliveryAddress') && da !== null) {
    if (!isObj(da)) fail(errors, '$.deliveryAddress', 'DeliveryAddress');
    else value.deliveryAddress = pick(da, '$.deliveryAddress', ADDRESS, errors);
  }
  if (Object.hasOwn(body, 'items') && items !== null) {
    if (!Array.isArray(items)) fail(errors, '$.items', 'System.Collections.Generic.List`1[JobLine]');
    else value.items = items.map((raw, i) => bindLine(raw, `$.items[${i}]`, errors));
  }
  return { value, errors };
}

/** A PATCH body (an object, checked by the caller) bound the same way. */
export function bindPatch(body: Obj): { value: Bound<typeof PATCH>; errors: Errors } {
  const errors: Errors = {};
  return { value: pick(body, '$', PATCH, errors), errors };
}
