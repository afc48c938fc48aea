import { FAULT_KINDS, type FaultKind, type FaultRule } from '../admin-types.js';
import type { TokenStore } from '../auth.js';
import type { Faults } from '../faults.js';
import { JOB_STATUSES } from '../data/lookups.js';
import { MAX_CLOCK_OFFSET_MS } from '../clock.js';
import { isoSeconds } from '../dates.js';
import { enter, NEXT_STATUS, settle } from '../jobs/lifecycle.js';
import { json, problem, type Reply } from '../handler.js';
import { Router } from '../router.js';
import type { World } from '../state.js';

export interface AdminDeps {
  world: World;
  tokens: TokenStore;
  faults: Faults;
  calls: Map<string, number>;
  info(): unknown;
}

export interface AdminRequest {
  params: Record<string, string>;
  body: unknown;
  path: string;
}

type AdminHandler = (req: AdminRequest, deps: AdminDeps) => Reply;

function validRules(body: unknown): { rules: FaultRule[]; seed?: number } | string {
  const b = (body ?? {}) as { rules?: unknown; seed?: unknown };
  if (!Array.isArray(b.rules)) return 'body must be { rules: FaultRule[], seed?: number }';
  for (const [i, r] of b.rules.entries()) {
    const rule = r as Partial<FaultRule>;
    if (typeof rule.route !== 'string' || !rule.route) return `rules[${i}].route is required`;
    if (!FAULT_KINDS.includes(rule.kind as FaultKind))
      return `rules[${i}].kind must be one of ${FAULT_KINDS.join(', ')}`;
    if (rule.kind === 'status' && ![429, 500, 502, 503].includes(rule.status as number))
      return `rules[${i}].status must be 429, 500, 502 or 503`;
    if (rule.when !== undefined && rule.when !== 'create' && rule.when !== 'validate')
      return `rules[${i}].when must be "create" or "validate"`;
    if (
      rule.probability !== undefined &&
      (typeof rule.probability !== 'number' || rule.probability < 0 || rule.probability > 1)
    )
      return `rules[${i}].probability must be within 0..1`;
  }
  if (b.seed !== undefined && typeof b.seed !== 'number') return 'seed must be a number';
  return { rules: b.rules as FaultRule[], seed: b.seed as number | undefined };
}

/** The unauthenticated test controls under /_sandbox/. */
export function adminRouter(): Router<AdminHandler> {
  const r = new Router<AdminHandler>();
  r.add('GET', '/info', (_q, d) => json(d.info()));
  r.add('POST', '/reset', (_q, d) => {
    d.world.reset();
    d.calls.clear();
    d.faults.clear();
    return json({ ok: true });
  });
  r.add('GET', '/jobs', (_q, d) => {
    const now = d.world.clock.nowMs();
    return json(
      d.world.created.map((rec) => {
        const job = d.world.customer(rec.customerId).jobs.get(rec.jobNumber);
        return { ...rec, jobStatus: job ? settle(job, now).status : rec.jobStatus };
      }),
    );
  });
  r.add('POST', '/jobs/{jobNumber}/advance', (q, d) => {
    const n = Number(q.params.jobNumber);
    const now = d.world.clock.nowMs();
    const job = d.world
      .allCustomers()
      .map((c) => c.jobs.get(n))
      .find((j) => j !== undefined);
    if (!job) return problem(404, `Job ${q.params.jobNumber} was not found.`, q.path);
    settle(job, now);
    const body = q.body as { status?: unknown; unlisted?: unknown } | null;
    const wanted = body?.status;
    let next: string | undefined;
    if (wanted !== undefined && wanted !== null) {
      next = JOB_STATUSES.find((s) => s.name.toLowerCase() === String(wanted).toLowerCase())?.name;
      // `unlisted: true` enters a status the lookup does not know yet (the set grows: clients must cope).
      if (!next && body?.unlisted === true && String(wanted).trim() !== '') next = String(wanted);
      if (!next) return problem(400, `'${String(wanted)}' is not a job status; see GET /Lookups/job-statuses.`, q.path);
    } else {
      next = NEXT_STATUS[job.status];
      if (!next) return problem(409, `Job ${n} is ${job.status}, which has no next status.`, q.path);
    }
    enter(job, next, now);
    d.world.dirty = true;
    return json({ jobNumber: job.jobNumber, jobStatus: job.status });
  });
  r.add('GET', '/calls', (_q, d) =>
    json(Object.fromEntries([...d.calls.entries()].sort(([a], [b]) => a.localeCompare(b)))),
  );
  r.add('POST', '/calls/reset', (_q, d) => {
    d.calls.clear();
    return json({ ok: true });
  });
  r.add('GET', '/faults', (_q, d) => json(d.faults.list()));
  r.add('PUT', '/faults', (q, d) => {
    const v = validRules(q.body);
    if (typeof v === 'string') return problem(400, v, q.path);
    d.faults.set(v.rules, v.seed);
    return json({ ok: true, rules: v.rules.length });
  });
  r.add('DELETE', '/faults', (_q, d) => {
    d.faults.clear();
    return json({ ok: true });
  });
  r.add('GET', '/clock', (_q, d) => json({ now: isoSeconds(d.world.clock.now()) }));
  r.add('POST', '/clock/advance', (q, d) => {
    const ms = (q.body as { ms?: unknown } | null)?.ms;
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)
      return problem(400, 'body must be { ms: number >= 0 }', q.path);
    const room = MAX_CLOCK_OFFSET_MS - d.world.clock.offsetMs();
    if (ms > room)
      return problem(
        400,
        `the clock moves at most ${MAX_CLOCK_OFFSET_MS} ms forward in all; ${room} ms are left`,
        q.path,
      );
    d.world.clock.advance(ms);
    d.world.dirty = true;
    return json({ now: isoSeconds(d.world.clock.now()) });
  });
  r.add('POST', '/tokens/expire', (_q, d) => json({ expired: d.tokens.expireAll() }));
  return r;
}
