#!/bin/sh
# Installs the Debian packages ptxjit needs to build and test; does nothing when all are there.
set -e
need=""
# g++ and llvm-19-dev, libzstd-dev, zlib1g-dev for the LLVM backend's plugin; clang and
# libclang-rt-14-dev (libFuzzer) for `make fuzz`, valgrind for `make valgrind`; gcc brings the
# ASan, UBSan and TSan runtimes; nettle-dev for the remote cache tier and redis-server for
# its tests. The Python package (python/): the headers, venv, setuptools, wheel and pip that
# `pip install --no-build-isolation ./python` uses offline, and pytest.
for pkg in gcc g++ make pkg-config check libsubunit-dev libxxhash-dev \
           llvm-19-dev libzstd-dev zlib1g-dev clang libclang-rt-14-dev valgrind \
           redis-server nettle-dev \
           python3-dev python3-venv python3-setuptools python3-wheel python3-pip \
           python3-pytest; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need="$need $pkg"
done
if [ -n "$need" ]; then
    echo "installing:$need"
    if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
    $sudo apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null
fi
cuda=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$cuda/include/nvrtc.h" ]; then
    echo "error: no CUDA toolkit at $cuda (nvrtc.h missing)" >&2
    echo "fix: install the CUDA toolkit 12.0 or newer there, or set CUDA_HOME" >&2
    exit 1
fi
