import { describe, expect, it } from 'vitest';
import { first, jsonSummary } from '../../src/cli/json-summary.js';
import type { ResultReport } from '../../src/report/model.js';

describe('the --json summary', () => {
  it('names the command and exit code, and per input its file, status, problem and the details of a read input', () => {
    const report = { summary: { jobs: 1 } } as unknown as ResultReport;
    const out = jsonSummary(
      'check',
      [
        { file: 'a.yaml', status: 'valid', report },
        { file: 'nope.yaml', status: 'unreadable', problem: 'no such file' },
      ],
      2,
      (r, o) => ({ jobs: r.summary.jobs, of: o.file }),
    );
    expect(out).toEqual({
      command: 'check',
      exitCode: 2,
      inputs: [
        { file: 'a.yaml', status: 'valid', jobs: 1, of: 'a.yaml' },
        { file: 'nope.yaml', status: 'unreadable', problem: 'no such file' },
      ],
    });
  });

  it('takes the first lines without walking the rest', () => {
    function* lines(): Generator<string> {
      yield 'a';
      yield 'b';
      throw new Error('walked past the lines it needed');
    }
    expect(first(lines(), 2)).toEqual(['a', 'b']);
    expect(first(lines(), 0)).toEqual([]);
    expect(first(['x'], 5)).toEqual(['x']);
  });
});
