import { escapeHtml, trusted, type Html } from './html.js';

/**
 * Stacked bar charts as SVG written by the server: a handful of rectangles needs no charting
 * library, no script and nothing from outside the page (the CSP allows none). Colours are
 * presentation attributes, which the CSP's style-src does not govern.
 */

export interface Series {
  label: string;
  colour: string;
}

export interface Bar {
  label: string;
  values: number[];
}

const W = 640;
const H = 200;
const PAD = { left: 48, right: 8, top: 8, bottom: 36 };

function niceMax(n: number): number {
  if (n <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(n));
  const m = n / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

export function stackedBars(
  title: string,
  series: readonly Series[],
  bars: readonly Bar[],
  format: (n: number) => string = String,
): Html {
  const totals = bars.map((b) => b.values.reduce((a, v) => a + Math.max(0, v), 0));
  const max = niceMax(Math.max(0, ...totals));
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const step = plotW / Math.max(1, bars.length);
  const bw = Math.max(2, step * 0.7);
  const y = (v: number): number => PAD.top + plotH - (v / max) * plotH;
  const parts: string[] = [];
  for (const t of [0, max / 2, max]) {
    parts.push(
      `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y(t).toFixed(1)}" y2="${y(t).toFixed(1)}" stroke="#ddd"/>`,
      `<text x="${PAD.left - 4}" y="${(y(t) + 4).toFixed(1)}" text-anchor="end" font-size="11" fill="#555">${escapeHtml(format(t))}</text>`,
    );
  }
  bars.forEach((b, i) => {
    const x = PAD.left + i * step + (step - bw) / 2;
    let base = 0;
    b.values.forEach((v, s) => {
      if (v <= 0) return;
      const top = y(base + v);
      const h = y(base) - top;
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${top.toFixed(1)}" width="${bw.toFixed(1)}" height="${h.toFixed(1)}" fill="${escapeHtml(series[s]?.colour ?? '#999')}"><title>${escapeHtml(`${b.label}: ${format(v)} ${series[s]?.label ?? ''}`)}</title></rect>`,
      );
      base += v;
    });
    parts.push(
      `<text x="${(x + bw / 2).toFixed(1)}" y="${H - PAD.bottom + 14}" text-anchor="middle" font-size="10" fill="#555">${escapeHtml(b.label.slice(5))}</text>`,
    );
  });
  const gap = Math.min(120, (W - PAD.left) / Math.max(1, series.length));
  const legend = series
    .map(
      (s, i) =>
        `<rect x="${(PAD.left + i * gap).toFixed(1)}" y="${H - 12}" width="10" height="10" fill="${escapeHtml(s.colour)}"/><text x="${(PAD.left + i * gap + 14).toFixed(1)}" y="${H - 3}" font-size="11" fill="#333">${escapeHtml(s.label)}</text>`,
    )
    .join('');
  return trusted(
    `<svg class="chart" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${escapeHtml(title)}"><title>${escapeHtml(title)}</title>${parts.join('')}${legend}</svg>`,
  );
}
