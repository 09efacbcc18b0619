#!/usr/bin/env bash
# Builds the Dockerfile and checks the image as a user would run it: a fixture model mounted
# read-only at /models, settings from environment variables, the port published on 127.0.0.1.
# It checks that the server runs as a non-root user, answers /health, transcribes, enforces a
# limit given by a variable (an upload over PARAKEET_MAX_UPLOAD_MB gets 413), that the image's
# health check passes, and that `stop` (SIGTERM) ends it cleanly. It removes what it started.
#   bash tools/check_container.sh              # docker if its daemon answers, else podman
# ENGINE=podman|docker picks one; ENGINE_FLAGS adds global flags (podman in a VM without
# cgroup v2 controllers: ENGINE_FLAGS="--runtime runc --cgroup-manager=cgroupfs").
# BASE_IMAGE replaces debian:bookworm-slim (e.g. a local import where there is no registry);
# BUILD_CA=file.crt adds a CA bundle to it, for networks that intercept TLS to PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${ENGINE:-}" ]; then
  if docker info >/dev/null 2>&1; then ENGINE=docker; else ENGINE=podman; fi
fi
read -r -a flags <<<"${ENGINE_FLAGS:-}"
engine() { "$ENGINE" "${flags[@]}" "$@"; }
# Engines in containers without CAP_SYS_RESOURCE cannot raise limits: keep the current ones.
limits=(--ulimit "nofile=$(ulimit -n):$(ulimit -Hn)" --ulimit "nproc=4096:4096")
base=${BASE_IMAGE:-debian:bookworm-slim}
tag=parakeet-check:$$
port=${PORT:-18765}
work=$(mktemp -d)
container=""
cleanup() {
  [ -n "$container" ] && engine rm -f "$container" >/dev/null 2>&1 || true
  engine rmi -f "$tag" "$tag-base" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

if [ -n "${BUILD_CA:-}" ]; then
  cp "$BUILD_CA" "$work/build-ca.crt"
  # In the system bundle for pip, and where update-ca-certificates (run when the build stage
  # installs ca-certificates) finds it again when it rewrites that bundle.
  printf 'FROM %s\nCOPY build-ca.crt /etc/ssl/certs/ca-certificates.crt\nCOPY build-ca.crt /usr/local/share/ca-certificates/build-ca.crt\nENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt\n' \
    "$base" > "$work/Containerfile"
  engine build "${limits[@]}" -t "$tag-base" -f "$work/Containerfile" "$work" >/dev/null
  base=$tag-base
fi
# Podman writes OCI images unless told otherwise, and the OCI format has no HEALTHCHECK.
format=(); [ "$ENGINE" = podman ] && format=(--format docker)
start=$(date +%s)
engine build "${limits[@]}" "${format[@]}" --build-arg BASE_IMAGE="$base" -t "$tag" . > "$work/build.log" 2>&1 \
  || { tail -30 "$work/build.log"; exit 1; }
echo "image built in $(( $(date +%s) - start )) s: $(engine image inspect "$tag" --format '{{.Size}}') bytes"

mkdir "$work/models"
cp tests/data/nemo/hybrid_tdt_ctc/model.gguf "$work/models/model.gguf"
container=$(engine run -d "${limits[@]}" -p "127.0.0.1:$port:8000" -v "$work/models:/models:ro" \
  -e PARAKEET_SERVER_CONCURRENCY=2 -e PARAKEET_MAX_UPLOAD_MB=1 "$tag")

python3 - "$port" <<'PY'
import json, sys, time, urllib.request, urllib.error, uuid
base = f"http://127.0.0.1:{sys.argv[1]}"
deadline = time.monotonic() + 120  # a hang guard: loading the fixture model takes about a second
while True:
    try:
        urllib.request.urlopen(base + "/health", timeout=2)
        break
    except (urllib.error.URLError, ConnectionError):
        if time.monotonic() > deadline:
            sys.exit("the container did not answer /health")
        time.sleep(0.5)

def upload(data: bytes):
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n"
            f"Content-Type: audio/wav\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    request = urllib.request.Request(base + "/v1/audio/transcriptions", data=body,
                                     headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status, json.load(reply)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)

status, reply = upload(open("tests/data/audio/speech_16k.wav", "rb").read())
assert status == 200 and "text" in reply, (status, reply)
print(f"transcribed in the container: {reply['text'][:50]!r}")
# The server answers an oversized upload from its Content-Length, before the body is sent.
import http.client
connection = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=30)
connection.putrequest("POST", "/v1/audio/transcriptions")
connection.putheader("Content-Type", "multipart/form-data; boundary=x")
connection.putheader("Content-Length", str(2 * 1024 * 1024))
connection.endheaders()
status = connection.getresponse().status
assert status == 413, status
print("PARAKEET_MAX_UPLOAD_MB=1 from the environment: a 2 MiB upload got 413")
PY
uid=$(engine exec "$container" id -u)
[ "$uid" != 0 ] || { echo "the server runs as root" >&2; exit 1; }
echo "server runs as uid $uid"
if [ "$ENGINE" = podman ]; then
  engine healthcheck run "$container" || { echo "the image's health check failed" >&2; exit 1; }
else  # docker runs it on its own schedule: wait for its first verdict
  for _ in $(seq 90); do
    health=$(docker inspect -f '{{.State.Health.Status}}' "$container")
    [ "$health" != starting ] && break
    sleep 1
  done
  [ "$health" = healthy ] || { echo "the image's health check says $health" >&2; exit 1; }
fi
echo "the image's health check passes"
engine stop -t 40 "$container" >/dev/null
code=$(engine inspect "$container" --format '{{.State.ExitCode}}')
echo "stopped by SIGTERM, exit code $code"
echo "container check passed"
