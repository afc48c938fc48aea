#!/usr/bin/env bash
# The compose recipe of docs/deploy.md (deploy/compose.yaml with deploy/compose.sandbox.yaml),
# two nights, run by .ci/image-test.sh with the image it built: `.ci/compose-nights.sh IMAGE`.
# The watcher serves a drop folder and a config folder of the test's own (HTORDER_DROP_DIR,
# HTORDER_ETC_DIR: the config's maxJobCost 500), against the sandbox inside the container, whose
# clock `htorder sandbox clock` moves and the watcher follows.
#   Night 1, 02:00: the shop's export, the nightly reorder, a file over maxJobCost, a broken
#     file; the container killed (SIGKILL) while it works on them and brought back by the
#     recipe's restart policy. 03:00: the reorder sent again by mistake under a new number.
#   Morning: the held file approved inside the container (`compose exec … htorder approve`).
#   Night 2, 02:00: the export grown by one order, the reorder under tonight's number.
# Then, on the sandbox's admin API: every order exactly once, the re-send and the broken file
# never, the approved file sent; the re-send held as a suspected duplicate, tonight's reorder not.
set -euo pipefail
cd "$(dirname "$0")/.."
image="${1:?usage: .ci/compose-nights.sh IMAGE}"

project="htorder-nights-$$"
dir="$(mktemp -d)"
drop="$dir/drop"
mkdir -p "$drop" "$dir/etc"
printf 'maxJobCost: 500\n' >"$dir/etc/config.yaml"
own() { if [ "$(id -u)" -eq 0 ]; then chown -R 1000:1000 "$@"; else podman unshare chown -R 1000:1000 "$@"; fi; }
own "$dir/etc" "$drop"
# A run killed before its trap (a CI job stopped midway) leaves its container up, and its
# published port is a NAT rule on the host's loopback that takes that port's connections from
# whatever listens there later: remove the nights of runs started over two hours ago.
cutoff=$(($(date +%s) - 7200))
podman ps --all --filter label=io.podman.compose.project --format '{{.ID}} {{.Created.Unix}} {{index .Labels "io.podman.compose.project"}}' |
  while read -r id created stale; do
    case "$stale" in htorder-nights-*) ;; *) continue ;; esac
    [ "$created" -lt "$cutoff" ] || continue
    echo "compose nights: removing $stale, left by a run that did not end" >&2
    podman rm --force --volumes "$id" >/dev/null 2>&1 || true
    podman network rm --force "${stale}_default" >/dev/null 2>&1 || true
  done
