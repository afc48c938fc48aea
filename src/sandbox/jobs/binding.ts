/**
 * JSON → job candidate, the way a lenient ASP.NET server binds it: only exact-case known
 * properties are read (unknown or mis-cased ones are silently dropped, so `countryCodeIso2`
 * simply means "no country"), and a known property of the wrong JSON type is a 400 with
 * field errors keyed by JSON path (`$.items[0].quantity`).
 */

export interface BoundAddress {
  deliveryMethod?: string;
  shippingInstructions?: string;
  contactName?: string;
  organisation?: string;
  phone?: string;
  mobile?: string;
  emailAddress?: string;
  isSaturdayDelivery?: boolean;
  streetAddress?: string;
  address2?: string;
  suburb?: string;
  city?: string;
  state?: string;
  stateCode?: string;
  postalCode?: string;
  countryCodeISO2?: string;
  country?: string;
}

export interface BoundLine {
  itemType?: string;
  code?: string;
  quantity?: number;
  customerReference?: string;
  groupHead?: string;
  group?: string;
  attributes?: Record<string, string>;
  externalArtworkUrl?: string;
  externalId?: string;
  isSample?: boolean;
  garment?: string;
  comment?: string;
  variantCode?: string;
  sizeQuantities?: Record<string, number>;
}

export interface BoundCandidate {
  orderNumber?: string;
  orderComment?: string;
  customerUserId?: number;
  dateDue?: string;
  mustDate?: boolean;
  timeSensitive?: boolean;
  description?: string;
  deliveryAddress?: BoundAddress;
  promocode?: string;
  items?: BoundLine[];
  orderGroup?: string;
  orderGroupSequence?: number;
  validateOnly?: boolean;
  locationCodeOverride?: string;
}

export interface BindResult<T> {
  value: T;
  errors: Record<string, string[]>;
}

type Kind = 'string' | 'int' | 'bool' | 'number';
type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const CLR: Record<Kind, string> = {
  string: 'System.String',
  int: 'System.Int32',
  bool: 'System.Boolean',
  number: 'System.Decimal',
};

class Binder {
  readonly errors: Record<string, string[]> = {};

  fail(path: string, kind: string): void {
    this.errors[path] ??= [];
    this.errors[path].push(`The JSON value could not be converted to ${kind}. Path: ${path}.`);
  }

  scalar(src: Obj, key: string, kind: Kind, path: string, nullable = true): unknown {
    if (!Object.hasOwn(src, key)) return undefined;
    const v = src[key];
    if (v === null) {
      if (!nullable) this.fail(`${path}.${key}`, CLR[kind]);
      return undefined;
    }
    const ok =
      kind === 'string'
        ? typeof v === 'string'
        : kind === 'bool'
          ? typeof v === 'boolean'
          : kind === 'int'
            ? typeof v === 'number' && Number.isInteger(v)
            : typeof v === 'number' && Number.isFinite(v);
    if (!ok) {
      this.fail(`${path}.${key}`, CLR[kind]);
      return undefined;
    }
    return v;
  }

  pick<T extends object>(src: Obj, path: string, spec: Record<string, [Kind, boolean?]>): T {
    const out: Record<string, unknown> = {};
    for (const [key, [kind, nullable]] of Object.entries(spec)) {
      const v = this.scalar(src, key, kind, path, nullable ?? true);
      if (v !== undefined) out[key] = v;
    }
    return out as T;
  }

  map<V>(src: Obj, key: string, kind: Kind, path: string): Record<string, V> | undefined {
    if (!Object.hasOwn(src, key) || src[key] === null) return undefined;
    const v = src[key];
    if (!isObj(v)) {
      this.fail(`${path}.${key}`, `System.Collections.Generic.Dictionary\`2[System.String,${CLR[kind]}]`);
      return undefined;
    }
    const out: Record<string, V> = {};
    for (const k of Object.keys(v)) {
      const got = this.scalar(v, k, kind, `${path}.${key}`, false);
      if (got !== undefined) out[k] = got as V;
    }
    return out;
  }
}

const ADDRESS_STRINGS = [
  'deliveryMethod',
  'shippingInstructions',
  'contactName',
  'organisation',
  'phone',
  'mobile',
  'emailAddress',
  'streetAddress',
  'address2',
  'suburb',
  'city',
  'state',
  'stateCode',
  'postalCode',
  'countryCodeISO2',
  'country',
] as const;
const LINE_STRINGS = [
  'itemType',
  'code',
  'customerReference',
  'groupHead',
  'group',
  'externalArtworkUrl',
  'externalId',
  'garment',
  'comment',
  'variantCode',
] as const;

export function bindCandidate(body: unknown): BindResult<BoundCandidate> {
  const b = new Binder();
  if (!isObj(body)) {
    b.fail('$', 'JobCandidate');
    return { value: {}, errors: b.errors };
  }
  const value = b.pick<BoundCandidate>(body, '$', {
    orderNumber: ['string'],
    orderComment: ['string'],
    customerUserId: ['int'],
    dateDue: ['string'],
    mustDate: ['bool', false],
    timeSensitive: ['bool', false],
    description: ['string'],
    promocode: ['string'],
    orderGroup: ['string'],
    orderGroupSequence: ['int'],
    validateOnly: ['bool', false],
    locationCodeOverride: ['string'],
  });
  if (Object.hasOwn(body, 'deliveryAddress') && body.deliveryAddress !== null) {
    const da = body.deliveryAddress;
    if (!isObj(da)) b.fail('$.deliveryAddress', 'DeliveryAddress');
    else {
      const spec: Record<string, [Kind, boolean?]> = Object.fromEntries(
        ADDRESS_STRINGS.map((k) => [k, ['string'] as [Kind]]),
      );
      spec.isSaturdayDelivery = ['bool', false];
      value.deliveryAddress = b.pick<BoundAddress>(da, '$.deliveryAddress', spec);
    }
  }
  if (Object.hasOwn(body, 'items') && body.items !== null) {
    const items = body.items;
    if (!Array.isArray(items)) b.fail('$.items', 'System.Collections.Generic.List`1[JobLine]');
    else {
      value.items = items.map((raw, i) => {
        const path = `$.items[${i}]`;
        if (!isObj(raw)) {
          b.fail(path, 'JobLine');
          return {};
        }
        const spec: Record<string, [Kind, boolean?]> = Object.fromEntries(
          LINE_STRINGS.map((k) => [k, ['string'] as [Kind]]),
        );
        spec.quantity = ['int', false];
        spec.isSample = ['bool', false];
        const line = b.pick<BoundLine>(raw, path, spec);
        const attributes = b.map<string>(raw, 'attributes', 'string', path);
        if (attributes) line.attributes = attributes;
        const sizes = b.map<number>(raw, 'sizeQuantities', 'int', path);
        if (sizes) line.sizeQuantities = sizes;
        return line;
      });
    }
  }
  return { value, errors: b.errors };
}
