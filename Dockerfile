# parakeet-server in a container: build the wheel, then install it into a slim runtime.
#   docker build -t parakeet .
#   docker run --rm -p 8000:8000 -v /path/to/models:/models:ro parakeet
# docs/docker.md has the settings (environment variables) and how it is tested.
ARG BASE_IMAGE=debian:bookworm-slim

FROM ${BASE_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv g++ cmake ninja-build ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# scikit-build-core drives CMake; the wheel holds libparakeet with every x86 kernel level (or
# the ARM ones), chosen at run time on the machine the container runs on.
RUN python3 -m venv /opt/build \
 && /opt/build/bin/pip install --no-cache-dir --upgrade pip \
 && /opt/build/bin/pip wheel --no-cache-dir --no-deps -w /wheels .

FROM ${BASE_IMAGE} AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv libsndfile1 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --create-home --home-dir /home/parakeet parakeet
COPY --from=build /wheels /wheels
RUN python3 -m venv /opt/parakeet \
 && /opt/parakeet/bin/pip install --no-cache-dir --only-binary=:all: /wheels/parakeet-*.whl \
 && rm -rf /wheels
ENV PATH=/opt/parakeet/bin:$PATH \
    PARAKEET_CACHE=/home/parakeet/.cache/parakeet \
    PARAKEET_SERVER_MODEL=/models/model.gguf \
    PARAKEET_SERVER_HOST=0.0.0.0 \
    PARAKEET_SERVER_PORT=8000
USER parakeet
WORKDIR /home/parakeet
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["python3", "-c", "import os, urllib.request; urllib.request.urlopen(f\"http://127.0.0.1:{os.environ.get('PARAKEET_SERVER_PORT', '8000')}/health\", timeout=4)"]
# SIGTERM (docker stop) lets requests in flight finish for --shutdown-timeout seconds.
STOPSIGNAL SIGTERM
ENTRYPOINT ["parakeet-server"]
