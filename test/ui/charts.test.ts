import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stackedBars } from '../../src/ui/charts.js';

/**
 * The chart's labels come from outside (day labels from report dates, series names, a title, the
 * formatter's text): each is escaped like anywhere else on the page, so hostile text stays text.
 */

const HOSTILE = '</title><script>alert(1)</script><rect onload="x" a=\'b\'>&amp;';

/** Strings made mostly of markup characters. */
const markup = fc.string({ unit: fc.constantFrom('<', '>', '/', '"', "'", '&', '=', ' ', 'a', 's', '\u202e') });

/** The markup of a chart with every outside text removed: only the chart's own tags remain. */
function tagsOf(svg: string): string[] {
  return [...svg.matchAll(/<\/?([a-zA-Z]+)/g)].map((m) => m[1]);
}

describe('stackedBars', () => {
  it('escapes hostile text in the title, the series, the bar labels and the formatted values', () => {
    const svg = stackedBars(
      HOSTILE,
      [{ label: HOSTILE, colour: `#fff" onclick="alert(1)` }],
      [{ label: `2024-${HOSTILE}`, values: [3] }],
      (n) => `${n}${HOSTILE}`,
    ).text;
    expect(svg).not.toContain('<script');
    expect(svg).not.toContain('onclick="');
    expect(svg).not.toContain('onload="');
    expect(svg).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(svg).toContain('fill="#fff&quot; onclick=&quot;alert(1)"');
    expect(svg).toContain('&amp;amp;');
    expect(new Set(tagsOf(svg))).toEqual(new Set(['svg', 'title', 'line', 'text', 'rect']));
  });

  it('writes control and bidirectional characters in a label as escapes', () => {
    const svg = stackedBars('t', [{ label: 'a\u202eb\u0007', colour: '#000' }], []).text;
    expect(svg).not.toContain('\u202e');
    expect(svg).not.toContain('\u0007');
  });

  it('never lets any label add markup of its own', () => {
    fc.assert(
      fc.property(markup, markup, markup, (title, series, bar) => {
        const svg = stackedBars(title, [{ label: series, colour: series }], [{ label: bar, values: [1] }]).text;
        const plain = stackedBars('t', [{ label: 's', colour: '#000' }], [{ label: 'b', values: [1] }]).text;
        expect(tagsOf(svg)).toEqual(tagsOf(plain));
      }),
    );
  });
});
