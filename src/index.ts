/**
 * htorder as a library: `import { loadManifest, createApiClient, startSandbox } from 'htorder'`.
 * What is exported here is the supported API (semver applies); deeper paths are internal.
 * The CLI (`htorder`) is built from these same parts.
 */

// Manifests: read YAML/JSON/CSV (with an optional ERP mapping) into one model with located diagnostics.
export { loadManifest, formatOf, type LoadOptions, type LoadResult } from './manifest/load-manifest.js';
export { loadMapping, parseMapping } from './manifest/mapping/load-mapping.js';
export type { Mapping, MappingEncoding } from './manifest/mapping/model.js';
export type {
  Manifest,
  ManifestJob,
  ManifestItem,
  ManifestDeliveryAddress,
  ManifestFormat,
  Diagnostic,
  Severity,
  SourceLocation,
  FieldPath,
  JobList,
  ReadResult,
} from './manifest/model.js';

// Reports: the X.result.json model (schemas/report.schema.json) and the three writers.
export { buildReport, reportHasErrors, type BuildReportInput } from './report/build-report.js';
export { writeReports, type WrittenReports } from './report/write-reports.js';
export {
  JOB_STATUSES,
  type ResultReport,
  type JobResult,
  type ItemResult,
  type ReportError,
  type ReportSource,
  type ReportSummary,
  type JobStatus,
  type ReportCommand,
} from './report/model.js';

// The API: configuration, the typed client, its errors, and every wire type of the spec.
export { resolveConfig, type ConfigFlags, type ResolveConfigInput } from './core/config/resolve-config.js';
export { sandboxConfig } from './core/config/sandbox-config.js';
export type { ApiConfig, Timeouts } from './core/config/api-config.js';
export { createApiClient, type ApiClient, type ApiClientOptions, type AccountIdentity } from './api/client.js';
export { ApiError, isApiError, isNotFound, orNull, type ApiErrorKind } from './api/errors.js';
export { paginateList, paginateActiveJobs } from './api/paginate.js';
export type { RequestSpec, HttpMethod } from './api/transport.js';
export type * from './api/types.js';
// The report's JobStatus (a job's outcome) above takes the plain name; the API's lookup entry is this one.
export type { JobStatus as ApiJobStatus } from './api/types.js';

// Resolving human values against an account, and the exactly-once ledger.
export { createCatalogue, type AccountCatalogue } from './resolve/catalogue.js';
export { FolderLedger, type FolderLedgerOptions } from './storage/ledger/folder-ledger.js';
export type { LedgerStore, LedgerKey, LedgerEntry, LedgerWrite, LockGuard } from './storage/ledger/model.js';

// The local API simulator (what `htorder sandbox` and `--sandbox` run).
export {
  startSandbox,
  SandboxAdmin,
  type Sandbox,
  type SandboxOptions,
  type SandboxInfo,
  type SandboxRegion,
  type SandboxAccount,
  type FaultRule,
  type FaultKind,
  type CreatedJobRecord,
  // SandboxOptions.state: a store of the sandbox's state (what `--sandbox` keeps under the state dir).
  SandboxStateError,
  type SandboxStateStore,
  type StoredState,
  type SandboxSnapshot,
} from './sandbox/index.js';

// Logging with redaction of secrets, tokens and signed-URL query strings.
export { createLogger, silentLogger, type Logger, type LogLevel } from './core/log/logger.js';

export { VERSION } from './core/version.js';
