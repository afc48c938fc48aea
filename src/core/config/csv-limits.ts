import type { Settings } from './resolve-settings.js';

/**
 * The CSV reader's limits as the settings table sets them (csvMaxColumns, csvMaxRecordBytes,
 * csvMaxFileBytes), in the shape of the reader's `CsvLimits`. A module of its own so `check`,
 * which needs no API session, reads them without loading the pipeline's wiring.
 */
export function csvLimitsFrom(settings: Settings): {
  maxColumns?: number;
  maxRecordBytes?: number;
  maxFileBytes?: number;
} {
  const limits: { maxColumns?: number; maxRecordBytes?: number; maxFileBytes?: number } = {};
  const maxColumns = settings.get('csvMaxColumns');
  const maxRecordBytes = settings.get('csvMaxRecordBytes');
  const maxFileBytes = settings.get('csvMaxFileBytes');
  if (maxColumns !== undefined) limits.maxColumns = maxColumns;
  if (maxRecordBytes !== undefined) limits.maxRecordBytes = maxRecordBytes;
  if (maxFileBytes !== undefined) limits.maxFileBytes = maxFileBytes;
  return limits;
}
