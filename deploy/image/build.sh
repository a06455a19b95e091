#!/usr/bin/env bash
# Build cronplane's container images with podman, from a Debian root file system this
# script makes with mmdebstrap (no base image is pulled from any registry).
#
#   deploy/image/build.sh                 # the cronplane image (localhost/cronplane)
#   deploy/image/build.sh postgres        # PostgreSQL from Debian's packages (Compose)
#   deploy/image/build.sh prometheus      # Prometheus from Debian's packages (Compose)
#   deploy/image/build.sh all
#
# Each image is tagged by a hash of what went into it (`localhost/cronplane:<hash>`, and
# `:latest`); a build whose tag exists already is skipped, so a second run costs seconds.
# The last line printed for each image is its full tag. The Debian root file system is
# kept as a tarball under $CRONPLANE_IMAGE_CACHE (default /var/tmp/cronplane-image),
# keyed by its package list, suite and mirror.
#
# Needs (as root): mmdebstrap, podman (apt-get install mmdebstrap podman buildah).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE=${CRONPLANE_IMAGE_CACHE:-/var/tmp/cronplane-image}
SUITE=${DEBIAN_SUITE:-bookworm}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
PYTHON=${PYTHON:-$( [ -x "$ROOT/.venv/bin/python" ] && echo "$ROOT/.venv/bin/python" || echo python3 )}
# The base: Debian's Python (3.11 in bookworm) and what a venv needs; no compiler.
BASE_PACKAGES=python3,python3-venv,ca-certificates,tini

log() { echo "build.sh: $*" >&2; }

hash_of() { sha256sum | cut -c1-16; }

base_image() {  # prints the base image's tag, building the root fs when not cached
  local key tag tarball
  key=$(printf '%s\n' "$SUITE" "$MIRROR" "$SECURITY" "$BASE_PACKAGES" "minbase" | hash_of)
  tag="localhost/cronplane-base:$key"
  if podman image exists "$tag"; then echo "$tag"; return; fi
  mkdir -p "$CACHE"
  tarball="$CACHE/base-$key.tar"
  if [ ! -s "$tarball" ]; then
    log "mmdebstrap $SUITE ($BASE_PACKAGES) -> $tarball"
    mmdebstrap --format=tar --variant=minbase --include="$BASE_PACKAGES" \
      --aptopt='APT::Install-Recommends "false"' \
      --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
      --dpkgopt='path-include=/usr/share/doc/*/copyright' \
      --dpkgopt='path-exclude=/usr/share/locale/*' \
      "$SUITE" "$tarball.part" \
      "deb $MIRROR $SUITE main" "deb $MIRROR $SUITE-updates main" \
      "deb $SECURITY $SUITE-security main" >&2
    mv "$tarball.part" "$tarball"
  fi
  log "podman import $tarball -> $tag"
  podman import --quiet "$tarball" "$tag" >/dev/null
  echo "$tag"
}

tree_hash() {  # a hash of the files an image is built from (tracked or not, never ignored)
  (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard -- "$@" \
    | sort -z | xargs -0 sha256sum 2>/dev/null) | hash_of
}

build_cronplane() {
  local base key tag context
  base=$(base_image)
  key=$( { echo "$base"; tree_hash src pyproject.toml README.md deploy/image; } | hash_of)
  tag="localhost/cronplane:$key"
  if podman image exists "$tag"; then
    log "$tag exists"
    podman tag "$tag" localhost/cronplane:latest
    echo "$tag"
    return
  fi
  context=$(mktemp -d)
  trap 'rm -rf "$context"' RETURN
  log "wheels: cronplane and its dependencies ($PYTHON -m pip wheel)"
  # Built here, installed there without an index: the build needs no network.
  "$PYTHON" -m pip wheel --quiet --wheel-dir "$context/wheels" "$ROOT" >&2
  cp "$HERE/Containerfile" "$context/"
  log "podman build -> $tag"
  podman build --quiet --format=docker --network=none --build-arg "BASE=$base" \
    --label "org.opencontainers.image.revision=$key" \
    -t "$tag" -t localhost/cronplane:latest -f "$context/Containerfile" "$context" >&2
  prune localhost/cronplane "$key"
  echo "$tag"
}

prune() {  # prune REPOSITORY KEY: older builds of it, and the build stages left behind
  local old
  for old in $(podman images --format '{{.Repository}}:{{.Tag}}' "$1" | grep -v -e ":$2\$" -e ':latest$'); do
    podman rmi --force "$old" >/dev/null 2>&1 || true
  done
  podman images --quiet --filter dangling=true --filter label=org.cronplane.stage=build \
    | xargs -r podman rmi --force >/dev/null 2>&1 || true
}

build_debian_service() {  # build_debian_service NAME: deploy/image/NAME.Containerfile
  local name=$1 base key tag
  base=$(base_image)
  key=$( { echo "$base"; tree_hash "deploy/image/$name.Containerfile"; } | hash_of)
  tag="localhost/cronplane-$name:$key"
  if podman image exists "$tag"; then
    log "$tag exists"
    podman tag "$tag" "localhost/cronplane-$name:latest"
    echo "$tag"
    return
  fi
  log "podman build -> $tag (apt-get inside: needs Debian's mirror)"
  # Host networking: apt reaches the mirror as this host does.
  podman build --quiet --format=docker --network=host --build-arg "BASE=$base" \
    --build-arg "MIRROR=$MIRROR" --build-arg "SECURITY=$SECURITY" --build-arg "SUITE=$SUITE" \
    -t "$tag" -t "localhost/cronplane-$name:latest" \
    -f "$HERE/$name.Containerfile" "$HERE" >&2
  prune "localhost/cronplane-$name" "$key"
  echo "$tag"
}

case "${1:-cronplane}" in
  cronplane) build_cronplane ;;
  base) base_image ;;
  postgres | prometheus) build_debian_service "$1" ;;
  all)
    build_cronplane
    build_debian_service postgres
    build_debian_service prometheus
    ;;
  *)
    echo "usage: $0 [cronplane|base|postgres|prometheus|all]" >&2
    exit 2
    ;;
esac
