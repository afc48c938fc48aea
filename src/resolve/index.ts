/** Stages 1–3 (resolve, preflight, estimate) as the pipeline uses them. */
export { createCatalogue, type AccountCatalogue, type CatalogueClient } from './catalogue.js';
export { resolveJob, type ResolvedJob } from './resolve-job.js';
export type { JobEstimate, LineEstimate } from '../pipeline/estimate/model.js';
