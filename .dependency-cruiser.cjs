/**
 * The layers of htorder, lowest first. A module may import its own layer and the layers
 * below it, never one above: data flows forward through the pipeline, and the edges (CLI,
 * composition) depend on the middle, not the other way round. docs/architecture.md draws
 * the same list; `npm run deps` (part of `.ci/run`) fails on any upward import.
 */
const LAYERS = [
  // Errors every room may throw, the version, small pure helpers, the logger, the settings table
  // with config files and profiles, and the generic limited HTTP server.
  { name: 'core', path: '^src/core/' },
  // Typed client of the ordering API: transport, auth, retries, wire types.
  { name: 'api', path: '^src/api/' },
  // Durable bytes: atomic files, leases, the S3 store, and the exactly-once ledger on top of them.
  { name: 'storage', path: '^src/storage/' },
  // Parse (YAML, JSON, CSV, .xlsx, ERP mapping), schema check and local rules, with a source map for every value.
  { name: 'manifest', path: '^src/manifest/' },
  // Human values to API values through one catalogue of lookups per account; preflight and estimate inside.
  { name: 'resolve', path: '^src/resolve/' },
  // The three report files next to each input.
  { name: 'report', path: '^src/report/' },
  // The stages in order, submitting exactly once; following submitted jobs (track).
  { name: 'pipeline', path: '^src/pipeline/' },
  // Drop folders and buckets, the watch loop, its events, health, metrics and notifications.
  { name: 'watch', path: '^src/watch/' },
  // The read-only dashboard (htorder ui, watch --ui): reports and watch events as web pages.
  { name: 'ui', path: '^src/ui/' },
  // Composition: wires config, client, ledger, pipeline and sources together.
  { name: 'app', path: '^src/app/' },
  // The command line: flags, help, terminal output. Nothing imports it.
  { name: 'cli', path: '^src/cli/' },
];

const above = (i) =>
  LAYERS.slice(i + 1)
    .map((l) => `(${l.path})`)
    .join('|');

const layerRules = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `layer-${layer.name}`,
  comment: `${layer.name} may not import a layer above it (${LAYERS.slice(i + 1)
    .map((l) => l.name)
    .join(', ')})`,
  severity: 'error',
  from: { path: layer.path },
  to: { path: above(i) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'layer-sandbox',
      comment:
        'The sandbox simulates the API from the spec: it may use the wire types and core, never the client, pipeline or CLI.',
      severity: 'error',
      from: { path: '^src/sandbox/' },
      to: {
        path: '^src/',
        pathNot: ['^src/sandbox/', '^src/api/types\\.ts$', '^src/core/[^/]+\\.ts$'],
      },
    },
    {
      name: 'sandbox-only-from-edges',
      comment: 'Only the composition layer, the CLI and the public API start a sandbox (it stays out of the pipeline).',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/sandbox/', '^src/app/', '^src/cli/', '^src/index\\.ts$'] },
      to: { path: '^src/sandbox/' },
    },
    {
      name: 'public-api-not-cli',
      comment: 'src/index.ts is the library entry; the CLI is built on it, not the other way round.',
      severity: 'error',
      from: { path: '^src/index\\.ts$' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'no-circular',
      comment:
        'Modules that import each other at run time cannot be read, tested or moved on their own (a cycle through type-only imports is erased by the compiler).',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'src-not-to-test',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'src-not-to-dev-dependencies',
      comment: 'What ships may not need a devDependency at run time.',
      severity: 'error',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
