import { type Stats, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { printable } from '../core/printable.js';
import { isReportName, reportNameProblem } from '../report/report-paths.js';

/**
 * The inputs of `check`, `plan` and `run` without htorder's own reports: a cron's glob
 * (`exports/*.csv`) hands last night's `X.result.csv` and `X.tracking.csv` back beside tonight's
 * export, and they are never orders. Each one left out is said on one line of stderr; the exit
 * code is that of the inputs.
 */
export function leaveOutReports(
  files: readonly string[],
  command: string,
  stderr: NodeJS.WritableStream,
): { inputs: string[]; skipped: string[] } {
  const inputs: string[] = [];
  const skipped: string[] = [];
  for (const file of files) (isReportName(file) ? skipped : inputs).push(file);
  for (const file of skipped) {
    stderr.write(`htorder ${command}: skipped ${printable(file)}: an htorder report, never read as an input\n`);
  }
  return { inputs, skipped };
}

/** Whether every input's reports can be written (their names fit the file system); each one that cannot is said. */
export function reportNamesFit(files: readonly string[], command: string, stderr: NodeJS.WritableStream): boolean {
  let fit = true;
  for (const file of files) {
    const problem = reportNameProblem(file);
    if (problem === undefined) continue;
    stderr.write(`htorder ${command}: ${printable(file)}: ${printable(problem)}\n`);
    fit = false;
  }
  return fit;
}

/**
 * Why `plan --out FILE` may not write FILE, checked before anything is sent: the plan replaces
 * what is there, so naming an input (`plan orders.yaml --out orders.yaml`) would replace the
 * manifest with its plan, and naming a report would replace it or be replaced by it; a folder
 * there would refuse the plan once every input was planned. An input is recognised by its
 * device and inode, whatever path names it. Undefined when FILE is free.
 */
export function planOutProblem(out: string, files: readonly string[]): string | undefined {
  if (isReportName(out)) return "is named as one of htorder's reports; name the plan another way (plan.json)";
  if (identity(dirname(resolve(out)))?.isDirectory() !== true)
    return `is in a folder that does not exist (${printable(dirname(out))}); make it first`;
  const at = identity(out);
  if (at === undefined) return undefined;
  if (at.isDirectory()) return 'is a folder, which the plan cannot replace; name a file in it (plan.json)';
  const input = files.find((file) => {
    const st = identity(file);
    return st !== undefined && st.dev === at.dev && st.ino === at.ino;
  });
  return input === undefined
    ? undefined
    : `is the input ${printable(input)}: the plan would replace it; name the plan another way (plan.json)`;
}

/** A file's device and inode, or undefined when there is none to be had (missing, a file on the way): those are said where the file is used. */
function identity(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}
