import type { ClaimedInput } from './model.js';

/**
 * Claims orphans one at a time, by `claimOne` (undefined: a live instance holds it, or it is
 * gone). The search can take longer than a lease (each claim is
 * several requests to a store that may be slow), so the claims it already took are renewed
 * every `renewEveryMs` meanwhile: none runs out before the watcher holds it (and renews it). A
 * claim found lost then is dropped (forget). A failure part-way gives back every claim taken
 * before it is thrown: nothing is left claimed and unrenewed.
 */
export async function claimEach(
  names: Iterable<string>,
  claimOne: (name: string) => Promise<ClaimedInput | undefined>,
  opts: { renewEveryMs: number; now?: () => number },
): Promise<ClaimedInput[]> {
  const now = opts.now ?? Date.now;
  let out: ClaimedInput[] = [];
  let renewedAt = now();
  try {
    for (const name of names) {
      if (out.length > 0 && now() - renewedAt >= opts.renewEveryMs) {
        renewedAt = now();
        out = await renewAll(out);
      }
      const claimed = await claimOne(name);
      if (claimed) out.push(claimed);
    }
  } catch (err) {
    for (const input of out) await input.release().catch(() => undefined);
    throw err;
  }
  return out;
}

/** The claims still ours after a renewal; the lost ones are dropped. */
async function renewAll(claims: ClaimedInput[]): Promise<ClaimedInput[]> {
  const ours = await Promise.all(claims.map((c) => c.renew()));
  const kept: ClaimedInput[] = [];
  for (const [i, c] of claims.entries()) {
    if (ours[i]) kept.push(c);
    else await c.forget().catch(() => undefined);
  }
  return kept;
}
