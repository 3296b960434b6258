# Sourced by scripts/fresh-check.sh and scripts/gpu-rehearse.sh: a fresh Debian 12 (bookworm)
# minbase root made with debootstrap, the mounts a build and MPI need inside it, and a cleanup
# that never removes anything through a mount.
#
# The caller runs as root, in a mount namespace of its own (droot_enter_namespace), sets
#   droot_name   a word for messages and folder names (e.g. fresh-check)
# and calls, in order: droot_mirror, droot_create, droot_debootstrap, droot_apt_sources,
# droot_standard_mounts; droot_cleanup runs on EXIT (droot_create sets the trap).
# Invariant: everything mounted under the root is unmounted, and checked to be, before
# `rm -rf --one-file-system` touches it; if anything is still mounted the root is left alone.

# droot_enter_namespace SCRIPT ARGS...: re-executes SCRIPT in a private mount namespace once, so
# that the host never sees the root's mounts and they vanish with the namespace even if the
# script is killed. It runs from a copy: bash reads a script as it goes, so an edit to the file
# during the hour it runs would change what it does next. The caller takes its repository from
# STRATA_DROOT_REPO when set (the copy is not in the repository).
droot_enter_namespace() {
  if [ -z "${STRATA_DROOT_NS:-}" ]; then
    local copy
    copy=$(mktemp "${TMPDIR:-/tmp}/$droot_name.XXXXXX")
    cp "$1" "$copy"
    shift
    exec env STRATA_DROOT_NS=1 STRATA_DROOT_REPO="$repo" STRATA_DROOT_COPY="$copy" \
      unshare --mount --propagation private bash "$copy" "$@"
  fi
  rm -f "${STRATA_DROOT_COPY:-}"  # bash holds it open
}

droot_die() { echo "$droot_name: $*" >&2; exit "${2:-1}"; }

