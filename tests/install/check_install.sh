#!/usr/bin/env bash
# Installs the build into a temporary prefix, then checks it as a user elsewhere would meet it:
# a consumer that uses find_package(strata) configures, builds and runs; a C program built with
# cc and pkg-config (strata.pc, the prefix's and the build tree's) runs; no installed ELF file
# has a RUNPATH into the build; libstrata.so needs no NCCL; every installed program answers
# --help and the demo runs under mpiexec, all without LD_LIBRARY_PATH.
# Arguments: the build directory and the source directory.
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

# Without CMake: strata.pc for pkg-config, installed under <libdir>/pkgconfig and in the build
# tree's pkgconfig/. A C program built with the README's one line against each runs on 2 ranks,
# from outside the build and without LD_LIBRARY_PATH (the rpath comes from the .pc's libdir).
command -v pkg-config >/dev/null ||
  { echo "FAIL: no pkg-config (scripts/install-deps.sh installs it)"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
pc_installed=$(dirname "$(ls "$work"/prefix/lib*/pkgconfig/strata.pc | head -1)")
for pc_path in "$pc_installed" "$build/pkgconfig"; do
  (
    cd "$work"
    export PKG_CONFIG_PATH="$pc_path"
    pkg-config --exists strata || { echo "FAIL: pkg-config finds no strata in $pc_path"; exit 1; }
    [ "$(pkg-config --modversion strata)" = "$(sed -n 's/^project(strata VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")" ] ||
      { echo "FAIL: $pc_path/strata.pc has version $(pkg-config --modversion strata)"; exit 1; }
    libdir=$(pkg-config --variable=libdir strata)
    [ -e "$libdir/libstrata.so" ] || { echo "FAIL: $pc_path/strata.pc: no libstrata.so in $libdir"; exit 1; }
    # shellcheck disable=SC2046  # the flags are meant to split, as in the README
    cc "$src/tests/install/pkgconfig_app.c" -o pkgconfig_app $(pkg-config --cflags --libs strata) \
      -Wl,-rpath,"$libdir" || { echo "FAIL: cc with $pc_path/strata.pc"; exit 1; }
    out=$(env -u LD_LIBRARY_PATH timeout 120 "${MPIEXEC:-mpiexec}" --oversubscribe -n 2 ./pkgconfig_app 2>&1) ||
      { echo "FAIL: the program built with $pc_path/strata.pc exited $?:"; echo "$out"; exit 1; }
    grep -q "pkg-config app: 2 ranks, PASSED" <<<"$out" || { echo "FAIL: $out"; exit 1; }
    echo "pkg-config ($pc_path): built and ran: $out"
  )
done

# No installed ELF file may point into the build or source tree (an RPATH/RUNPATH left from the
# build would hide a broken install here and break it elsewhere), and libstrata.so must not
# need NCCL: it loads NCCL at run time (src/fabrics/nccl/nccl_lib.h), so host-only users need none.
elves=0
while IFS= read -r -d '' f; do
  head -c 4 "$f" | grep -q $'^\x7fELF' || continue
  elves=$((elves + 1))
  paths=$(readelf -d "$f" | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]/\2/p')
  for root in "$build" "$src"; do
    real=$(cd "$root" && pwd -P)
    case ":$paths:" in
      *"$root"* | *"$real"*) echo "FAIL: $f has RPATH/RUNPATH '$paths' into $root"; exit 1 ;;
    esac
  done
done < <(find "$work/prefix" -type f -print0)
[ "$elves" -gt 0 ] || { echo "FAIL: no ELF files installed"; exit 1; }
lib=$(ls "$work"/prefix/lib*/libstrata.so | head -1)
if readelf -d "$lib" | grep NEEDED | grep -q libnccl; then
  echo "FAIL: $lib needs libnccl: $(readelf -d "$lib" | grep NEEDED | tr -s ' ')"
  exit 1
fi
echo "installed ELF files: $elves, none with a RUNPATH into the build; libstrata.so needs no NCCL"

