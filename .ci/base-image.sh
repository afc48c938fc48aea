#!/usr/bin/env bash
# Makes sure the Dockerfile's base image is in podman's store: already there, pulled from its
# registry, or — where no container registry can be reached — made here from Debian packages
# (debootstrap) plus this machine's Node, under the name the Dockerfile asks for, shaped like the
# official image (Node and npm in /usr/local, a `node` user with uid 1000, CMD ["node"]).
# `--name` prints the name it makes sure of.
set -euo pipefail
cd "$(dirname "$0")/.."

base="$(awk 'toupper($1) == "FROM" { print $2; exit }' Dockerfile)"
case "$base" in
  */*/*) name="$base" ;;
  */*) name="docker.io/$base" ;;
  *) name="docker.io/library/$base" ;;
esac
# `.ci/base-image.sh --name`: only print the name.
if [ "${1:-}" = --name ]; then
  echo "$name"
  exit 0
fi

if podman image exists "$name"; then
  echo "base image $name: already in podman's store"
  exit 0
fi
if timeout 300 podman pull --quiet "$name" >/dev/null 2>&1; then
  echo "base image $name: pulled"
  exit 0
fi

echo "base image $name: cannot be pulled; making it from Debian packages and this machine's Node"
want="$(sed -n 's/^node:\([0-9][0-9]*\)-.*/\1/p' <<<"$base")"
have="$(node -p 'process.versions.node.split(".")[0]')"
if [ -n "$want" ] && [ "$want" != "$have" ]; then
  echo "the Dockerfile asks for Node $want but this machine has Node $have: refusing to stand one in for the other" >&2
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "making it needs root (debootstrap, chroot); run this as root once, or load the image (podman load)" >&2
  exit 1
fi
suite="$(sed -n 's/^node:[0-9][0-9]*-\([a-z]*\).*/\1/p' <<<"$base")"
if ! command -v debootstrap >/dev/null; then
  apt-get update && env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap
fi

root="$(mktemp -d)"
trap 'rm -rf "$root" "$root.tar"' EXIT
debootstrap --variant=minbase "${suite:-bookworm}" "$root" http://deb.debian.org/debian >"$root.log" 2>&1 \
  || { tail -n 30 "$root.log" >&2; rm -f "$root.log"; exit 1; }
rm -f "$root.log"
rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"*
cp "$(command -v node)" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/lib/node_modules"
cp -r "$(npm root -g)/npm" "$root/usr/local/lib/node_modules/"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
chroot "$root" sh -c 'groupadd -g 1000 node && useradd -u 1000 -g node -s /bin/sh -m node'
# The npm registry may be reached through a proxy whose CA only this machine's bundle holds.
mkdir -p "$root/etc/ssl/certs"
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
tar -C "$root" -cf "$root.tar" .
podman import --quiet --change 'CMD ["node"]' \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' "$root.tar" "$name" >/dev/null
echo "base image $name: made ($(podman image inspect --format '{{.Size}}' "$name") bytes)"
