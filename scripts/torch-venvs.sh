#!/usr/bin/env bash
# Makes (or refreshes) the virtual environments with pip's PyTorch 2 that CI runs the torch
# backend against, beside Debian's PyTorch 1.13 (docs/testing.md "PyTorch 2"). Part of the
# install step; nothing else in the build needs them.
#
#   bash scripts/torch-venvs.sh [--print] [VERSION...]
#
# VERSION: a torch release pip serves (2.11.0), or "newest" (the newest release pip serves
# now, looked up on every run). Default: 2.11.0 (the GPU machines' PyTorch) and newest.
# Each environment is ${STRATA_CACHE:-~/.cache/strata}/torch/<release>, made with Debian's
# /usr/bin/python3 (python3-venv), and kept between runs: an environment that already has the
# release is left as it is, so only the first run downloads (pip's torch for x86-64 is a CUDA
# build: about 5 GB installed with its nvidia-* wheels, the real libnccl.so.2 among them; it
# runs CPU tensors without a GPU). For "newest", a release newer than the cached one makes a new
# environment, and the environment of the older newest release is removed.
# --print prints "<release> <environment>" per line, one for each VERSION, and changes nothing
# but the lookup of "newest". Exit status: 0 when every environment imports its torch.
set -euo pipefail
cache="${STRATA_CACHE:-$HOME/.cache/strata}/torch"
py=/usr/bin/python3
# What every environment holds beside torch: numpy (PyTorch warns without it, and its test
# suite imports it), expecttest and hypothesis (torch.testing._internal imports them),
# scikit-build-core (the build backend of pyproject.toml: `pip install --no-build-isolation .`),
# scikit-learn (examples/torch/ddp_data.py's digits, the torch-<release>.example.* entries).
EXTRAS=(numpy expecttest hypothesis "scikit-build-core>=0.10" scikit-learn)
EXTRAS_IMPORT="import numpy, expecttest, hypothesis, scikit_build_core, sklearn"

print=0 versions=()
for arg in "$@"; do
  case "$arg" in
    --print) print=1 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    -*) echo "torch-venvs.sh: unknown option $arg (see --help)" >&2; exit 2 ;;
    *) versions+=("$arg") ;;
  esac
done
((${#versions[@]})) || versions=(2.11.0 newest)

die() { echo "torch-venvs.sh: $*" >&2; exit 1; }
[ -x "$py" ] || die "$py is missing (Debian's python3; scripts/install-deps.sh installs it)"
"$py" -c "import venv, ensurepip" 2>/dev/null ||
  die "python3-venv is missing (scripts/install-deps.sh installs it)"

# The newest torch release pip serves, from pip's own index (so pip's configuration applies).
newest_release() {
  local tmp out
  tmp=$(mktemp -d)
  "$py" -m venv "$tmp/v" >/dev/null
  out=$("$tmp/v/bin/python" -m pip index versions --disable-pip-version-check torch 2>/dev/null |
    sed -n 's/^torch (\(.*\))$/\1/p') || true
  rm -rf "$tmp"
  [ -n "$out" ] || die "could not ask pip for torch's releases (is PyPI reachable?)"
  echo "$out"
}

# make_env <release>: the environment of <release>, made when missing or broken.
make_env() {
  local release=$1 dir="$cache/$1"
  if [ -f "$dir/.strata-ready" ] &&
     [ "$("$dir/bin/python" -c 'import torch; print(torch.__version__.split("+")[0])' 2>/dev/null)" = "$release" ]; then
    # The torch is there; what else the list asks for is added when missing (no new torch).
    if ! "$dir/bin/python" -c "$EXTRAS_IMPORT" 2>/dev/null; then
      echo "torch-venvs.sh: adding ${EXTRAS[*]} to $dir"
      "$dir/bin/python" -m pip install -q --disable-pip-version-check "${EXTRAS[@]}" || return 1
    fi
    echo "torch-venvs.sh: torch $release ready in $dir"
    return 0
  fi
  echo "torch-venvs.sh: making $dir (pip's torch==$release; the first time downloads about 3 GB)"
  # Made in place, and marked ready only once it imports, so an interrupted download never
  # leaves an environment that looks ready (a venv cannot be moved: its scripts name its path).
  # (Called in a || list, where set -e does not apply: each step says so itself.)
  rm -rf "$dir" && mkdir -p "$cache" && "$py" -m venv "$dir" || return 1
  "$dir/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip || return 1
  "$dir/bin/python" -m pip install -q --disable-pip-version-check \
    "torch==$release" "${EXTRAS[@]}" || return 1
  "$dir/bin/python" -c "import torch, torch.distributed as d; assert d.is_available()" || return 1
  touch "$dir/.strata-ready"
  "$dir/bin/python" -c "import torch; print('torch-venvs.sh: torch', torch.__version__, 'ready in $dir')"
}

status=0
for v in "${versions[@]}"; do
  release=$v
  [ "$v" = newest ] && release=$(newest_release)
  if ((print)); then
    echo "$release $cache/$release"
    continue
  fi
  make_env "$release" || { status=1; echo "torch-venvs.sh: torch $release FAILED" >&2; continue; }
  if [ "$v" = newest ]; then
    # An environment made for "newest" is marked so; when a newer release arrives, the older
    # ones so marked are removed (a release asked for by number is never removed).
    touch "$cache/$release/.strata-newest"
    for old in "$cache"/*/.strata-newest; do
      old=$(dirname "$old")
      [ "$(basename "$old")" = "$release" ] && continue
      case " ${versions[*]} " in *" $(basename "$old") "*) continue ;; esac
      echo "torch-venvs.sh: removing $old (an older newest release)"
      rm -rf "$old"
    done
  fi
done
exit $status
