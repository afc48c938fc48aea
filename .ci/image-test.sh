#!/usr/bin/env bash
# The Docker image, built and run (docs/watch.md "Docker"). CI only: `npm test` needs no container
# engine. Builds the repository's Dockerfile with podman, runs `htorder --version` and a preset
# check as the image's non-root user, then `watch --sandbox` on a mounted folder until a dropped
# file reaches done/ and /healthz answers, and runs the image's own HEALTHCHECK (podman's
# `healthcheck run`, and the same command against a closed port, which must fail); then the
# compose recipe (deploy/compose.yaml) for two nights (.ci/compose-nights.sh). Any failure
# prints the container's logs and exits 1; the test's containers and image are always removed.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
# A machine where podman cannot be installed or cannot run a container skips this test with a
# notice, and CI goes on (HTORDER_IMAGE_TEST=require makes that a failure). Past those checks,
# every failure is the image's.
skip() {
  if [ "${HTORDER_IMAGE_TEST:-}" = require ]; then
    echo "image test FAILED: $*" >&2
    exit 1
  fi
  echo "NOTICE: the image test is skipped: $*"
  exit 0
}
# podman and runc; catatonit, the init process of `--init` and of compose's `init: true`;
# podman-compose for the compose recipe (.ci/compose-nights.sh). Debian's packages, when missing.
missing=""
command -v podman >/dev/null || missing="$missing podman runc"
[ -x /usr/libexec/podman/catatonit ] || command -v catatonit >/dev/null || missing="$missing catatonit"
command -v podman-compose >/dev/null || missing="$missing podman-compose"
if [ -n "$missing" ]; then
  echo "installing Debian's$missing"
  # shellcheck disable=SC2086 # one word per package
  { $SUDO apt-get update && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $missing; } \
    || skip "$missing could not be installed here"
fi
# A machine without containers.conf gets the settings this kind of VM needs (it refuses some
# rlimits and runs hybrid cgroups); a configured one keeps its own.
if [ -z "${CONTAINERS_CONF:-}" ] && [ ! -e /etc/containers/containers.conf ]; then
  export CONTAINERS_CONF="$PWD/.ci/containers.conf"
fi

podman info >/dev/null 2>&1 || skip "podman does not work here: $(podman info 2>&1 | tail -n 1)"
.ci/base-image.sh || skip "no base image for the Dockerfile here (none can be pulled or made)"
base="$(.ci/base-image.sh --name)"
probe_err="$(podman run --rm --network none "$base" node --version 2>&1 >/dev/null)" \
  || skip "podman cannot run a container here: $(grep -v 'systemd connection' <<<"$probe_err" | tail -n 1)"

run_id="$$-$(date +%s)"
image="localhost/htorder:ci-$run_id"
name="htorder-ci-$run_id"
vol="$(mktemp -d)"
images_before="$(podman images --all --quiet --no-trunc)"
# Without systemd podman cannot arm the health check's timer and says so on every command; the
# test runs the check itself, so that one message is noise here.
podman_() { podman "$@" 2> >(grep -v 'unable to get systemd connection' >&2); }

cleanup() {
  podman_ rm --force --ignore "$name" >/dev/null || true
  podman_ rmi --force "$image" >/dev/null 2>&1 || true
  # The build's stage images (untagged): those that were not there before it.
  for id in $(podman images --all --quiet --no-trunc 2>/dev/null); do
    grep -qx "$id" <<<"$images_before" || podman_ rmi --force "$id" >/dev/null 2>&1 || true
  done
  if [ "$(id -u)" -eq 0 ]; then rm -rf "$vol"; else podman unshare rm -rf "$vol"; fi
}
trap cleanup EXIT

