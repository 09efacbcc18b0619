# Sourced by .ci/run (and usable by hand: `source tools/ccache_env.sh`): every CMake build,
# scikit-build-core's wheel builds included, compiles through ccache where the machine has it.
# CI builds the same sources several times (setup, tests, the wheels, the cross build), and a
# machine that keeps its cache between runs rebuilds almost nothing. Never required: without
# ccache this does nothing and every build compiles from scratch.
if command -v ccache >/dev/null 2>&1; then
  # CMake (3.17+) takes these as the launchers of a build folder it configures for the first time.
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  # Paths relative to the checkout, so another clone of the repository (CI's) finds the
  # objects too; build folders one level deep (build, build-asan, build-wheel-*) share them.
  export CCACHE_BASEDIR=$PWD
  # The sanitizer builds carry debug info: don't key their objects by the build folder.
  export CCACHE_NOHASHDIR=1
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-4G}
fi
