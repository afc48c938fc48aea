/** Reports live next to their input, named after it in full: `orders.csv` → `orders.csv.result.json`. */
export interface ReportPaths {
  json: string;
  csv: string;
  errors: string;
}

export function reportPaths(inputFile: string): ReportPaths {
  return { json: `${inputFile}.result.json`, csv: `${inputFile}.result.csv`, errors: `${inputFile}.errors.txt` };
}