fail() {
  echo "image test FAILED: $*" >&2
  if podman container exists "$name" 2>/dev/null; then
    echo "--- container state and health:" >&2
    podman inspect --format '{{json .State}}' "$name" >&2 || true
    echo "--- container logs:" >&2
    podman logs "$name" >&2 || true
  fi
  echo "--- mounted folder:" >&2
  find "$vol" -printf '%M %u %s %p\n' >&2 || true
  for f in "$vol"/drop/failed/*.errors.txt; do [ -e "$f" ] && { echo "--- $f:" >&2; cat "$f" >&2; }; done
  exit 1
}


start=$SECONDS
podman_ build --network host --pull=never --format docker --tag "$image" . >"$vol/build.log" 2>&1 \
  || { cat "$vol/build.log" >&2; fail "podman build"; }
echo "image built in $((SECONDS - start)) s: $(podman image inspect --format '{{.Size}}' "$image") bytes"

# The image's configuration: its user, and the HEALTHCHECK kept (the OCI format would drop it).
user="$(podman image inspect --format '{{.Config.User}}' "$image")"
case "$user" in "" | root | 0 | root:* | 0:*) fail "the image runs as '${user:-root}'" ;; esac
health_json="$(podman image inspect --format '{{json .Config.Healthcheck.Test}}' "$image")"
# The check's argv from the image: ["CMD", argv...] (exec form) or ["CMD-SHELL", line].
mapfile -d '' health_cmd < <(node -e '
  const t = JSON.parse(process.argv[1] || "null");
  if (!Array.isArray(t) || t.length < 2) process.exit(1);
  const argv = t[0] === "CMD-SHELL" ? ["/bin/sh", "-c", t[1]] : t.slice(1);
  process.stdout.write(argv.map((a) => a + "\0").join(""));' "$health_json") \
  || fail "the image has no HEALTHCHECK command: $health_json"

# One-shot containers, with no network.
version="$(podman_ run --rm --network none "$image" --version)" || fail "htorder --version"
[ "$version" = "$(node -p 'require("./package.json").version')" ] || fail "--version printed '$version'"
uid="$(podman_ run --rm --network none --entrypoint id "$image" -u)"
[ "$uid" != 0 ] || fail "htorder runs as root in the image"
echo "htorder --version in the image: $version, as uid $uid ($user)"
podman_ run --rm --network none "$image" check --mapping shopify /app/samples/shopify/orders_export.csv >"$vol/check.log" 2>&1 \
  || { cat "$vol/check.log" >&2; fail "check --mapping shopify (the presets) in the image"; }

# A watcher on a mounted folder that the image's user owns, as docs/watch.md tells users to set up.
mkdir -p "$vol/data/drop"
own() { if [ "$(id -u)" -eq 0 ]; then chown -R "$uid:$uid" "$@"; else podman unshare chown -R "$uid:$uid" "$@"; fi; }
own "$vol/data"
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
port="$(free_port)"
closed="$(free_port)"
while [ "$closed" = "$port" ]; do closed="$(free_port)"; done
podman_ run --detach --name "$name" --init --network host -e HTORDER_HEALTH_PORT="$port" \
  -v "$vol/data:/data" "$image" watch --sandbox /data/drop >/dev/null || fail "podman run watch"

healthz() { node -e 'fetch(process.argv[1]).then(async (r) => { console.log(await r.text()); process.exit(r.ok ? 0 : 1) }, () => process.exit(1))' "http://127.0.0.1:$port/healthz"; }
running() { [ "$(podman inspect --format '{{.State.Running}}' "$name")" = true ]; }
deadline=$((SECONDS + 60))
until healthz >/dev/null; do
  running || fail "the watcher exited before /healthz answered"
  [ $SECONDS -lt $deadline ] || fail "/healthz did not answer within 60 s"
  sleep 0.5
done
watcher_uid="$(podman_ exec "$name" id -u)"
[ "$watcher_uid" != 0 ] || fail "the watcher runs as root"

sample=samples/reorder/asset-reorder.yaml
cp "$sample" "$vol/data/incoming.yaml"
own "$vol/data/incoming.yaml"
mv "$vol/data/incoming.yaml" "$vol/data/drop/$(basename "$sample")"
done_file="$vol/data/drop/done/$(basename "$sample")"
deadline=$((SECONDS + 120))
until [ -e "$done_file.result.json" ] && [ -e "$done_file" ]; do
  [ ! -e "$vol/data/drop/failed/$(basename "$sample")" ] || fail "the dropped file went to failed/"
  running || fail "the watcher exited before the dropped file reached done/"
  [ $SECONDS -lt $deadline ] || fail "the dropped file did not reach done/ within 120 s"
  sleep 0.5
done
node -e 'const r = require(process.argv[1]); if (r.summary.byStatus.submitted !== r.summary.jobs || r.summary.jobs < 1) process.exit(1)' \
  "$done_file.result.json" || fail "the report in done/ does not say every job was submitted"
body="$(healthz)" || fail "/healthz after the drop: $body"
node -e 'const b = JSON.parse(process.argv[1]); if (b.status !== "ok" || b.processed < 1) process.exit(1)' "$body" \
  || fail "/healthz after the drop: $body"
echo "watch --sandbox in the image: $(basename "$sample") reached done/ (submitted), /healthz: $body"

# The image's own HEALTHCHECK: podman runs it and records the result; the same command pointed at a
# port nobody serves must fail, or it would pass whatever the watcher does.
podman_ healthcheck run "$name" || fail "podman healthcheck run: unhealthy while /healthz answers"
status="$(podman inspect --format '{{.State.Health.Status}}' "$name")"
[ "$status" = healthy ] || fail "health status '$status' after a passing check"
if podman_ exec -e HTORDER_HEALTH_PORT="$closed" "$name" "${health_cmd[@]}"; then
  fail "the HEALTHCHECK command passes against a port nobody serves"
fi
echo "HEALTHCHECK: healthy; fails against a closed port"

podman_ stop --time 60 "$name" >/dev/null || fail "podman stop"
code="$(podman inspect --format '{{.State.ExitCode}}' "$name")"
[ "$code" = 0 ] || fail "the watcher exited $code on SIGTERM"

# The compose recipe of docs/deploy.md with this image: two nights against the sandbox inside it.
.ci/compose-nights.sh "$image"
echo "image test passed"
