import type { Country, DeliveryAddress } from '../api/types.js';
import { extend } from '../core/extend.js';
import type { Diagnostic, ManifestDeliveryAddress, SourceMap } from '../manifest/model.js';
import { diagnostic } from './preflight/diagnostic.js';
import { quote } from '../core/suggest.js';
import { tableEntry } from '../core/config/delivery-methods.js';
import type { AccountCatalogue } from './catalogue.js';
import { matchCountry, matchDeliveryOption, matchState } from './match.js';

export interface ResolvedAddress {
  /** Ready to send: the method's code, the lookup's ISO2 and country name, the state's abbreviation. */
  address: DeliveryAddress;
  /** True when the delivery method is a collection (no courier address needed). */
  isCollection: boolean;
  diagnostics: Diagnostic[];
}

/**
 * A manifest delivery address → the API's: delivery label or code → code, country name /
 * ISO2 / ISO3 (or its name in another language, `Deutschland`) → `countryCodeISO2`, state name,
 * abbreviation or ISO 3166-2 code (`US-ME`) → the lookup's abbreviation.
 * An unresolved country is never sent as written (the API would reject a three-letter code,
 * and a free-text name routes nowhere). `base` is `jobs[j]`.
 */
export async function resolveAddress(
  input: ManifestDeliveryAddress,
  base: string,
  catalogue: AccountCatalogue,
  sources: SourceMap,
): Promise<ResolvedAddress> {
  const diagnostics: Diagnostic[] = [];
  const error: AddError = (code, field, message) =>
    diagnostics.push(diagnostic(sources, 'error', code, field, message));
  const path = `${base}.deliveryAddress`;
  const {
    deliveryMethod,
    country: countryText,
    countryCodeISO2: isoText,
    state: stateText,
    stateCode: stateCodeText,
    ...rest
  } = input;
  const address: DeliveryAddress = extend(rest, { deliveryMethod: deliveryMethod ?? '' });

  // Delivery method and country are independent lookups: fetch them side by side.
  const [method, country] = await Promise.all([
    resolveMethod(deliveryMethod, path, catalogue, error),
    resolveCountry(countryText, isoText, path, catalogue, error),
  ]);
  if (method) address.deliveryMethod = method.code;
  const isCollection = method?.isCollection ?? false;

  if (country) {
    address.countryCodeISO2 = country.iso2;
    address.country = country.name;
    if (method && !isCollection) routingGaps(input, country, method.code, path, error);
  } else if (countryText === undefined && isoText === undefined && method && !isCollection) {
    const message = `delivery method ${quote(method.code)} ships by courier: the address needs a country`;
    error('country.missing', `${path}.country`, message);
  }

  const written = stateText ?? stateCodeText;
  if (written !== undefined) {
    const field = stateText !== undefined ? `${path}.state` : `${path}.stateCode`;
    let abbreviation = written;
    // Countries without states (NZ, GB) and unresolved countries: the state passes through as written.
    if (country?.hasState) {
      const states = await catalogue.states(country.iso2);
      if (states.length > 0) {
        const m = matchState(written, states, country.iso2);
        if (m.found) abbreviation = m.found.abbreviation;
        else error('state.unknown', field, `${quote(written)} is not a state of ${country.name}${hintOf(m)}`);
      }
    }
    if (stateText !== undefined) address.state = abbreviation;
    if (stateCodeText !== undefined)
      address.stateCode = stateText !== undefined ? await sameState(stateCodeText, country, catalogue) : abbreviation;
  }
  return { address, isCollection, diagnostics };
}

/** Files an error diagnostic at `field`. */
type AddError = (code: string, field: string, message: string) => void;

/**
 * ` (did you mean "X"?)` for a near miss of a value a lookup did not match, ` (nearest: "X",
 * "Y")` for one that is far from every entry, or the empty string.
 */
function hintOf(m: { suggestion?: string; nearest?: string[] }): string {
  if (m.suggestion !== undefined) return ` (did you mean ${quote(m.suggestion)}?)`;
  if (m.nearest !== undefined && m.nearest.length > 0) return ` (nearest: ${m.nearest.map(quote).join(', ')})`;
  return '';
}

