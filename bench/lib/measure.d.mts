/** Types of measure.mjs for the benchmarks written in TypeScript (bench/*.bench.ts). */
export interface Measured {
  wallMs: number;
  code: number | null;
  stdout: string;
  stderr: string;
  maxRssBytes: number;
  userMs: number;
  systemMs: number;
  cpuMs: number;
  /** The measuring process's own CPU over the run (an in-process simulator's). */
  hostCpuMs: number;
}
export function measureProcess(
  args: string[],
  opts: { statsFile: string; env?: Record<string, string | undefined>; cwd: string; nodeArgs?: string[] },
): Promise<Measured>;
export function median(values: number[]): number;
export function spread(values: number[], fmt: (v: number) => string): string;
export function load(): string;
export const seconds: (ms: number) => string;
export const megabytes: (bytes: number) => string;
export const times: (r: number) => string;
export function option(name: string, envName: string, fallback: string | number | undefined): string | undefined;
export function flag(name: string): boolean;
export function endOfOptions(): void;
