import { readFileSync } from 'node:fs';
import { processIo, type CommandIo } from '../command-io.js';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { HttpMethod } from '../../api/transport.js';
import { addConfigOptions, configFlagsFrom } from '../../core/config/config-flags.js';
import type { ConfigFlags } from '../../core/config/resolve-config.js';
import { ExitCode, UsageError } from '../../core/errors.js';
import { addSandboxOptions, examples, sandboxOptionsFrom, type SandboxOptions } from '../help.js';
import { printable } from '../../core/printable.js';

export interface ApiCommandInput extends Partial<SandboxOptions> {
  method: string;
  path: string;
  data?: string;
  flags: ConfigFlags;
}

const METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'];

/** `htorder api METHOD PATH [--data JSON]`: one authenticated call, for debugging. */
export function register(program: Command): void {
  const cmd = program
    .command('api')
    .description('one authenticated API call; the response JSON goes to stdout, problem details to stderr')
    .argument('<method>', 'GET, POST, PATCH, PUT or DELETE')
    .argument('<path>', 'path relative to the API base URL, with an optional query: /Jobs/active?pageSize=5')
    .option('--data <json>', 'request body as JSON text, or @FILE to read it from a file')
    .addHelpText(
      'after',
      examples([
        ['htorder api GET /account --sandbox', 'who am I, against the built-in simulator'],
        ["htorder api GET '/Jobs/active?pageSize=5&includeClosedJobs=true'", 'with HTORDER_* configured'],
        [`htorder api PATCH /Jobs/700001 --data '{"description":"Spring kit v2"}'`, 'change a job (never retried)'],
        ['htorder api POST /Jobs --data @job.json', 'creates a job! (never retried)'],
      ]),
    );
  addSandboxOptions(cmd, 'call it', 'sandbox demo account to call as');
  addConfigOptions(cmd);
  cmd.action(async (method: string, path: string, opts: Record<string, unknown>) => {
    process.exitCode = await runApiCommand(
      {
        method,
        path,
        data: opts.data as string | undefined,
        ...sandboxOptionsFrom(opts),
        flags: configFlagsFrom(opts),
      },
      processIo(),
    );
  });
}

/**
 * Runs the command and returns its exit code: 0 on 2xx, 1 on a 4xx/5xx answer, 3 when the
 * API could not be reached or refused the credentials. Usage and configuration mistakes
 * throw UsageError (exit 2 at the CLI edge).
 */
export async function runApiCommand(input: ApiCommandInput, io: CommandIo): Promise<number> {
  const method = input.method.toUpperCase() as HttpMethod;
  if (!METHODS.includes(method)) throw new UsageError(`unknown method "${input.method}" (use ${METHODS.join(', ')})`);
  const { path, query } = splitPath(input.path);
  const body = input.data === undefined ? undefined : parseData(input.data, io.cwd);
  if (body !== undefined && method === 'GET') throw new UsageError('--data cannot be sent with GET');
  // Loaded here, not at the top: the client (undici) is too heavy for `htorder --help`.
  const [{ openApiSession }, { ApiError }, { scrubSecretsDeep }] = await Promise.all([
    import('../../app/api-session.js'),
    import('../../api/errors.js'),
    import('../../core/log/redact.js'),
  ]);
  const session = await openApiSession({
    sandbox: input.sandbox,
    account: input.account,
    sandboxReset: input.sandboxReset,
    flags: input.flags,
    env: io.env,
    cwd: io.cwd,
    stderr: io.stderr,
  });
  const { client } = session;
  try {
    // The in-process sandbox's test controls (docs/sandbox.md#test-controls-unauthenticated-under-url_sandbox):
    // on its server, not under the API's base path, and on the state every --sandbox process shares.
    if (input.sandbox && path.startsWith('/_sandbox/'))
      return await sandboxControl(session.config.baseUrl, input.path, method, body, io);
    const res = await client.send({ method, path, query, body });
    if (res.body !== null) {
      // Secret-named keys (access_token, client_secret …) and the live token and secret are
      // scrubbed even here; a text body is shown with its control characters escaped.
      const shown = scrubSecretsDeep(res.body);
      io.stdout.write(typeof shown === 'string' ? `${printable(shown)}\n` : `${JSON.stringify(shown, null, 2)}\n`);
    }
    return ExitCode.Ok;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    if (err.kind === 'http') {
      io.stderr.write(`${JSON.stringify(err.toProblem(), null, 2)}\n`);
      return ExitCode.Invalid;
    }
    io.stderr.write(`htorder api: ${printable(err.message)}\n`);
    return ExitCode.Unavailable;
  } finally {
    await session.close();
  }
}

/** One call of the sandbox's test controls, as `api` shows an answer: the JSON on stdout, a refusal on stderr (exit 1). */
async function sandboxControl(
  baseUrl: string,
  raw: string,
  method: HttpMethod,
  body: unknown,
  io: CommandIo,
): Promise<number> {
  const res = await fetch(new URL(raw, new URL(baseUrl).origin), {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  (res.ok ? io.stdout : io.stderr).write(`${printable(text)}\n`);
  return res.ok ? ExitCode.Ok : ExitCode.Invalid;
}

/** `/Jobs/active?pageSize=5` → path `/Jobs/active` + query. Spaces and quotes in the path get percent-encoded. */
export function splitPath(raw: string): { path: string; query: Record<string, string> } {
  if (!raw.startsWith('/'))
    throw new UsageError(`PATH must start with "/" (relative to the API base URL), got "${raw}"`);
  const url = new URL(raw, 'http://placeholder.invalid');
  return { path: url.pathname, query: Object.fromEntries(url.searchParams) };
}

function parseData(data: string, cwd: string): unknown {
  let text = data;
  if (data.startsWith('@')) {
    const file = data.slice(1);
    try {
      text = readFileSync(resolve(cwd, file), 'utf8');
    } catch (err) {
      throw new UsageError(`--data ${data}: cannot read the file (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--data is not valid JSON: ${(err as Error).message}`);
  }
}