# droot_mirror [URL]: prints URL, or the first bookworm mirror of this machine's apt (one-line
# or deb822 format).
droot_mirror() {
  local mirror=${1:-}
  if [ -z "$mirror" ]; then
    mirror=$(awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' /etc/apt/sources.list \
      2>/dev/null || true)
  fi
  if [ -z "$mirror" ]; then
    mirror=$(awk 'BEGIN { RS = ""; FS = "\n" }
      /(^|\n)Types:[^\n]*deb/ && /(^|\n)Suites:[^\n]*bookworm( |$|\n)/ && !/(^|\n)Enabled: *no/ {
        for (i = 1; i <= NF; i++) if ($i ~ /^URIs:/) { split($i, u, " "); print u[2]; exit } }' \
      /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  fi
  [ -n "$mirror" ] || droot_die "no bookworm mirror in /etc/apt; pass --mirror" 2
  echo "$mirror"
}

# droot_create BASE KEEP: makes the root's folder under BASE (sets droot) and arms the cleanup;
# KEEP=1 leaves the root (unmounted) afterwards.
droot_create() {
  mkdir -p "$1"
  droot=$(mktemp -d "$1/strata-$droot_name.XXXXXX")
  chmod 755 "$droot"  # its "/": apt's _apt user must get through it
  droot_keep=$2
  droot_mounts=()  # what was mounted, in order; unmounted in reverse
  trap droot_cleanup EXIT
  trap 'exit 130' INT TERM
}

# Processes still running inside the root (a stuck mpiexec, an orted) keep its mounts busy.
droot_kill_inside() {
  local pid link
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    link=$(readlink "/proc/$pid/root" 2>/dev/null) || continue
    case "$link" in "$droot" | "$droot"/*) kill -9 "$pid" 2>/dev/null || true ;; esac
  done
}

# Every mount point at or under the root, deepest first (this namespace's table).
droot_mounts_under() {
  findmnt -rn -o TARGET | awk -v r="$droot" '$0 == r || index($0, r "/") == 1' | sort -r
}

droot_cleanup() {
  local rc=$? i m left
  trap - EXIT INT TERM
  [ -n "${droot:-}" ] || exit "$rc"
  droot_kill_inside
  # Ours in reverse, then anything made inside (ip netns, ...), deepest first.
  for ((i = ${#droot_mounts[@]} - 1; i >= 0; i--)); do
    mountpoint -q "${droot_mounts[i]}" && umount "${droot_mounts[i]}" 2>/dev/null || true
  done
  for m in $(droot_mounts_under); do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  left=$(droot_mounts_under)
  if [ -n "$left" ]; then
    echo "$droot_name: still mounted, so $droot is NOT removed:" >&2
    echo "$left" >&2
    exit 1
  elif ((droot_keep)); then
    echo "$droot_name: kept $droot (nothing mounted in it)"
  else
    # --one-file-system: never crosses into a file system, even one mounted since the check.
    rm -rf --one-file-system "$droot"
  fi
  exit "$rc"
}

# droot_mount TARGET MOUNT-ARGS...: mounts at $droot/TARGET and remembers it.
droot_mount() {
  local target="$droot$1"
  shift
  mkdir -p "$target"
  mount "$@" "$target"
  droot_mounts+=("$target")
}

# droot_debootstrap MIRROR LOG [CACHE]: the minbase system.
droot_debootstrap() {
  local start cache_args=()
  start=$(date +%s)
  [ -n "${3:-}" ] && cache_args=(--cache-dir="$3")
  echo "$droot_name: debootstrap bookworm (minbase) from $1 into $droot"
  debootstrap --variant=minbase "${cache_args[@]}" bookworm "$droot" "$1" >"$2" 2>&1 ||
    { tail -20 "$2"; droot_die "debootstrap failed"; }
  echo "$droot_name: debootstrap took $(($(date +%s) - start)) s"
}

# apt's sources as this machine has them for Debian (updates and security included), and DNS.
droot_apt_sources() {
  if compgen -G "/etc/apt/sources.list.d/*.sources" >/dev/null; then
    awk 'BEGIN { RS = ""; ORS = "\n\n" } /(^|\n)Suites:[^\n]*bookworm/ && !/(^|\n)Enabled: *no/' \
      /etc/apt/sources.list.d/*.sources >"$droot/etc/apt/sources.list.d/debian.sources"
    [ -s "$droot/etc/apt/sources.list.d/debian.sources" ] && : >"$droot/etc/apt/sources.list"
  fi
  if [ -f /etc/apt/sources.list ] && grep -q '^deb .* bookworm' /etc/apt/sources.list; then
    grep '^deb .* bookworm' /etc/apt/sources.list >"$droot/etc/apt/sources.list"
  fi
  cp -L /etc/resolv.conf "$droot/etc/resolv.conf" 2>/dev/null || true
}

# proc, sys, dev, a devpts of its own and a /dev/shm (MPI's and strata's shared memory); CACHE
# (optional) is bound over apt's archive folder.
droot_standard_mounts() {
  # The root as a mount point of its own: `ip netns` (the netlab tests) remounts "/" as a slave,
  # which a plain directory under chroot refuses, and then every netlab test skips.
  droot_mount "" --bind "$droot"
  droot_mount /proc -t proc proc
  droot_mount /sys --bind /sys
  droot_mount /dev --bind /dev
  droot_mount /dev/pts -t devpts -o newinstance,ptmxmode=0666 devpts
  droot_mount /dev/shm -t tmpfs -o mode=1777 tmpfs
  if [ -n "${1:-}" ]; then droot_mount /var/cache/apt/archives --bind "$1"; fi
}

# droot_run COMMAND: runs COMMAND (a bash string) inside the root as root, with a clean
# environment (plus any NAME=VALUE words given before it) and no terminal.
droot_run() {
  local env=()
  while [ $# -gt 1 ]; do env+=("$1"); shift; done
  setsid -w chroot "$droot" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${env[@]}" \
    bash -c "$1" </dev/null
}

# droot_clone REPO COMMIT DEST: a clone of COMMIT at $droot/DEST.
droot_clone() {
  git clone -q --no-checkout "$1" "$droot$3"
  git -C "$droot$3" checkout -q --detach "$2"
}
