import { execFileSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { DIST, requireDist } from '../../support/dist.js';

beforeAll(() => requireDist());

/**
 * Whether `track` reads a shipped job's detail again, decided by the built code in a process of
 * its own running in the time zone `tz`: the answer must not depend on the host's zone.
 */
function needsDetailIn(tz: string, uriExpires: string, now: string): boolean {
  const module = pathToFileURL(`${DIST}/pipeline/track/build-tracking.js`).href;
  const script = `
    const { needsDetail } = await import(${JSON.stringify(module)});
    const active = { masterJobStatus: 'Dispatched', dateOut: '2026-12-01T09:00:00' };
    const previous = { ...active, invoiceFile: { uri: 'https://files.example.com/i.pdf', uriExpires: ${JSON.stringify(uriExpires)} } };
    process.stdout.write(String(needsDetail(active, previous, new Date(${JSON.stringify(now)}))));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH, TZ: tz },
    encoding: 'utf8',
  });
  return out === 'true';
}

describe('an invoice link whose expiry has no zone', () => {
  // The spec does not show the format; a zone-less time is the API's UTC, in every host zone.
  for (const tz of ['America/New_York', 'Asia/Tokyo', 'UTC']) {
    it(`is read as UTC on a host in ${tz}`, () => {
      expect(needsDetailIn(tz, '2026-12-02T10:00:00', '2026-12-02T08:00:00Z')).toBe(false);
      expect(needsDetailIn(tz, '2026-12-02T10:00:00', '2026-12-02T12:00:00Z')).toBe(true);
      expect(needsDetailIn(tz, '2026-12-02T10:00:00.1234567', '2026-12-02T09:59:59Z')).toBe(false);
    });
  }

  it('is read as its zone says when it names one', () => {
    expect(needsDetailIn('Asia/Tokyo', '2026-12-02T10:00:00+02:00', '2026-12-02T07:30:00Z')).toBe(false);
    expect(needsDetailIn('America/New_York', '2026-12-02T10:00:00Z', '2026-12-02T10:00:01Z')).toBe(true);
  });

  it('is read again when the expiry is no ISO date-time (read as local time by Date.parse)', () => {
    expect(needsDetailIn('Asia/Tokyo', '12/02/2026 10:00:00', '2026-12-02T08:00:00Z')).toBe(true);
    expect(needsDetailIn('America/New_York', 'soon', '2026-12-02T08:00:00Z')).toBe(true);
  });
});
