import type { FaultRule } from './admin-types.js';
import { createRandom, type Random } from './random.js';

/** What the server does with one request, decided before it acts. */
interface FaultDecision {
  delayMs: number;
  action:
    | null
    | { kind: 'status'; status: number; retryAfterSeconds: number | null }
    | { kind: 'reset' }
    | { kind: 'create-then-drop' }
    | { kind: 'create-then-500' };
}

/**
 * Fault injection per route, with a seeded random source so a chaos run repeats exactly.
 * Rules are checked in order: every firing `latency` rule adds its delay (+ jitter); the
 * first firing rule of another kind decides the outcome. A rule with `times` is spent after
 * firing that many times.
 */
export class Faults {
  private rules: (FaultRule & { fired: number })[] = [];
  private rnd: Random;

  constructor(private readonly defaultSeed: number) {
    this.rnd = createRandom(defaultSeed);
  }

  set(rules: FaultRule[], seed?: number): void {
    this.rules = rules.map((r) => ({ ...r, fired: 0 }));
    this.rnd = createRandom(seed ?? this.defaultSeed);
  }

  clear(): void {
    this.rules = [];
  }

  list(): (FaultRule & { fired: number })[] {
    return this.rules.map((r) => ({ ...r }));
  }

  /** `jobsMode`: for POST /Jobs, whether this request is a real create or a validateOnly dry run. */
  decide(routeKey: string, jobsMode?: 'create' | 'validate'): FaultDecision {
    const out: FaultDecision = { delayMs: 0, action: null };
    for (const rule of this.rules) {
      if (!matches(rule.route, routeKey)) continue;
      if (rule.when !== undefined && rule.when !== jobsMode) continue;
      if (rule.times !== undefined && rule.fired >= rule.times) continue;
      if (rule.kind !== 'latency' && out.action) continue;
      if (!this.rnd.chance(rule.probability ?? 1)) continue;
      rule.fired++;
      switch (rule.kind) {
        case 'latency':
          out.delayMs += (rule.latencyMs ?? 0) + Math.floor(this.rnd.next() * (rule.jitterMs ?? 0));
          break;
        case 'status':
          out.action = {
            kind: 'status',
            status: rule.status as number,
            retryAfterSeconds:
              rule.status === 429 || rule.status === 503
                ? (rule.retryAfterSeconds ?? 1)
                : (rule.retryAfterSeconds ?? null),
          };
          break;
        default:
          out.action = { kind: rule.kind };
      }
    }
    return out;
  }
}

/** `*` = any non-admin route; `token` = the token endpoint; otherwise `"METHOD /template"`, any case. */
export function matches(route: string, key: string): boolean {
  const r = route.trim();
  if (r === '*') return true;
  if (r.toLowerCase() === 'token') return key === 'POST token';
  return r.toLowerCase() === key.toLowerCase();
}
