import { printable } from '../core/printable.js';

/**
 * HTML built from parts: text from outside (file names, order numbers, API messages — all
 * chosen by whoever wrote the input or answered the request) is escaped where it is put in,
 * so a page is made only of the server's own markup and escaped text. `html`…`` escapes every
 * interpolated value that is not already Html, and nothing else produces Html.
 */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Part = Html | string | number | null | undefined | false | readonly Part[];

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Text for an element's content or a quoted attribute: markup characters escaped, and the
 * control and bidirectional characters written as escapes (printable), so a name cannot
 * reorder what is shown around it.
 */
export function escapeHtml(text: string): string {
  return printable(text).replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return '';
  if (part instanceof Html) return part.text;
  if (Array.isArray(part)) return part.map(render).join('');
  return escapeHtml(String(part));
}

export function html(strings: TemplateStringsArray, ...values: Part[]): Html {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '');
  return new Html(out);
}

/** A query-string value in an href (escaped again as an attribute by `html`). */
export function query(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
}
