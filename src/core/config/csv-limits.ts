import type { Settings } from './resolve-settings.js';

/**
 * The CSV reader's limits as the settings table sets them (csvMaxColumns, csvMaxRecordBytes,
 * csvMaxFileBytes), in the shape of the reader's `CsvLimits`. A module of its own so `check`,
 * which needs no API session, reads them without loading the pipeline's wiring.
 */
export function csvLimitsFrom(settings: Settings): {
  maxColumns: number;
  maxRecordBytes: number;
  maxFileBytes: number;
} {
  return {
    maxColumns: settings.get('csvMaxColumns'),
    maxRecordBytes: settings.get('csvMaxRecordBytes'),
    maxFileBytes: settings.get('csvMaxFileBytes'),
  };
}
