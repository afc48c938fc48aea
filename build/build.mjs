/**
 * `npm run build`: dist/ from src/, then the files generated from it (standalone-validators.mjs,
 * preset-signatures.mjs) and the CLI's execute bit.
 *
 * Each file is emitted on its own by TypeScript's emitter (`ts.transpileModule`), with the options
 * of tsconfig.build.json, on worker threads: the same JavaScript and source maps tsc writes,
 * without loading and checking the type declarations that src imports (the AWS SDK's alone weigh
 * more than src). So this does not type-check: `npm run typecheck` does, and CI runs it; its
 * `isolatedModules` refuses what a file emitted on its own could get wrong (a type re-exported as
 * a value). `--declarations` also writes tsc's .d.ts files, which type-checks (`npm pack` runs it).
 *
 * NodeNext emits a file as an ES module when its package is `"type": "module"`; a file emitted on
 * its own has no package, so it is given that format here (module ESNext, every file a module).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import ts from 'typescript';
import { removeStaleOutput } from './stale-output.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CONFIG = join(ROOT, 'tsconfig.build.json');

if (isMainThread) await main(process.argv.slice(2));
else parentPort.postMessage(emitFiles(workerData.files, workerData.options));

async function main(args) {
  const unknown = args.filter((a) => a !== '--declarations');
  if (unknown.length > 0) throw new Error(`build/build.mjs: unknown argument ${unknown.join(' ')}`);
  const config = readConfig();
  const files = config.parsed.fileNames.filter((f) => !f.endsWith('.d.ts')).map((f) => outputOf(config.parsed, f));
  const failures = (await Promise.all(shares(files).map((share) => emitOnWorker(share, config.options)))).flat();
  if (failures.length > 0) {
    for (const line of failures) process.stderr.write(`${line}\n`);
    process.exit(1);
  }
  removeStaleOutput(config.options.outDir, files.map((f) => f.js));
  await import('./standalone-validators.mjs');
  await import('./preset-signatures.mjs');
  chmodSync(join(config.options.outDir, 'cli', 'main.js'), 0o755);
  if (args.includes('--declarations')) declarations();
}

/** tsconfig.build.json as tsc reads it, with the output format tsc gives this package's files. */
function readConfig() {
  const host = {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  };
  const parsed = ts.getParsedCommandLineOfConfigFile(CONFIG, undefined, host);
  if (parsed.errors.length > 0) throw new Error(ts.formatDiagnostics(parsed.errors, formatHost()));
  const { module } = parsed.options;
  if (module !== ts.ModuleKind.NodeNext && module !== ts.ModuleKind.Node16) {
    throw new Error(`build/build.mjs: expects module NodeNext in ${CONFIG}, to emit every file as an ES module`);
  }
  if (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).type !== 'module') {
    throw new Error('build/build.mjs: expects package.json "type": "module", to emit every file as an ES module');
  }
  const options = {
    ...parsed.options,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    moduleDetection: ts.ModuleDetectionKind.Force,
    declaration: false,
    declarationMap: false,
  };
  return { parsed, options };
}

/** A source and the JavaScript file tsc writes for it (its map beside it, as `${js}.map`). */
function outputOf(parsed, file) {
  if (!/(?<!\.d)\.ts$/.test(file)) {
    throw new Error(`build/build.mjs: ${file} is not a .ts file, which the build emits only as an ES module`);
  }
  const js = ts.getOutputFileNames(parsed, file, !ts.sys.useCaseSensitiveFileNames).find((f) => f.endsWith('.js'));
  if (js === undefined) throw new Error(`build/build.mjs: tsc emits no JavaScript for ${file}`);
  return { file, js };
}

/** The files split into one share per core, alike in size (a worker's start loads TypeScript). */
function shares(files) {
  const count = Math.max(1, Math.min(availableParallelism(), 4, Math.ceil(files.length / 50)));
  const out = Array.from({ length: count }, () => ({ files: [], bytes: 0 }));
  const sized = files.map((f) => ({ f, bytes: readFileSync(f.file).length })).sort((a, b) => b.bytes - a.bytes);
  for (const { f, bytes } of sized) {
    const least = out.reduce((a, b) => (b.bytes < a.bytes ? b : a));
    least.files.push(f);
    least.bytes += bytes;
  }
  return out.map((s) => s.files).filter((s) => s.length > 0);
}

function emitOnWorker(files, options) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: { files, options } });
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code !== 0) reject(new Error(`build/build.mjs: a worker exited with code ${code}`));
    });
  });
}

/** Emits each file's .js and .js.map where tsc puts them; returns the syntax errors found. */
function emitFiles(files, options) {
  const failures = [];
  for (const { file, js } of files) {
    const out = ts.transpileModule(readFileSync(file, 'utf8'), {
      compilerOptions: options,
      fileName: file,
      reportDiagnostics: true,
    });
    if (out.diagnostics.length > 0) {
      failures.push(ts.formatDiagnostics(out.diagnostics, formatHost()));
      continue;
    }
    mkdirSync(dirname(js), { recursive: true });
    writeFileSync(js, out.outputText);
    if (out.sourceMapText !== undefined) writeFileSync(`${js}.map`, out.sourceMapText);
  }
  return failures;
}

function formatHost() {
  return { getCanonicalFileName: (f) => f, getCurrentDirectory: () => ROOT, getNewLine: () => '\n' };
}

/** tsc's .d.ts files beside the JavaScript (package.json "types"), after a full type check. */
function declarations() {
  const tsc = fileURLToPath(import.meta.resolve('typescript/bin/tsc'));
  const run = spawnSync(process.execPath, [tsc, '-p', CONFIG, '--emitDeclarationOnly'], { stdio: 'inherit' });
  if (run.status !== 0) process.exit(run.status ?? 1);
}
