#!/usr/bin/env bash
# The paths a script's --help names exist: build/X in the build tree (the quick start's build/),
# and tools/, tests/, scripts/, examples/, bench/ paths in the source tree. A help that names a
# program the build does not make sends the reader nowhere.
# Arguments: the source directory and the build directory.
set -euo pipefail
src="$1" build="$2"
status=0 checked=0
path_re='(^|[ (=`])(build|tools|tests|scripts|examples|bench)/[A-Za-z0-9_./-]*[A-Za-z0-9_]'
placeholder='<|/[A-Z_]+(\.|/|$)'  # bench/workloads/NAME.txt, build/<x>
for script in tools/netlab tools/strata-run bench/run bench/ucx/run bench/train bench/torch/run tools/plot; do
  help=$(cd "$src" && timeout 20 "./$script" --help 2>&1) ||
    { echo "FAIL: $script --help exited $?"; status=1; continue; }
  while read -r path; do
    [ -n "$path" ] || continue
    checked=$((checked + 1))
    case "$path" in
      build/*) where="$build/${path#build/}" ;;
      *) where="$src/$path" ;;
    esac
    [ -e "$where" ] || { echo "FAIL: $script --help names $path: no $where"; status=1; }
  done < <(grep -oE "$path_re" <<<"$help" | sed -E 's/^[ (=`]//' | grep -vE "$placeholder" |
    sort -u)
done
[ "$status" = 0 ] && echo "help texts: $checked paths, each exists"
exit $status
