import { html, type Html } from './html.js';

/**
 * Stacked bar charts as SVG written by the server: a handful of rectangles needs no charting
 * library, no script and nothing from outside the page (the CSP allows none). Colours are
 * presentation attributes, which the CSP's style-src does not govern. Every label is built with
 * `html`, so text from outside is escaped like anywhere else on the page.
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
/** A legend entry's width (a swatch and a status name such as `already-submitted`), and a row's height. */
const LEGEND_GAP = 130;
const LEGEND_ROW = 15;

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
  const at = (n: number): string => n.toFixed(1);
  const grid = [0, max / 2, max].map(
    (t) =>
      html`<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${at(y(t))}" y2="${at(y(t))}" stroke="#ddd"/><text x="${PAD.left - 4}" y="${at(y(t) + 4)}" text-anchor="end" font-size="11" fill="#555">${format(t)}</text>`,
  );
  const columns = bars.map((b, i) => {
    const x = PAD.left + i * step + (step - bw) / 2;
    let base = 0;
    const rects = b.values.map((v, s) => {
      if (v <= 0) return null;
      const top = y(base + v);
      const h = y(base) - top;
      base += v;
      return html`<rect x="${at(x)}" y="${at(top)}" width="${at(bw)}" height="${at(h)}" fill="${series[s]?.colour ?? '#999'}"><title>${`${b.label}: ${format(v)} ${series[s]?.label ?? ''}`}</title></rect>`;
    });
    return html`${rects}<text x="${at(x + bw / 2)}" y="${H - PAD.bottom + 14}" text-anchor="middle" font-size="10" fill="#555">${b.label.slice(5)}</text>`;
  });
  // The legend in rows of entries wide enough for a status name: the chart grows a row at a time.
  const perRow = Math.max(1, Math.floor((W - PAD.left) / LEGEND_GAP));
  const extra = (Math.ceil(series.length / perRow) - 1) * LEGEND_ROW;
  const legend = series.map((s, i) => {
    const x = PAD.left + (i % perRow) * LEGEND_GAP;
    const top = H - 12 + Math.floor(i / perRow) * LEGEND_ROW;
    return html`<rect x="${at(x)}" y="${top}" width="10" height="10" fill="${s.colour}"/><text x="${at(x + 14)}" y="${top + 9}" font-size="11" fill="#333">${s.label}</text>`;
  });
  return html`<svg class="chart" viewBox="0 0 ${W} ${H + extra}" width="${W}" height="${H + extra}" role="img" aria-label="${title}"><title>${title}</title>${grid}${columns}${legend}</svg>`;
}
