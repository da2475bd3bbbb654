#!/usr/bin/env bash
# Smoke test of the deployment, for real: build the server image and the proxy image with
# podman from a Debian base bootstrapped from this machine's apt sources (no registry needed),
# then run tests/e2e/test_container_image.py (the quickstart container: MCP and REST answers,
# healthcheck, uid, file modes, memories across restarts, SIGTERM) and
# tests/e2e/test_container_hosted.py (compose.hosted.yaml: nginx with basic auth and TLS,
# users kept apart, spoofed identity headers ignored, callers going around the proxy refused)
# and tests/e2e/test_container_encrypted.py (the key from a secret file: the store on the
# volume is no plain SQLite and holds nothing saved). The server image is built with the
# `encryption` extra for that (EXTRAS below); without a key it runs as the default image does.
#
#   deploy/smoke.sh            from the repository root, as root, in a venv with the `test`
#                              extra (pytest, httpx, pyyaml, podman-compose)
#
# Needs podman, mmdebstrap (first run only: the base is cached, see deploy/base-image.sh) and
# openssl. pip inside the build gets this machine's index and CA settings as build secrets
# (deploy/pip-build-secrets.py). Engine settings a machine needs (.ci/containers.conf on
# hosts like the CI's) come in through CONTAINERS_CONF. Leaves the images tagged
# tinysuite-context:latest and tinysuite-context-proxy:latest, as compose would.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
IMAGE=tinysuite-context:latest
PROXY_IMAGE=tinysuite-context-proxy:latest
EXTRAS=${EXTRAS:-server,telemetry,encryption}
WORK=$(mktemp -d /tmp/tinycontext-smoke.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

for tool in podman openssl podman-compose; do
  command -v "$tool" >/dev/null || { echo "smoke: $tool is not installed" >&2; exit 1; }
done
elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }
image_id() { podman image inspect --format '{{.Id}}' "$1" 2>/dev/null || true; }
# Builds run without podman's layer cache (--layers=false: no intermediate images pile up
# run after run), and the image a tag pointed at before is removed once it is replaced.
drop_replaced() {
  if [ -n "$2" ] && [ "$2" != "$(image_id "$1")" ]; then podman rmi "$2" >/dev/null 2>&1 || true; fi
}

began=$EPOCHREALTIME
echo "== base image"
BASE=$(deploy/base-image.sh | tail -n 1)
base_s=$(elapsed "$began")

echo "== building $IMAGE from $BASE"
step=$EPOCHREALTIME
previous=$(image_id "$IMAGE")
mapfile -t secrets < <("$PY" deploy/pip-build-secrets.py "$WORK/secrets")
# --format docker: podman drops HEALTHCHECK from images in its default (OCI) format.
podman build --layers=false --format docker -f deploy/Dockerfile --build-arg BASE_IMAGE="$BASE" \
  --build-arg EXTRAS="$EXTRAS" "${secrets[@]}" -t "$IMAGE" . > "$WORK/build.log" 2>&1 \
  || { tail -n 60 "$WORK/build.log" >&2; exit 1; }
drop_replaced "$IMAGE" "$previous"
build_s=$(elapsed "$step")
size_mb=$(podman image inspect --format '{{.Size}}' "$IMAGE" | awk '{ printf "%d", $1 / 1e6 }')

echo "== building $PROXY_IMAGE"
step=$EPOCHREALTIME
previous=$(image_id "$PROXY_IMAGE")
podman build --layers=false --format docker --build-arg BASE_IMAGE="$BASE" -t "$PROXY_IMAGE" \
  deploy/nginx/image > "$WORK/proxy.log" 2>&1 || { tail -n 60 "$WORK/proxy.log" >&2; exit 1; }
drop_replaced "$PROXY_IMAGE" "$previous"
proxy_s=$(elapsed "$step")

echo "== container tests"
step=$EPOCHREALTIME
TINYCONTEXT_IMAGE=$IMAGE TINYCONTEXT_PROXY_IMAGE=$PROXY_IMAGE \
TINYCONTEXT_SMOKE_REPORT="$WORK/report.json" \
  "$PY" -m pytest -q -p no:cacheprovider -rs tests/e2e/test_container_image.py \
  tests/e2e/test_container_hosted.py tests/e2e/test_container_encrypted.py
tests_s=$(elapsed "$step")

echo "== smoke summary"
echo "base image        ${base_s} s"
echo "server image      ${build_s} s to build, ${size_mb} MB (extras: $EXTRAS)"
echo "proxy image       ${proxy_s} s to build"
echo "container tests   ${tests_s} s"
"$PY" -c 'import json, sys
for k, v in json.load(open(sys.argv[1])).items():
    print(f"  {k:34} {v} s")' "$WORK/report.json"
echo "total             $(elapsed "$began") s"
