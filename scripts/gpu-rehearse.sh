#!/usr/bin/env bash
# scripts/gpu-rehearse.sh: runs scripts/gpu-check.sh as a GPU machine would, on a machine
# without one, so that the script works the first time on a GPU machine nobody here has seen.
# It makes a bare Debian 12 root (debootstrap minbase) holding only what such a machine has of
# its own: compilers, CMake, ninja, Python with PyTorch (Debian's), and CUDA bind-mounted from
# this machine with NCCL taken out of it and laid out as the nvidia-nccl pip wheel lays it out
# (nccl.h apart from CUDA's headers; found in Python's site-packages). No Open MPI, no hwloc:
# those come from the carried .debs/, as on the GPU machine. It then clones the current commit,
# copies the carried folders (.debs/, .nccl-tests/; scripts/gpu-prepare.sh makes them) and runs
#   OUT=/root/gpu-out bash scripts/gpu-check.sh --budget BUDGET
# inside. Without a GPU the GPU entries must report skipped and nccl-tests is built, not run;
# a phase that needs no GPU (the build, the torch backend's CPU tests) must pass.
#
#   bash scripts/gpu-rehearse.sh [--budget S] [--keep] [--cache DIR] [--dir DIR] [--mirror URL]
#
#   --budget S    gpu-check's budget (default 5400: 2 cores build what 16 build in a minute)
#   --keep        leave the root (unmounted) afterwards; its path is printed
#   --cache DIR   keep downloaded .deb files in DIR between runs
#   --dir DIR     where the root is made (default /var/tmp)
#   --mirror URL  the Debian mirror (default: the first one of /etc/apt for bookworm)
#
# gpu-check's output comes back to gpu-rehearse-out/ (ignored by git; $OUT overrides); each phase's
# time is in its summary.txt. Needs root, debootstrap, a CUDA toolkit at /usr/local/cuda (else
# the build is host-only and says so) and about 8 GB of disk. Exit status: gpu-check's.
set -euo pipefail
trap 'echo "gpu-rehearse: line $LINENO failed: $BASH_COMMAND" >&2' ERR
repo="${STRATA_DROOT_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
# shellcheck source=lib/debian_root.sh
source "$repo/scripts/lib/debian_root.sh"
droot_name=gpu-rehearse
budget=5400 keep=0 cache="" base=/var/tmp mirror=""
args=("$@")  # for the re-execution in a mount namespace of its own
while (($#)); do
  case "$1" in
    --budget) budget="${2:?--budget needs seconds}"; shift ;;
    --keep) keep=1 ;;
    --cache) cache="$(mkdir -p "${2:?--cache needs a folder}" && cd "$2" && pwd)"; shift ;;
    --dir) base="${2:?--dir needs a folder}"; shift ;;
    --mirror) mirror="${2:?--mirror needs a URL}"; shift ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "gpu-rehearse: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[[ "$budget" =~ ^[0-9]+$ ]] || droot_die "--budget takes whole seconds" 2
[ "$(id -u)" -eq 0 ] || droot_die "run as root (debootstrap, chroot, mount)" 2
droot_enter_namespace "$0" "${args[@]}"

ls "$repo"/.debs/*.deb >/dev/null 2>&1 && [ -f "$repo/.nccl-tests/src/Makefile" ] ||
  droot_die "no .debs/ or .nccl-tests/: run scripts/gpu-prepare.sh NCCL_TESTS_CHECKOUT first" 2
results="${OUT:-$repo/gpu-rehearse-out}"
mkdir -p "$results"
command -v debootstrap >/dev/null ||
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap; }
mirror=$(droot_mirror "$mirror")
commit=$(git -C "$repo" rev-parse HEAD)
git -C "$repo" diff --quiet HEAD 2>/dev/null ||
  echo "gpu-rehearse: note: uncommitted changes are not rehearsed (it clones $commit)"

t0=$(date +%s)
droot_create "$base" "$keep"
droot_debootstrap "$mirror" "$results/debootstrap.log" "$cache"
droot_apt_sources
droot_standard_mounts "$cache"

# What the GPU machine has of its own (its image: compilers, CMake, ninja, git, a Python with
# PyTorch, pybind11 and scikit-learn, which the examples use); nothing strata's build takes
# from .debs/.
step=$(date +%s)
echo "gpu-rehearse: installing the GPU machine's own tools into the root"
droot_run "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
  --no-install-recommends build-essential cmake ninja-build git ca-certificates python3 \
  python3-dev python3-torch libtorch-dev pybind11-dev python3-sklearn" >"$results/apt.log" 2>&1 ||
  { tail -20 "$results/apt.log"; droot_die "installing the tools failed"; }
echo "gpu-rehearse: tools installed in $(($(date +%s) - step)) s"

# CUDA without NCCL (an overlay whose upper layer hides NCCL's files), and NCCL where the wheel
# puts it: site-packages/nvidia/nccl/{include,lib}.
cuda=$(readlink -f /usr/local/cuda 2>/dev/null || true)
if [ -n "$cuda" ] && [ -x "$cuda/bin/nvcc" ]; then
  upper="$droot/.cuda-upper"
  mkdir -p "$upper/data/include" "$upper/data/lib" "$upper/work"
  for f in "$cuda"/include/nccl* "$cuda"/lib/libnccl*; do
    [ -e "$f" ] && mknod "$upper/data/${f#"$cuda"/}" c 0 0  # an overlay whiteout
  done
  droot_mount /usr/local/cuda -t overlay overlay \
    -o "lowerdir=$cuda,upperdir=$upper/data,workdir=$upper/work"
  site=$(droot_run "python3 -c 'import sysconfig; print(sysconfig.get_path(\"purelib\"))'")
  mkdir -p "$droot$site/nvidia/nccl/include" "$droot$site/nvidia/nccl/lib"
  cp -a "$cuda"/include/nccl* "$droot$site/nvidia/nccl/include/"
  cp -a "$cuda"/lib/libnccl.so.2* "$droot$site/nvidia/nccl/lib/"
  echo "gpu-rehearse: CUDA from $cuda without NCCL; NCCL in $site/nvidia/nccl (as a wheel)"
else
  echo "gpu-rehearse: no CUDA toolkit at /usr/local/cuda: the build is host-only"
fi

droot_clone "$repo" "$commit" /root/strata
cp -a "$repo/.debs" "$repo/.nccl-tests" "$droot/root/strata/"
echo "gpu-rehearse: cloned $commit with .debs/ and .nccl-tests/; running gpu-check.sh"
rc=0
droot_run OUT=/root/gpu-out "cd /root/strata && bash scripts/gpu-check.sh --budget $budget" \
  >"$results/gpu-check.log" 2>&1 || rc=$?
cp -a "$droot/root/gpu-out/." "$results/" 2>/dev/null || true
cat "$results/summary.txt" 2>/dev/null || tail -30 "$results/gpu-check.log"
echo "gpu-rehearse: total $(($(date +%s) - t0)) s (root, tools and gpu-check); gpu-check exit $rc;" \
  "logs in $results"
exit "$rc"
