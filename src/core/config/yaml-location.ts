import type { Alias, Document, LineCounter, Node as YamlNode } from 'yaml';
import { lateRequire } from '../late-require.js';

/**
 * `file:line:col` of a node of a config file, for messages (the file alone when the node has
 * no position). The sections of the file (routes, notify) locate their problems with it.
 */
export function yamlLocator(path: string, lineCounter: LineCounter): (node: unknown) => string {
  return (node) => {
    const offset = (node as YamlNode | null | undefined)?.range?.[0];
    if (offset === undefined) return path;
    const { line, col } = lineCounter.linePos(offset);
    return `${path}:${line}:${col}`;
  };
}

/**
 * The `yaml` package, loaded when a config file is read: a run without one, of a manifest the
 * fast reader takes (src/manifest/yaml/fast-yaml.ts), never loads it.
 */
export function yamlPackage(): typeof import('yaml') {
  return lateRequire<typeof import('yaml')>('yaml');
}

/**
 * The plain value of a parsed config or mapping file. An alias that cannot be expanded — its
 * anchor missing or misspelt, or expanding past the yaml package's budget (an alias bomb) — is
 * a problem at that alias: the package throws a ReferenceError for both, which would end the
 * command as an internal error with a stack trace instead of naming the file and the line.
 */
export function plainValue(doc: Document.Parsed): { value: unknown } | { problem: string; at: YamlNode | undefined } {
  try {
    return { value: doc.toJS() };
  } catch (err) {
    if (!(err instanceof ReferenceError)) throw err;
    const { visit } = yamlPackage();
    let first: Alias | undefined;
    let unresolved: Alias | undefined;
    visit(doc, {
      Alias: (_key, alias) => {
        first ??= alias;
        if (alias.resolve(doc) !== undefined) return undefined;
        unresolved = alias;
        return visit.BREAK;
      },
    });
    if (unresolved)
      return { problem: `alias *${unresolved.source} has no anchor &${unresolved.source} before it`, at: unresolved };
    return { problem: 'aliases expand too far (this looks like an alias bomb); write the values out', at: first };
  }
}
