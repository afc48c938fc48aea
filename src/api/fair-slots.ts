/**
 * A few slots shared by several owners (inputs) so that none waits for ever behind another:
 * no owner holds more than `slots - 1` of them at once (a newcomer always finds one free or
 * soon free), and a freed slot goes to the waiting owner holding the fewest. Tasks of one owner
 * run in the order they came.
 */
export class FairSlots<Owner> {
  private running = 0;
  private readonly held = new Map<Owner, number>();
  private readonly queues = new Map<Owner, { tasks: Array<(() => void) | undefined>; head: number }>();
  private readonly share: number;

  constructor(private readonly slots: number) {
    this.share = Math.max(1, slots - 1);
  }

  /** Runs `task` for `owner` when a slot is its turn. */
  run<T>(owner: Owner, task: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = (): void => {
        task()
          .then(resolve, reject)
          .finally(() => {
            this.running--;
            const n = (this.held.get(owner) ?? 1) - 1;
            if (n === 0) this.held.delete(owner);
            else this.held.set(owner, n);
            this.next();
          });
      };
      const queue = this.queues.get(owner) ?? { tasks: [], head: 0 };
      this.queues.set(owner, queue);
      queue.tasks.push(start);
      this.next();
    });
  }

  /** Starts waiting tasks while slots are free, each for the owner holding the fewest. */
  private next(): void {
    while (this.running < this.slots) {
      let pick: Owner | undefined;
      let least = this.share;
      for (const owner of this.queues.keys()) {
        const n = this.held.get(owner) ?? 0;
        if (n < least) {
          least = n;
          pick = owner;
        }
      }
      if (pick === undefined) return;
      const queue = this.queues.get(pick);
      const start = queue?.tasks[queue.head];
      if (!queue || !start) return;
      queue.tasks[queue.head++] = undefined;
      if (queue.head === queue.tasks.length) this.queues.delete(pick);
      this.running++;
      this.held.set(pick, least + 1);
      start();
    }
  }
}
