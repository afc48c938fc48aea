/**
 * Countries by the names people write: ISO 3166-1 alpha-2 and alpha-3 codes, the countries'
 * names in the languages shops are kept in (`Deutschland`, `España`, `Österreich`), the short
 * forms of i18n-iso-countries' lists (`USA`, `U.S.A.`, `UK`, `Great Britain`), ISO 3166-2
 * subdivision codes (`US-ME`, `GB-SCT`) and the United Kingdom's constituent countries
 * (`England`). Pure and offline: the mapping language normalises a shop's country with it, and
 * the resolve layer matches the result against the API's own country list.
 *
 * i18n-iso-countries is a maintained table of ISO names; only the languages below are
 * registered (each is a JSON file of the package), and only when a country is first looked up.
 */
import { foldAlnum } from './suggest.js';
import { lateRequire } from './late-require.js';

/** The languages whose country names are read: those of the shops in the API's regions. */
export const COUNTRY_NAME_LANGUAGES = ['en', 'de', 'fr', 'es', 'it', 'nl', 'pt', 'sv', 'da', 'nb', 'fi', 'pl'] as const;

/**
 * The United Kingdom's constituent countries, written as a country on many addresses: the
 * names of its ISO 3166-2 country subdivisions (GB-ENG, GB-SCT, GB-WLS, GB-NIR), which no
 * ISO 3166-1 list carries, in the registered languages that name them otherwise.
 */
const UK_NATIONS = [
  'England',
  'Scotland',
  'Wales',
  'Northern Ireland',
  'Cymru',
  'Schottland',
  'Nordirland',
  'Angleterre',
  'Écosse',
  'Pays de Galles',
  'Irlande du Nord',
  'Inglaterra',
  'Escocia',
  'Gales',
  'Irlanda del Norte',
];

interface CountryTable {
  isValid(code: string): boolean;
  alpha3ToAlpha2(code: string): string | undefined;
  /** Folded name (letters and digits) → alpha-2. */
  byName: Map<string, string>;
  /** alpha-2 → every name of it, English first. */
  names: Map<string, string[]>;
  /** alpha-2 → its English name. */
  english: Map<string, string>;
}

let table: CountryTable | undefined;

function countries(): CountryTable {
  if (table !== undefined) return table;
  // The package's index without its entry point, which registers all of its 79 languages.
  const lib = lateRequire<typeof import('i18n-iso-countries')>('i18n-iso-countries/index.js');
  for (const lang of COUNTRY_NAME_LANGUAGES) lib.registerLocale(lateRequire(`i18n-iso-countries/langs/${lang}.json`));
  const byName = new Map<string, string>();
  const names = new Map<string, string[]>();
  const english = new Map<string, string>();
  const add = (name: string, iso2: string) => {
    const key = foldAlnum(name);
    // The first language to name it wins: English, then the order above.
    if (key !== '' && !byName.has(key)) byName.set(key, iso2);
    const list = names.get(iso2) ?? [];
    if (!list.includes(name)) list.push(name);
    names.set(iso2, list);
  };
  for (const lang of COUNTRY_NAME_LANGUAGES) {
    for (const [iso2, list] of Object.entries(lib.getNames(lang, { select: 'all' }))) {
      if (lang === 'en') english.set(iso2, list[0]);
      for (const name of list) add(name, iso2);
    }
  }
  for (const name of UK_NATIONS) add(name, 'GB');
  table = {
    isValid: (code) => lib.isValid(code),
    alpha3ToAlpha2: (code) => lib.alpha3ToAlpha2(code),
    byName,
    names,
    english,
  };
  return table;
}

/** The longest text looked up as a country name: no country's name is longer. */
const MAX_NAME = 80;

/**
 * The ISO 3166-1 alpha-2 code of a country as written, or undefined when it names none:
 * a two-letter text is always an alpha-2 code (`NO` is Norway), a three-letter one an alpha-3
 * code before it is a name (`USA`); `XX-YYY` is an ISO 3166-2 subdivision of country XX.
 */
export function countryCodeOf(written: string): string | undefined {
  const text = written.trim();
  if (text === '' || text.length > MAX_NAME) return undefined;
  const t = countries();
  const upper = text.toUpperCase();
  if (/^[A-Z]{2}$/.test(upper) && t.isValid(upper)) return upper;
  if (/^[A-Z]{3}$/.test(upper)) {
    const iso2 = t.alpha3ToAlpha2(upper);
    if (iso2 !== undefined) return iso2;
  }
  const subdivision = /^([A-Z]{2})-[A-Z0-9]{1,3}$/.exec(upper);
  if (subdivision !== null && t.isValid(subdivision[1])) return subdivision[1];
  return t.byName.get(foldAlnum(text));
}

/** A country's English name (`AT` → Austria), or undefined for a code ISO 3166-1 does not assign. */
export function englishCountryName(iso2: string): string | undefined {
  return countries().english.get(iso2.toUpperCase());
}

/** Every name of a country in the registered languages, English first (`DE` → Germany, Deutschland, Allemagne, …). */
export function countryNames(iso2: string): readonly string[] {
  return countries().names.get(iso2.toUpperCase()) ?? [];
}
