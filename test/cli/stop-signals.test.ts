import { describe, expect, it } from 'vitest';
import { untilStopped } from '../../src/cli/stop-signals.js';

describe('untilStopped', () => {
  it('stops on the first SIGTERM and leaves no handler behind', async () => {
    const before = process.listenerCount('SIGTERM');
    const beforeInt = process.listenerCount('SIGINT');
    const { signal, stopped } = untilStopped();
    expect(process.listenerCount('SIGTERM')).toBe(before + 1);
    expect(signal.aborted).toBe(false);
    process.emit('SIGTERM');
    await stopped;
    expect(signal.aborted).toBe(true);
    expect(process.listenerCount('SIGTERM')).toBe(before);
    expect(process.listenerCount('SIGINT')).toBe(beforeInt);
  });

  it('stops with the signal it is given, also one aborted already, or by stop()', async () => {
    const controller = new AbortController();
    const a = untilStopped(controller.signal);
    controller.abort();
    await a.stopped;
    const c = untilStopped(controller.signal);
    expect(c.signal.aborted).toBe(true);
    await c.stopped;
    const before = process.listenerCount('SIGINT');
    const b = untilStopped();
    expect(process.listenerCount('SIGINT')).toBe(before + 1);
    b.stop();
    await b.stopped;
    expect(b.signal.aborted).toBe(true);
    expect(process.listenerCount('SIGINT')).toBe(before);
  });
});