/**
 * A courier address the API cannot route is one of its documented 500s. The country lookup
 * says which parts a country's addresses have (`hasState`, `hasPostalCode`); street and
 * city every courier needs.
 */
function routingGaps(
  input: ManifestDeliveryAddress,
  country: Country,
  method: string,
  path: string,
  error: AddError,
): void {
  const blank = (v: string | undefined): boolean => v === undefined || v.trim() === '';
  const needed: [keyof ManifestDeliveryAddress, boolean][] = [
    ['streetAddress', blank(input.streetAddress)],
    ['city', blank(input.city)],
    ['postalCode', country.hasPostalCode && blank(input.postalCode)],
    ['state', country.hasState && blank(input.state) && blank(input.stateCode)],
  ];
  for (const [field, missing] of needed) {
    if (!missing) continue;
    const what = field === 'state' ? 'a state' : `a ${field}`;
    error('address.incomplete', `${path}.${field}`, `a courier delivery (${method}) to ${country.name} needs ${what}`);
  }
}

async function resolveMethod(written: string | undefined, path: string, catalogue: AccountCatalogue, error: AddError) {
  const field = `${path}.deliveryMethod`;
  // Missing altogether: the check stage's rule (delivery-method.missing) reports it.
  if (written === undefined || written.trim() === '') return undefined;
  const options = await catalogue.deliveryOptions();
  const available = `available: ${options.map((o) => `${o.code} (${o.label})`).join(', ')}`;
  // The configuration's table first: a shop's "Express Shipping" is whatever the table says it is.
  const entry = catalogue.shopDeliveryMethods && tableEntry(catalogue.shopDeliveryMethods, written);
  if (entry) {
    const m = matchDeliveryOption(entry.target, options);
    if (m.found) return m.found;
    const message =
      `${quote(written)} is mapped to ${quote(entry.target)} by deliveryMethods (${entry.at}), ` +
      `which is not a delivery method of this account${hintOf(m)}; ${available}`;
    error('deliveryMethod.unknown', field, message);
    return undefined;
  }
  const m = matchDeliveryOption(written, options);
  if (m.found) return m.found;
  // The table entry to write: the option the shop's name is nearest to, for the user to confirm.
  const target = m.suggestion ?? m.nearest?.[0] ?? options[0]?.label ?? 'OPTION';
  error(
    'deliveryMethod.unknown',
    field,
    `${quote(written)} is not a delivery method of this account${hintOf(m)}; ${available}; ` +
      `a shop's own method names go in the config file's deliveryMethods: { ${quote(written)}: ${target} }`,
  );
  return undefined;
}

async function resolveCountry(
  countryText: string | undefined,
  isoText: string | undefined,
  path: string,
  catalogue: AccountCatalogue,
  error: AddError,
): Promise<Country | undefined> {
  if (countryText === undefined && isoText === undefined) return undefined;
  const countries = await catalogue.countries();
  const one = (text: string, field: string): Country | undefined => {
    const m = matchCountry(text, countries);
    if (m.found) return m.found;
    const message =
      'known' in m
        ? `${quote(text)} is ${m.known.name} (${m.known.iso2}), which is not among the API's countries`
        : `${quote(text)} is not a country known to the API${hintOf(m)}`;
    error('country.unknown', field, message);
    return undefined;
  };
  const byIso = isoText === undefined ? undefined : one(isoText, `${path}.countryCodeISO2`);
  const byName = countryText === undefined ? undefined : one(countryText, `${path}.country`);
  if (byIso && byName && byIso.iso2 !== byName.iso2) {
    const message = `country ${quote(countryText as string)} (${byName.iso2}) disagrees with countryCodeISO2 ${quote(isoText as string)} (${byIso.iso2})`;
    error('country.conflict', `${path}.country`, message);
    return undefined;
  }
  if ((isoText !== undefined && !byIso) || (countryText !== undefined && !byName)) return undefined;
  return byIso ?? byName;
}

/** When both `state` and `stateCode` are written, each resolves on its own (quietly: `state` reports). */
async function sameState(written: string, country: Country | undefined, catalogue: AccountCatalogue): Promise<string> {
  if (!country?.hasState) return written;
  const m = matchState(written, await catalogue.states(country.iso2), country.iso2);
  return m.found ? m.found.abbreviation : written;
}
