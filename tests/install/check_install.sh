#!/usr/bin/env bash
# Installs the build into a temporary prefix, then configures, builds and runs a consumer that
# uses find_package(strata). Arguments: the build directory and the source directory.
set -euo pipefail
build="$1" src="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/include/strata/strata.h"
test -f "$work/prefix/include/strata/strata_mpi.h"
ls "$work"/prefix/lib*/libstrata.so* >/dev/null
cmake -S "$src/tests/install/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
LD_LIBRARY_PATH="$(dirname "$(ls "$work"/prefix/lib*/libstrata.so | head -1)")" "$work/consumer/consumer"
