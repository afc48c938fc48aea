import type { Mapping } from './model.js';

/**
 * Does this mapping need the expression path (anything beyond renames, constants and values)?
 * Apart from mapped-rows.ts, so that a reader can ask without loading the expression code
 * (jsonata, a noticeable part of a start): readers import MappedRows only for such a mapping.
 */
export function isExpressionMapping(m: Mapping | undefined): m is Mapping {
  return (
    m !== undefined &&
    (m.fields !== undefined ||
      m.skip !== undefined ||
      m.fillDown !== undefined ||
      m.ignoreUnmapped !== undefined ||
      m.lookups !== undefined ||
      m.extends !== undefined)
  );
}