# The health port published on the host's loopback: a free one below the ephemeral range, not the
# recipe's 9464. A published port is a NAT rule, not a socket: a port from the ephemeral range could
# be handed to any process's listen(0) meanwhile (a test's server), whose connections the rule
# would then send to this container.
port="$(node -e '
const net = require("net");
const low = Number(require("fs").readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").split(/\s+/)[0]) || 32768;
const pick = (left) => {
  const p = Math.max(1025, low - 10000) + Math.floor(Math.random() * Math.min(10000, low - 1025));
  const s = net.createServer().once("error", () => (left > 0 ? pick(left - 1) : process.exit(1)));
  s.listen(p, "127.0.0.1", () => { console.log(p); s.close(); });
};
pick(20);')"

compose() {
  HTORDER_IMAGE="$image" HTORDER_DROP_DIR="$drop" HTORDER_ETC_DIR="$dir/etc" \
    HTORDER_HEALTH_PUBLISH="$port" podman-compose --project-name "$project" -f deploy/compose.yaml \
    -f deploy/compose.sandbox.yaml "$@"
}
container() { podman ps --all --filter "label=io.podman.compose.project=$project" --format '{{.Names}}' | head -n 1; }
cleanup() {
  # The container with its anonymous volume (the image's VOLUME /data), then the project's
  # named volume and network.
  c="$(container)"
  [ -z "$c" ] || podman rm --force --volumes "$c" >/dev/null 2>&1 || true
  compose down --volumes >/dev/null 2>&1 || true
  podman network rm --force "${project}_default" >/dev/null 2>&1 || true
  if [ "$(id -u)" -eq 0 ]; then rm -rf "$dir"; else podman unshare rm -rf "$dir"; fi
}
trap cleanup EXIT
fail() {
  echo "compose nights FAILED: $*" >&2
  c="$(container)"
  if [ -n "$c" ]; then
    echo "--- container $c state:" >&2
    podman inspect --format '{{json .State}}' "$c" >&2 || true
    echo "--- its logs (last 60 lines):" >&2
    podman logs "$c" 2>&1 | tail -n 60 >&2 || true
  fi
  # podman-compose exits 0 when its `podman run` fails: what it said.
  [ ! -s "$dir/up.log" ] || { echo "--- podman-compose up (last 20 lines):" >&2; tail -n 20 "$dir/up.log" >&2; }
  echo "--- the drop folder:" >&2
  find "$drop" -printf '%M %u %s %p\n' >&2 || true
  exit 1
}

# htorder inside the running container, with its config and state (its environment).
hx() { podman exec "$(container)" htorder "$@"; }
waitfor() { # waitfor WHAT SECONDS TEST...
  local what="$1" deadline=$((SECONDS + $2))
  shift 2
  until "$@"; do
    [ $SECONDS -lt $deadline ] || fail "$what: not within the time allowed"
    sleep 0.5
  done
}
# A file arrives as a writer that can should deliver one: written, then its `.done` marker.
deliver() { # deliver NAME < content
  cat >"$dir/incoming"
  own "$dir/incoming"
  mv "$dir/incoming" "$drop/$1"
  # The marker owned before it appears: a watcher may take the file and the marker at once.
  : >"$dir/marker"
  own "$dir/marker"
  mv "$dir/marker" "$drop/$1.done"
}
template() { # template ORDER STREET QUANTITY: one default-template order
  printf 'orderNumber,deliveryMethod,contactName,streetAddress,city,state,postalCode,country,itemType,code,quantity\n'
  printf '%s,UPS Ground,Dana Shop,%s,Boston,MA,02134,US,Asset,A10001,%s\n' "$1" "$2" "$3"
}
quiet_top() { [ -z "$(find "$drop" -maxdepth 1 -type f ! -name '.*' -print -quit)" ] && [ -z "$(find "$drop/processing" -maxdepth 1 -type f ! -name '.*' -print -quit 2>/dev/null)" ]; }
reports_in() { find "$drop/$1" -maxdepth 1 -name '*.result.json' 2>/dev/null | wc -l; }

compose up --detach --no-build >"$dir/up.log" 2>&1 || { cat "$dir/up.log" >&2; fail "podman-compose up"; }
waitfor "the watcher is watching" 120 sh -c "podman logs '$(container)' 2>&1 | grep -q 'watching for manifests'"
echo "compose nights: $(container) is watching (deploy/compose.yaml + compose.sandbox.yaml, image $image)"

# --- Night 1, 02:00 ------------------------------------------------------------------------------
deliver orders_export.csv <samples/shopify/orders_export.csv
template RO-0001 '12 Elm St' 50 | deliver reorder.csv
template BIG-0001 '400 Pine St' 300 | deliver big-1.csv
template BR-0001 '5 Oak Ave' twelve | deliver broken-1.csv
waitfor "the watcher claims a file" 60 sh -c "podman logs '$(container)' 2>&1 | grep -q 'claimed input'"
# A crash: the watcher process (the child of the container's init) killed with SIGKILL. The
# recipe's restart policy (unless-stopped) starts the container again, and the new process resumes
# what the killed one had claimed. (`podman kill` would count as a stop, which that policy respects.)
c="$(container)"
init="$(podman inspect --format '{{.State.Pid}}' "$c")"
for pid in $(cat "/proc/$init/task/$init/children"); do kill -KILL "$pid"; done
waitfor "the killed watcher is started again by its restart policy" 120 sh -c \
  "[ \"\$(podman inspect --format '{{.RestartCount}} {{.State.Running}}' '$c')\" = '1 true' ]"
waitfor "night 1's files are done with" 180 sh -c \
  "[ -e '$drop/done/orders_export.csv.result.json' ] && [ -e '$drop/done/reorder.csv.result.json' ] && [ -e '$drop/held/big-1.csv' ] && [ -e '$drop/failed/broken-1.csv' ]"
echo "night 1: killed -9 mid-night and restarted by the recipe; the export and the reorder in done/, big-1.csv held, broken-1.csv failed"

# --- 03:00: the reorder again, by mistake ----------------------------------------------------------
hx sandbox clock +1h >/dev/null || fail "htorder sandbox clock +1h"
template RS-0001 '12 Elm St' 50 | deliver resend-1.csv
waitfor "the re-send is held" 120 test -e "$drop/held/resend-1.csv.result.json"

# --- The morning: the held file approved where the watcher is -----------------------------------
hx sandbox clock +6h >/dev/null || fail "htorder sandbox clock +6h"
compose exec watch htorder approve --sandbox /data/drop/held/big-1.csv >"$dir/approve.log" 2>&1 \
  || { cat "$dir/approve.log" >&2; fail "htorder approve inside the container"; }
waitfor "the approved file is taken back and sent" 120 test -e "$drop/done/big-1.csv.result.json"

# --- Night 2, 02:00: the export grown by one order; tonight's reorder -----------------------------
hx sandbox clock +17h >/dev/null || fail "htorder sandbox clock +17h"
{
  cat samples/shopify/orders_export.csv
  grep '^#1042,' samples/shopify/orders_export.csv | sed 's/^#1042,/#1045,/; s/200 Congress Ave/300 Lamar Blvd/g'
} | deliver orders_export.csv
template RO-0002 '12 Elm St' 50 | deliver reorder.csv
waitfor "night 2's files are done with" 180 sh -c "[ \$(find '$drop/done' -maxdepth 1 -name '*.result.json' | wc -l) -ge 5 ]"
waitfor "nothing left to take" 60 quiet_top

# --- What must hold ------------------------------------------------------------------------------
hx api GET /_sandbox/jobs --sandbox >"$dir/jobs.json" || fail "htorder api GET /_sandbox/jobs --sandbox"
node - "$dir/jobs.json" "$drop" <<'JS' || fail "the orders on the sandbox, or the reports, are not what two nights should leave"
const fs = require('node:fs');
const path = require('node:path');
const [jobsFile, drop] = process.argv.slice(2);
const jobs = JSON.parse(fs.readFileSync(jobsFile, 'utf8')).filter((j) => !String(j.orderNumber).startsWith('HIST-'));
const count = new Map();
for (const j of jobs) count.set(j.orderNumber, (count.get(j.orderNumber) ?? 0) + 1);
const expected = ['#1041', '#1042', '#1044', '#1045', 'RO-0001', 'RO-0002', 'BIG-0001'];
const problems = [];
for (const [o, n] of count) if (n > 1) problems.push(`${o} created ${n} times`);
for (const o of expected) if (!count.has(o)) problems.push(`${o} lost (never created)`);
for (const o of count.keys()) if (!expected.includes(o)) problems.push(`${o} created but never meant to be`);
const report = (f) => JSON.parse(fs.readFileSync(path.join(drop, f), 'utf8'));
const resend = report('held/resend-1.csv.result.json').jobs[0];
if (resend.status !== 'awaiting-approval' || !resend.errors.some((e) => e.code === 'approval.duplicate'))
  problems.push(`the re-send is ${resend.status}, not held as a suspected duplicate`);
const all = [];
for (const sub of ['done', 'failed', 'held'])
  for (const f of fs.readdirSync(path.join(drop, sub))) all.push(`${sub}/${f}`);
const reportOfReport = all.filter((f) => /\.(result\.(json|csv)|errors\.txt|tracking\.csv)\.(result\.(json|csv)|errors\.txt)$/.test(f));
if (reportOfReport.length) problems.push(`reports read as inputs: ${reportOfReport.join(', ')}`);
const held = fs.readdirSync(path.join(drop, 'held')).filter((f) => !/\.(result\.(json|csv)|errors\.txt)$/.test(f) && !f.startsWith('.'));
if (held.join() !== 'resend-1.csv') problems.push(`held/ holds ${held.join(', ') || 'nothing'}, not only the re-send`);
if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(`compose nights: ${jobs.length} orders, each once (${[...count.keys()].join(' ')}); the re-send held, the broken file failed, big-1.csv approved and sent, RO-0002 not held`);
JS

compose stop >/dev/null 2>&1 || fail "podman-compose stop"
code="$(podman inspect --format '{{.State.ExitCode}}' "$(container)")"
[ "$code" = 0 ] || fail "the watcher exited $code when the recipe stopped it"
echo "compose nights passed"
