#!/usr/bin/env bash
# parakeet.cpp (the ggml engine) for bench_e2e.py's pcpp-* engines, in .cache/pcpp/ (gitignored):
#   .cache/pcpp/venv/   the PyPI wheel parakeet-cpp-cuda (its libparakeet.so and ggml), numpy, cffi
#   .cache/pcpp/stub/   empty stand-ins for the CUDA libraries the wheel links against
#
#     bash bench/setup_parakeet_cpp.sh        # ~1 min; safe to rerun
#
# The wheel's libggml.so needs libggml-cuda.so, which needs libcudart, libcublas, libcuda and
# libnccl. The stubs define every symbol libggml-cuda.so imports from them (read with nm, so a
# new wheel needs no edits here), each failing with "no device"; ggml then reports no CUDA
# device and runs on its CPU backend. cudart and cublas symbols are versioned by the library
# name, so each stub gets a version node of that name.
set -euo pipefail
cd "$(dirname "$0")/.."
WHEEL_VERSION=${WHEEL_VERSION:-0.2.2}
DIR=.cache/pcpp
PYTHON=${PYTHON:-python3}

[ -x "$DIR/venv/bin/python" ] || "$PYTHON" -m venv "$DIR/venv"
"$DIR/venv/bin/pip" install -q "parakeet-cpp-cuda==$WHEEL_VERSION" numpy cffi
LIB=$(ls -d "$DIR"/venv/lib/python3*/site-packages/parakeet/lib)

mkdir -p "$DIR/stub"
nm -D --undefined-only "$LIB/libggml-cuda.so" | awk '{print $2}' | sed 's/@.*//' |
    grep -E '^(__cuda|cu|cublas|nccl)' | sort -u > "$DIR/stub/symbols.txt"
{
    echo 'static const char msg[] = "CUDA stubbed out (CPU-only run)";'
    echo 'static void* fatbin_handle[4];'
    while read -r s; do
        case "$s" in
            cudaGetErrorString|cublasGetStatusString|ncclGetErrorString)
                echo "const char* $s(int e) { (void)e; return msg; }" ;;
            cuGetErrorString)
                echo "int $s(int e, const char** p) { (void)e; if (p) *p = msg; return 0; }" ;;
            __cudaRegisterFatBinary)
                echo "void** $s(void* f) { (void)f; return fatbin_handle; }" ;;
            cudaGetDeviceCount)
                echo "int $s(int* n) { if (n) *n = 0; return 100; }" ;;  # cudaErrorNoDevice
            *)
                echo "long $s(void) { return 100; }" ;;  # an error code; nothing calls them
        esac
    done < "$DIR/stub/symbols.txt"
} > "$DIR/stub/cuda_stub.c"
for so in libcudart.so.12 libcublas.so.12 libcuda.so.1 libnccl.so.2; do
    printf '%s { global: *; };\n' "$so" > "$DIR/stub/$so.map"
    cc -shared -fPIC -O1 -w -o "$DIR/stub/$so" -Wl,-soname,"$so" \
        -Wl,--version-script,"$DIR/stub/$so.map" "$DIR/stub/cuda_stub.c"
done
LD_LIBRARY_PATH="$DIR/stub" "$DIR/venv/bin/python" -c \
    "import parakeet; print('parakeet.cpp wheel', '$WHEEL_VERSION', 'abi', parakeet.abi_version(), 'loads')"
