import { hash } from 'node:crypto';
import type { Diagnostic } from '../manifest/model.js';
import type { ResolvedJob } from '../resolve/resolve-job.js';
import { canonicalJson } from './job-hash.js';
import { type JobState, type Resolution, withFindings } from './job-state.js';
import type { StageContext } from './stages/context.js';

/**
 * Saved plans (docs/guardrails.md#saved-plans-plan---out-and-apply): `htorder plan --out`
 * writes what `run` would send, `htorder apply` sends exactly that or nothing.
 * schemas/plan.schema.json describes the file for other tools.
 */

export interface SavedPlan {
  planVersion: 1;
  htorderVersion: string;
  createdAt: string;
  /** The ledger's account key (region + account id): apply refuses another account. */
  account: string;
  currency: string | null;
  inputs: PlannedInput[];
}

export interface PlannedInput {
  /** Absolute path of the input when planned. */
  file: string;
  /** SHA-256 of its bytes: apply refuses an input whose bytes changed. */
  sha256: string;
  jobs: PlannedJob[];
}

export interface PlannedJob {
  orderNumber: string;
  /**
   * SHA-256 of the exact request body that would be sent (canonical JSON), where a link made
   * from an `artwork:` file stands as the artwork's store key (its content's hash).
   */
  request: string;
  estimate: number | null;
}

/**
 * The fingerprint of a request body: canonical JSON, so key order does not matter. A link
 * made from an `artwork:` file is presigned anew at every run, so it counts as what it leads
 * to (`artwork:KEY`, the key being the SHA-256 of the file's bytes): the same artwork is the
 * same request, other artwork is not.
 */
export function requestHash(resolved: Pick<ResolvedJob, 'candidate' | 'artworkKeys'>): string {
  const { candidate, artworkKeys = {} } = resolved;
  if (Object.keys(artworkKeys).length === 0) return hash('sha256', canonicalJson(candidate), 'hex');
  const items = candidate.items.map((item, i) => {
    const key = artworkKeys[i];
    return key === undefined ? item : { ...item, externalArtworkUrl: `artwork:${key}` };
  });
  return hash('sha256', canonicalJson({ ...candidate, items }), 'hex');
}

/** The fingerprint of a resolution's request: computed from a whole one, or as a kept one holds it. */
export function requestOf(resolved: Resolution): string {
  return 'kept' in resolved ? resolved.request : requestHash(resolved);
}

/** What apply holds one input's jobs to. */
export interface PlanCheck {
  jobs: ReadonlyMap<string, PlannedJob>;
  /** How much an estimate may have risen since the plan (amount, default 0). */
  tolerance: number;
}

/**
 * apply's check of the ready jobs against the plan, after the plan stages: a job the plan does
 * not name is not sent (not-submitted); one whose request now differs, or whose estimate rose
 * beyond the tolerance, is refused, and so (all or nothing) nothing of the input is sent.
 */
export function checkPlanned(jobs: readonly JobState[], plan: PlanCheck, ctx: StageContext): JobState[] {
  return jobs.map((job) => {
    if (job.outcome !== 'ready') return job;
    const field = `jobs[${job.index}]`;
    const at = (code: string, message: string): Diagnostic => ({
      severity: 'error',
      code,
      message,
      field,
      source: ctx.manifest.sources.locate(field),
    });
    const planned = plan.jobs.get(job.orderNumber);
    if (!planned)
      return {
        ...withFindings(job, [at('apply.not-planned', 'not in the plan: not sent (plan it, or run it)')]),
        outcome: 'held-back',
      };
    if (requestOf(job.resolved) !== planned.request)
      return {
        ...withFindings(job, [
          at('apply.request-changed', "the request resolved now differs from the plan's: plan again"),
        ]),
        outcome: 'refused',
      };
    const now = job.resolved.estimate.total;
    if (planned.estimate !== null && now !== undefined && now > planned.estimate + plan.tolerance)
      return {
        ...withFindings(job, [
          at(
            'apply.estimate-rose',
            `the estimate rose from ${planned.estimate.toFixed(2)} to ${now.toFixed(2)}, beyond the tolerance ${plan.tolerance.toFixed(2)}: plan again`,
          ),
        ]),
        outcome: 'refused',
      };
    return job;
  });
}

/**
 * The saved plan's file, `JSON.stringify(plan, null, 2)` and a newline, piece by piece: a plan
 * of a million jobs is written without its text ever being one string.
 */
export function* savedPlanText(plan: SavedPlan): Generator<string> {
  yield* arrayLast(plan, 'inputs', 0, (input, depth) => arrayLast(input, 'jobs', depth, jobText));
  yield '\n';
}

/** A job of the plan, as JSON.stringify indents it at `depth`. */
function* jobText(job: PlannedJob, depth: number): Generator<string> {
  yield indented(JSON.stringify(job, null, 2), depth);
}

/**
 * `object` as JSON.stringify(object, null, 2) at `depth` writes it, its last key `key` an
 * array whose items `item` writes: the keys before it as one piece, then each item.
 */
function* arrayLast<T extends object, K extends keyof T>(
  object: T,
  key: K,
  depth: number,
  item: (value: T[K] extends readonly (infer I)[] ? I : never, depth: number) => Iterable<string>,
): Generator<string> {
  const { [key]: items, ...rest } = object;
  const head = JSON.stringify(rest, null, 2);
  const pad = '  '.repeat(depth);
  // `{\n  "a": 1\n}` less its closing line, then the array as the last key.
  yield indented(`${head.slice(0, -2)},\n  ${JSON.stringify(key)}: [`, depth);
  const list = items as readonly never[];
  if (list.length === 0) {
    yield `]\n${pad}}`;
    return;
  }
  for (let i = 0; i < list.length; i++) {
    yield `${i === 0 ? '' : ','}\n${pad}    `;
    yield* item(list[i], depth + 2);
  }
  yield `\n${pad}  ]\n${pad}}`;
}

/** JSON text with its lines after the first indented to `depth` (JSON strings hold no raw newline). */
function indented(text: string, depth: number): string {
  return depth === 0 ? text : text.replaceAll('\n', `\n${'  '.repeat(depth)}`);
}
