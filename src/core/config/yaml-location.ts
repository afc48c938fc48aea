import type { LineCounter, Node as YamlNode } from 'yaml';
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