# Every installed program runs from the prefix alone (RUNPATH $ORIGIN/../lib, no
# LD_LIBRARY_PATH): --help exits 0 and prints something. Run from outside the build.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader
programs=0
for prog in "$work"/prefix/bin/*; do
  [ -x "$prog" ] || continue
  help=$(cd "$work" && env -u LD_LIBRARY_PATH "$prog" --help 2>&1) ||
    { echo "FAIL: $prog --help exited $?:"; echo "$help"; exit 1; }
  [ -n "$help" ] || { echo "FAIL: $prog --help printed nothing"; exit 1; }
  programs=$((programs + 1))
done
if [ -d "$build/tools" ]; then
  [ "$programs" -ge 7 ] || { echo "FAIL: only $programs installed programs answered --help"; exit 1; }
fi
echo "installed programs: $programs answer --help from the prefix"

# The quick-start demo under mpiexec, from the prefix alone.
demo="$work/prefix/bin/strata-allreduce-demo"
if [ -f "$build/examples/strata-allreduce-demo" ] || [ -x "$demo" ]; then
  out=$(cd "$work" && env -u LD_LIBRARY_PATH -u STRATA_TOPO_FILE -u STRATA_PLAN_FILE \
    -u STRATA_HOSTNAME timeout 120 "${MPIEXEC:-mpiexec}" --oversubscribe -n 2 "$demo" 1000 2>&1) ||
    { echo "FAIL: the installed demo exited $?:"; echo "$out"; exit 1; }
  echo "$out"
  grep -q "strata allreduce demo: 2 ranks, 1000 float32 elements" <<<"$out"
  grep -q "check: PASSED (0 wrong elements)" <<<"$out"
fi

# The torch backend, when the build has it: importable from the prefix with PYTHONPATH alone
# (its extension finds libstrata.so by its RUNPATH), and working under mpiexec.
pkg="$work/prefix/lib/python3/dist-packages"
if [ -d "$build/python/strata_torch" ]; then
  test -f "$pkg/strata_torch/__init__.py"
  test -f "$pkg/strata_torch/hooks.py"
  ls "$pkg"/strata_torch/_C*.so >/dev/null
  out=$(cd "$work" && env -u LD_LIBRARY_PATH PYTHONPATH="$pkg" mpiexec --oversubscribe -n 2 \
    /usr/bin/python3 -c '
import strata_torch, torch, torch.distributed as dist
strata_torch.init()
t = torch.full((5,), float(dist.get_rank() + 1))
dist.all_reduce(t)
assert strata_torch._C.__file__.startswith("'"$pkg"'"), strata_torch._C.__file__
print("installed strata_torch: allreduce", t.tolist())')
  echo "$out"
  grep -q "allreduce \[3.0, 3.0, 3.0, 3.0, 3.0\]" <<<"$out"
fi

# strata's NCCL drop-in, when the build has the GPU parts: installed beside libstrata.so, with
# NCCL's soname, exporting NCCL's API, and loadable from the prefix alone (RUNPATH $ORIGIN).
if [ -f "$build/nccl_dropin/libstrata_nccl.so" ]; then
  dropin=$(ls "$work"/prefix/lib*/libstrata_nccl.so)
  readelf -d "$dropin" | grep -q "SONAME.*\[libnccl.so.2\]"
  nm -D --defined-only "$dropin" | grep -qw ncclAllReduce
  env -u LD_LIBRARY_PATH /usr/bin/python3 -c "import ctypes; ctypes.CDLL('$dropin').ncclGetVersion" \
    || { echo "FAIL: the installed drop-in does not load from the prefix"; exit 1; }
  echo "installed libstrata_nccl.so: soname libnccl.so.2, loads from the prefix"
  # libnccl.so.2 beside it links to it, so LD_LIBRARY_PATH=<prefix>/lib serves a program built
  # against NCCL (docs/nccl-dropin.md), while the drop-in itself still reaches the real NCCL.
  libdir=$(dirname "$dropin")
  [ "$(readlink "$libdir/libnccl.so.2")" = libstrata_nccl.so ] ||
    { echo "FAIL: $libdir/libnccl.so.2 is not a link to libstrata_nccl.so"; ls -l "$libdir"; exit 1; }
  env -u LD_PRELOAD LD_LIBRARY_PATH="$libdir" /usr/bin/python3 -c \
    "import ctypes; ctypes.CDLL('libnccl.so.2').strataNcclDropIn" ||
    { echo "FAIL: LD_LIBRARY_PATH=$libdir does not load the drop-in as libnccl.so.2"; exit 1; }
  program="$build/tests/nccl_dropin/strata_nccl_program"
  if [ -x "$program" ]; then
    run_program() {
      (cd "$work" && env -u LD_PRELOAD -u STRATA_NCCL_REAL_LIB LD_LIBRARY_PATH="$libdir" "$@" \
        timeout 120 "${MPIEXEC:-mpiexec}" --oversubscribe -n 2 "$program" 2>&1)
    }
    out=$(run_program NCCL_DEBUG=INFO) ||
      { echo "FAIL: $program under LD_LIBRARY_PATH=$libdir exited $?:"; echo "$out"; exit 1; }
    grep -q "NCCL INFO strata .* serves NCCL's API" <<<"$out" ||
      { echo "FAIL: LD_LIBRARY_PATH=$libdir did not give the program strata:"; echo "$out"; exit 1; }
    # Every collective forwarded: the real NCCL answers (without a GPU it fails as NCCL does),
    # never the drop-in calling itself.
    out=$(run_program STRATA_NCCL_FALLBACK=all) || true
    if ! grep -qE "the real NCCL's [A-Za-z]+ failed|nccl_program: [0-9]+ passed, 0 failed" <<<"$out" ||
       grep -q "strata's drop-in, not NCCL" <<<"$out"; then
      echo "FAIL: drop-in as libnccl.so.2: STRATA_NCCL_FALLBACK=all did not reach the real NCCL:"
      echo "$out"
      exit 1
    fi
    echo "installed libnccl.so.2 -> libstrata_nccl.so: a program built against NCCL gets strata"\
      "under LD_LIBRARY_PATH=<prefix>/lib, and the drop-in still reaches the real NCCL"
  fi
fi
