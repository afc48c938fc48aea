import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFileAtomic } from '../../storage/atomic-write.js';
import { UsageError } from '../../core/errors.js';
import {
  CONFIG_EXAMPLE,
  CONFIG_EXAMPLE_NAME,
  CSV_TEMPLATE,
  MAPPING_SKELETON,
  SCHEMA_DIR,
  STARTER_MANIFEST,
} from './templates.js';

export interface InitOptions {
  /** Folder to initialise; created when missing. */
  dir: string;
  /** Replace files that already exist. */
  force?: boolean;
}

export interface InitResult {
  /** Paths written, relative to `dir`, in writing order. */
  written: string[];
}

/** The package's own schemas/ (one level above both src/ and dist/). */
const PACKAGE_SCHEMAS = fileURLToPath(new URL('../../../schemas/', import.meta.url));

/**
 * The files `htorder init` writes, relative to DIR. The schemas are COPIED next to the
 * manifest rather than referenced inside node_modules: a global install (`npm install -g`)
 * or `npx` leaves no node_modules next to the user's files, and a copy keeps the editor's
 * completion working offline and in a folder moved to another machine. `htorder init
 * --force` refreshes the copy after an upgrade.
 */
async function plannedFiles(): Promise<Array<{ path: string; content: string }>> {
  const schema = async (name: string): Promise<string> => readFile(join(PACKAGE_SCHEMAS, name), 'utf8');
  return [
    { path: 'orders.yaml', content: STARTER_MANIFEST },
    { path: 'orders-template.csv', content: CSV_TEMPLATE },
    { path: 'mapping.yaml', content: MAPPING_SKELETON },
    { path: CONFIG_EXAMPLE_NAME, content: CONFIG_EXAMPLE },
    { path: `${SCHEMA_DIR}/manifest.schema.json`, content: await schema('manifest.schema.json') },
    { path: `${SCHEMA_DIR}/mapping.schema.json`, content: await schema('mapping.schema.json') },
  ];
}

const exists = async (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

/**
 * Writes the starter files into `dir`. Never overwrites without `force`: when any target
 * exists, nothing at all is written and a UsageError (exit 2) names every such file, so a
 * half-initialised folder is never left behind.
 */
export async function initProject(opts: InitOptions): Promise<InitResult> {
  const files = await plannedFiles();
  if (!opts.force) {
    const taken: string[] = [];
    for (const f of files) if (await exists(join(opts.dir, f.path))) taken.push(join(opts.dir, f.path));
    if (taken.length > 0) {
      throw new UsageError(
        `${taken.join(', ')} already exist${taken.length === 1 ? 's' : ''}; nothing was written (use --force to replace)`,
      );
    }
  }
  await mkdir(join(opts.dir, SCHEMA_DIR), { recursive: true });
  const written: string[] = [];
  for (const f of files) {
    const target = join(opts.dir, f.path);
    // 'wx' fails if another process created the file since the check above.
    if (opts.force) await writeFileAtomic(target, f.content, { durable: false });
    else await writeFile(target, f.content, { flag: 'wx' });
    written.push(f.path);
  }
  return { written };
}

/** What to do next, shown after `htorder init` (paths as the user will type them). */
export function nextSteps(dir: string, cwd: string): string {
  const rel = relative(cwd, resolve(cwd, dir));
  const p = (f: string): string => (rel === '' ? f : join(rel, f));
  return [
    'next:',
    `  htorder check ${p('orders.yaml')}                 # offline: syntax, schema, local rules`,
    `  htorder plan --sandbox ${p('orders.yaml')}        # against the built-in simulator, no credentials`,
    `  htorder plan ${p('orders.yaml')}                  # against your account (set HTORDER_* first; see docs/configuration.md)`,
    `  htorder run ${p('orders.yaml')}                   # submit, exactly once`,
    `CSV: fill rows into ${p('orders-template.csv')} (one row per item); ERP exports: edit ${p('mapping.yaml')} and pass --mapping.`,
    '',
  ].join('\n');
}
