import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/dist.js';
import { anchors, docFiles, isExternal, links } from './markdown.js';

/**
 * Every relative link and `#anchor` in README.md and docs/ leads somewhere: the file exists,
 * and an anchor names a heading of that file as GitHub spells it. The same holds for the pages
 * that source comments cite (`docs/architecture.md#exactly-once`). Moving or renaming a
 * section then fails here instead of leaving a dead link in the manual or the code.
 */

const files = docFiles(ROOT);
const text = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

/** What is wrong with `target` as written in `file`, or undefined when it leads somewhere. */
function brokenLink(file: string, target: string): string | undefined {
  const hash = target.indexOf('#');
  const path = hash === -1 ? target : target.slice(0, hash);
  const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const to = path === '' ? file : normalize(join(dirname(file), decodeURIComponent(path)));
  if (to.startsWith('..')) return `${target} leaves the repository`;
  if (!existsSync(join(ROOT, to))) return `${to} does not exist`;
  if (anchor === undefined) return undefined;
  if (!to.endsWith('.md') || statSync(join(ROOT, to)).isDirectory())
    return `#${anchor} on ${to}, which is not a Markdown page`;
  if (!anchors(text(to)).has(anchor)) return `${to} has no heading with the anchor #${anchor}`;
  return undefined;
}

describe('links in README.md and docs/', () => {
  it('covers the README and the pages of docs/', () => {
    expect(files[0]).toBe('README.md');
    expect(files.length).toBeGreaterThan(10);
  });

  it.each(files)('every relative link and anchor in %s points at an existing file and heading', (file) => {
    const found = links(text(file)).filter((l) => !isExternal(l.target));
    const broken = found.flatMap((l) => {
      const why = brokenLink(file, l.target);
      return why ? [`${file}:${l.line}: (${l.target}): ${why}`] : [];
    });
    expect(broken).toEqual([]);
  });

  it('every docs/ page and anchor cited in src/ exists', () => {
    const sources = (dir: string): string[] =>
      readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? sources(`${dir}/${e.name}`) : e.name.endsWith('.ts') ? [`${dir}/${e.name}`] : [],
      );
    const cited = sources('src').flatMap((file) =>
      [...text(file).matchAll(/\bdocs\/[\w/-]+\.md(?:#[\w-]+)?/g)].map((m) => ({ file, target: m[0] })),
    );
    expect(cited.length).toBeGreaterThan(5);
    const broken = cited.flatMap(({ file, target }) => {
      const why = brokenLink('README.md', target);
      return why ? [`${file}: ${target}: ${why}`] : [];
    });
    expect(broken).toEqual([]);
  });

  it('finds a broken link, a missing heading and a wrong anchor spelling', () => {
    // The spelling rules themselves, on headings that exist in docs/commands.md.
    expect(brokenLink('README.md', 'docs/commands.md#exit-codes')).toBeUndefined();
    expect(brokenLink('README.md', 'docs/commands.md#htorder-check--check-manifests-offline')).toBeUndefined();
    expect(brokenLink('docs/commands.md', '#machine-readable-output---json')).toBeUndefined();
    expect(brokenLink('README.md', 'docs/commands.md#Exit-Codes')).toMatch(/no heading/);
    expect(brokenLink('README.md', 'docs/commands.md#exit_codes')).toMatch(/no heading/);
    expect(brokenLink('README.md', 'docs/no-such-page.md')).toMatch(/does not exist/);
    expect(brokenLink('docs/commands.md', 'commands.md#no-such-heading')).toMatch(/no heading/);
    expect(brokenLink('docs/commands.md', '../../outside.md')).toMatch(/leaves the repository/);
    const page =
      '# A page\n\n## Exit codes\n\n```sh\n# not a heading\n```\n\n## `htorder check` — offline\n## Exit codes\n';
    expect(anchors(page)).toEqual(new Set(['a-page', 'exit-codes', 'htorder-check--offline', 'exit-codes-1']));
  });
});
