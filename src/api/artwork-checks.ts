import { artworkAgent, type ProbeOptions, type ProbeResult, probeArtwork } from './artwork-probe.js';
import { FairSlots } from './fair-slots.js';

/** One input's view of the checks: its links, its budget of time, its share of the slots. */
export interface LinkChecks {
  /** on: a failed probe refuses the line; warn: it is a warning. */
  readonly mode: 'on' | 'warn';
  check(link: string): Promise<ProbeResult>;
}

/** Every distinct link probed once per run, a few at a time, shared fairly by the inputs; `close` ends the connections. */
export interface ArtworkChecks {
  readonly mode: 'on' | 'warn';
  /** The checks of one input (each input asks through its own). */
  forInput(): LinkChecks;
  close(): Promise<void>;
}

export interface ArtworkCheckOptions extends Omit<ProbeOptions, 'signal'> {
  /** Probes in flight at once, for every input together. Default 4. */
  concurrency?: number;
  /** The time one input's checks may take in all, from its first: later ones end `artwork.unchecked`. Default 5 minutes. */
  budgetMs?: number;
}

/** artworkCheckBudgetMs's default. */
const CHECK_BUDGET_MS = 300_000;

/**
 * The artwork checks of a run or a watcher. A slow link holds a slot until its probe's
 * deadline at most, an input's links all stop at its budget, and no input holds every slot
 * (FairSlots): one dropper's links cannot keep another's from being asked.
 */
export function artworkChecks(mode: 'on' | 'warn', opts: ArtworkCheckOptions = {}): ArtworkChecks {
  const agent = artworkAgent(opts);
  const slots = new FairSlots<object>(opts.concurrency ?? 4);
  const seen = new Map<string, Promise<ProbeResult>>();
  const probe = (link: string, owner: object, signal: AbortSignal): Promise<ProbeResult> => {
    let result = seen.get(link);
    if (result === undefined) {
      const made = slots.run(owner, () => probeArtwork(link, agent, { ...opts, signal }));
      seen.set(link, made);
      // A check the asker's budget cut short is not the link's answer: the next input asks again.
      void made.then((r) => {
        if (!r.ok && r.budget && seen.get(link) === made) seen.delete(link);
      });
      result = made;
    }
    return result;
  };
  return {
    mode,
    forInput() {
      const owner = {};
      let budget: AbortController | undefined;
      return {
        mode,
        async check(link) {
          if (!budget) {
            const started = new AbortController();
            setTimeout(() => started.abort(), opts.budgetMs ?? CHECK_BUDGET_MS).unref();
            budget = started;
          }
          const { signal } = budget;
          const result = await probe(link, owner, signal);
          // Another input's budget ended the probe this one shared: ask again, on this input's own.
          if (!result.ok && result.budget && !signal.aborted) return probe(link, owner, signal);
          return result;
        },
      };
    },
    close: () => agent.close(),
  };
}
