# Cross build for 64-bit ARM Linux with Debian's cross toolchain (crossbuild-essential-arm64):
#   cmake -S . -B build-aarch64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
# The target's libraries and headers are those of /usr/aarch64-linux-gnu (the toolchain's
# sysroot); build tools still come from the host. Test programs run through qemu-user
# (Debian's qemu-user), which ctest uses as the emulator; QEMU_CPU picks the CPU model it
# emulates (tools/test_aarch64.sh).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(PARAKEET_AARCH64_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${PARAKEET_AARCH64_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${PARAKEET_AARCH64_TRIPLE}-g++)
set(PARAKEET_AARCH64_SYSROOT /usr/${PARAKEET_AARCH64_TRIPLE})

set(CMAKE_FIND_ROOT_PATH ${PARAKEET_AARCH64_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# -L: where qemu finds the target's dynamic loader and libc.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L ${PARAKEET_AARCH64_SYSROOT})
