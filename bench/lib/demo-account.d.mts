/** Types of demo-account.mjs for the benchmarks written in TypeScript (bench/*.bench.ts). */
import type { Sandbox } from '../../src/sandbox/index.js';
export function orderableAssets(sandbox: Sandbox, n: number): Promise<string[]>;
export { sandboxEnv } from '../../src/core/config/sandbox-config.js';
