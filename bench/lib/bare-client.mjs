/**
 * The floor of `htorder run`: a bare client that sends only the same POST /Jobs calls — every
 * job's dry run (validateOnly: true), then every create — with bodies prebuilt, undici `request`
 * on one keep-alive Agent, CONCURRENCY calls at once, after one token request (another each time it nears its expiry). No manifest, no
 * lookups, no ledger, no reports. Timed from outside as a whole process, like `htorder run`.
 *
 * With BARE_INTENTS (a folder), it is the floor of any client that sends each order exactly
 * once: before each create it records the order's intent durably (a new file written, fsynced
 * and renamed into place) and after the answer appends the outcome to it, as htorder's ledger
 * does at the least, with none of its locks, checks, notes or reports. Written with plain
 * fs/promises, not htorder's storage code: the floor is another client, not a part of htorder.
 *
 * Usage: node bare-client.mjs BODIES.jsonl (one job's body a line); env BARE_BASE_URL, BARE_TOKEN_URL, BARE_CLIENT_ID,
 * BARE_CLIENT_SECRET, BARE_CONCURRENCY, BARE_INTENTS. Prints {"sent": …}; exits 1 if any call failed.
 */
import { createReadStream } from 'node:fs';
import { appendFile, mkdir, open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Agent, request } from 'undici';

const env = process.env;
const concurrency = Number(env.BARE_CONCURRENCY);
const dryRuns = [];
const creates = [];
for await (const line of createInterface({ input: createReadStream(process.argv[2]), crlfDelay: Infinity })) {
  if (line === '') continue;
  const c = JSON.parse(line);
  dryRuns.push(JSON.stringify({ ...c, validateOnly: true }));
  creates.push(JSON.stringify({ ...c, validateOnly: false }));
}
const dispatcher = new Agent({ keepAliveTimeout: 10_000, connections: Math.max(4, concurrency * 2) });

// A token lives expires_in seconds (600 in the sandbox); a run longer than that (100,000 jobs)
// needs a new one, as htorder's client gets one a little before the old one expires. One
// request at a time fetches it; callers in between wait for the same answer.
async function fetchToken() {
  const res = await request(env.BARE_TOKEN_URL, {
    dispatcher,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: env.BARE_CLIENT_ID,
      client_secret: env.BARE_CLIENT_SECRET,
    }).toString(),
  });
  const { access_token, expires_in } = await res.body.json();
  const lifetime = typeof expires_in === 'number' && expires_in > 0 ? expires_in : 600;
  return { headers: headersWith(access_token), refreshAt: Date.now() + lifetime * 900 };
}
const headersWith = (token) => ({
  accept: 'application/json',
  'content-type': 'application/json',
  authorization: `Bearer ${token}`,
  'x-application-name': 'API', // htorder's default (setting appName)
  'user-agent': 'htorder-bench',
});
let current = await fetchToken();
let fetching;
async function headers() {
  if (Date.now() < current.refreshAt) return current.headers;
  fetching ??= fetchToken().then((next) => {
    current = next;
    fetching = undefined;
  });
  await fetching;
  return current.headers;
}
const url = `${env.BARE_BASE_URL}/Jobs`;

const intents = env.BARE_INTENTS || undefined;
if (intents) await mkdir(intents, { recursive: true });

/** The order's intent, durable before its create is sent; its outcome appended after. */
async function recorded(n, send) {
  const path = join(intents, `${n}.json`);
  const tmp = `${path}.tmp`;
  const file = await open(tmp, 'wx');
  try {
    await file.writeFile(`${JSON.stringify({ n, state: 'intent', at: new Date().toISOString() })}\n`);
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(tmp, path);
  const answer = await send();
  await appendFile(path, `${JSON.stringify({ n, state: 'submitted', answer: answer.slice(0, 200) })}\n`);
}

let sent = 0;
let failed = 0;
async function sendAll(bodies, durable) {
  let next = 0;
  const send = async (body) => {
    const res = await request(url, { dispatcher, method: 'POST', headers: await headers(), body });
    const text = await res.body.text();
    sent++;
    if (res.statusCode >= 300 && failed++ === 0) console.error(`first failure: ${res.statusCode} ${text}`);
    return text;
  };
  const worker = async () => {
    while (next < bodies.length) {
      const n = next++;
      if (durable) await recorded(n, () => send(bodies[n]));
      else await send(bodies[n]);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}
// As htorder does: every dry run first, then the creates.
await sendAll(dryRuns, false);
await sendAll(creates, intents !== undefined);
await dispatcher.close();
console.log(JSON.stringify({ sent, failed }));
if (failed > 0) process.exitCode = 1;
