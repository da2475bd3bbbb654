#!/usr/bin/env bash
# A Debian bookworm base image bootstrapped from this machine's apt sources, for machines
# where no image registry is reachable. It has what deploy/Dockerfile needs of
# python:3.x-slim (python3 with venv, `python`, CA certificates) and apt for
# deploy/nginx/Dockerfile; pass it to both as --build-arg BASE_IMAGE=<name>.
#
#   deploy/base-image.sh [IMAGE]        (default localhost/tinycontext-base:bookworm)
#
# Needs root, mmdebstrap and podman (or ENGINE=docker). The root file system tarball is kept
# in $TINYCONTEXT_BASE_CACHE (default ~/.cache/tinycontext-deploy) for 7 days, so later runs
# only import it (seconds instead of the ~2 minutes a bootstrap takes on 2 cores).
set -euo pipefail
IMAGE=${1:-localhost/tinycontext-base:bookworm}
ENGINE=${ENGINE:-podman}
CACHE=${TINYCONTEXT_BASE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tinycontext-deploy}
SOURCES=${APT_SOURCES:-/etc/apt/sources.list.d/debian.sources}
TARBALL=$CACHE/base-bookworm.tar
mkdir -p "$CACHE"

if [ ! -s "$TARBALL" ] || [ -n "$(find "$TARBALL" -mtime +7)" ]; then
  echo "== bootstrapping the base file system from $SOURCES" >&2
  # Left out like the slim images do: manuals, translations and docs (copyrights stay).
  # The host's resolv.conf and hostname, which mmdebstrap copies in, are removed: nothing of
  # this machine goes into the image (the engine provides both at run time).
  mmdebstrap --variant=minbase --include=python3,python3-venv,python-is-python3,ca-certificates \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-include=/usr/share/locale/locale.alias' \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --customize-hook='rm -f "$1/etc/resolv.conf" "$1/etc/hostname"' \
    --format=tar bookworm "$TARBALL.part" "$SOURCES"
  mv "$TARBALL.part" "$TARBALL"
  "$ENGINE" rmi -f "$IMAGE" >/dev/null 2>&1 || true
fi

if ! "$ENGINE" image inspect "$IMAGE" >/dev/null 2>&1; then
  echo "== importing it as $IMAGE" >&2
  "$ENGINE" import --change 'CMD ["/bin/bash"]' "$TARBALL" "$IMAGE" >/dev/null
fi
echo "$IMAGE"
