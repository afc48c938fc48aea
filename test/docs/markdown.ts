import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Reading the manual the way GitHub renders it, for the docs tests: which files make it up,
 * the anchors its headings get, and the links it contains (outside code).
 */

/** README.md and every `docs/**\/*.md`, as paths relative to `root`, README first. */
export function docFiles(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name));
      else if (e.name.endsWith('.md')) found.push(relative(root, join(dir, e.name)));
    }
  };
  walk(join(root, 'docs'));
  return ['README.md', ...found.sort()];
}

/**
 * GitHub's anchor for a heading: the rendered text (inline code, emphasis and link markup
 * dropped), lowercased, punctuation removed, each space a `-`.
 */
export function slugify(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}_\s-]/gu, '').replace(/\s/g, '-');
}

/** Lines outside fenced code blocks, with their 1-based numbers. */
function proseLines(text: string): { line: string; n: number }[] {
  const out: { line: string; n: number }[] = [];
  let fenced = false;
  text.split('\n').forEach((line, i) => {
    if (/^\s*```/.test(line)) fenced = !fenced;
    else if (!fenced) out.push({ line, n: i + 1 });
  });
  return out;
}

/** The anchors of a file's headings; a repeated heading gets `-1`, `-2`, … as on GitHub. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { line } of proseLines(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slugify(m[1]);
    const k = seen.get(base) ?? 0;
    seen.set(base, k + 1);
    out.add(k === 0 ? base : `${base}-${k}`);
  }
  return out;
}

export interface Link {
  target: string;
  line: number;
}

/** Every inline link `[text](target)` outside code blocks and code spans. */
export function links(text: string): Link[] {
  const out: Link[] = [];
  for (const { line, n } of proseLines(text)) {
    const prose = line.replace(/`[^`]*`/g, 'code');
    for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ target: m[1], line: n });
  }
  return out;
}

export const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target);
