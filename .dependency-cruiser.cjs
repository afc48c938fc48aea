/**
 * The layers of htorder, lowest first. A module may import its own layer and the layers
 * below it, never one above: data flows forward through the pipeline, and the edges (CLI,
 * composition) depend on the middle, not the other way round. docs/architecture.md draws
 * the same list; `npm run deps` (part of `.ci/run`) fails on any upward import.
 */
const LAYERS = [
  // Errors every layer may throw, the version, small pure helpers, the logger.
  { name: 'core', path: '^src/(errors|version)\\.ts$|^src/(util|log)/' },
  // Settings: one table, one parser per type; config files and profiles.
  { name: 'config', path: '^src/config/' },
  // Typed client of the ordering API: transport, auth, retries, wire types.
  { name: 'api', path: '^src/api/' },
  // Durable bytes: atomic files, the S3 store, leases. Below both the ledger and the sources.
  { name: 'storage', path: '^src/storage/' },
  // Parse (YAML, JSON, CSV, ERP mapping) and schema check, with a source map for every value.
  { name: 'manifest', path: '^src/manifest/' },
  // Pure rules on one resolved job: preflight (minimums, sizes, dates) and estimate (prices).
  { name: 'estimate', path: '^src/estimate/' },
  { name: 'preflight', path: '^src/preflight/' },
  // Human values to API values, through one catalogue of lookups per account.
  { name: 'resolve', path: '^src/resolve/' },
  // The three report files next to each input.
  { name: 'report', path: '^src/report/' },
  // Exactly-once bookkeeping: intents and outcomes per order (folder or bucket).
  { name: 'ledger', path: '^src/ledger/' },
  // The stages in order: check, look-up, resolve, dry run, submit, report.
  { name: 'pipeline', path: '^src/pipeline/' },
  // Status of submitted jobs (htorder track); declared changes to them are a pipeline stage.
  { name: 'track', path: '^src/track/' },
  // Health endpoint and metrics.
  { name: 'observe', path: '^src/observe/' },
  // Webhook notifications (Slack, Teams, JSON) from the watch events: payloads, queued delivery.
  { name: 'notify', path: '^src/notify/' },
  // Drop folders and buckets: listing, claims, stability, the watch loop.
  { name: 'sources', path: '^src/sources/' },
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
        pathNot: ['^src/sandbox/', '^src/api/types\\.ts$', '^src/(errors|version)\\.ts$', '^src/util/'],
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
