#!/usr/bin/env bash
# Runs the README's two commands (its "Quick start" block) on a fresh Debian 12, as a new user
# would: makes a minbase root with debootstrap from the mirror this machine's apt uses, clones
# the current commit (HEAD; uncommitted changes are not in it) into /root/strata there, and
# runs each command as root with no terminal, printing its result and time. Slow (about an hour
# on 2 cores: Debian's PyTorch, a build and the whole suite); not run by CI. Run it before
# stopping whenever a dependency changes (docs/testing.md).
#
#   bash scripts/fresh-check.sh [--keep] [--cache DIR] [--dir DIR] [--mirror URL]
#
#   --keep        leave the root (unmounted) for a look afterwards; its path is printed
#   --cache DIR   keep downloaded .deb files in DIR between runs (debootstrap's and apt's)
#   --dir DIR     where the root is made (default /var/tmp); each run makes a new folder there
#   --mirror URL  the Debian mirror (default: the first one of /etc/apt for bookworm)
#
# Logs go to fresh-check-logs/ (ignored by git; FRESH_LOG_DIR overrides). Needs root, debootstrap
# (installed when missing) and about 8 GB of disk. Everything it mounts lives in a mount
# namespace of its own, and it unmounts before it removes: it never deletes through a mount.
# Exit status: 0 when the quick start printed PASSED and the test command exited 0.
set -euo pipefail
trap 'echo "fresh-check: line $LINENO failed: $BASH_COMMAND" >&2' ERR
repo="${STRATA_FRESH_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
keep=0 cache="" base=/var/tmp mirror=""
while (($#)); do
  case "$1" in
    --keep) keep=1 ;;
    --cache) cache="$(mkdir -p "${2:?--cache needs a folder}" && cd "$2" && pwd)"; shift ;;
    --dir) base="${2:?--dir needs a folder}"; shift ;;
    --mirror) mirror="${2:?--mirror needs a URL}"; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "fresh-check: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
die() { echo "fresh-check: $*" >&2; exit "${2:-1}"; }
[ "$(id -u)" -eq 0 ] || die "run as root (debootstrap, chroot, mount)" 2

# Mounts made from here on stay in this process's own mount namespace: the host never sees
# them, and they vanish with the namespace even if this script is killed. It runs from a copy:
# bash reads a script as it goes, so an edit to this file during the hour it runs would change
# what it does next.
if [ -z "${STRATA_FRESH_NS:-}" ]; then
  copy=$(mktemp "${TMPDIR:-/tmp}/fresh-check.XXXXXX")
  cp "$0" "$copy"
  exec env STRATA_FRESH_NS=1 STRATA_FRESH_REPO="$repo" STRATA_FRESH_COPY="$copy" \
    unshare --mount --propagation private bash "$copy" "$@"
fi
rm -f "${STRATA_FRESH_COPY:-}"  # bash holds it open

logs="${FRESH_LOG_DIR:-$repo/fresh-check-logs}"
mkdir -p "$logs"
command -v debootstrap >/dev/null ||
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap; }

# The mirror: the first bookworm source of this machine's apt (one-line or deb822 format).
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
[ -n "$mirror" ] || die "no bookworm mirror in /etc/apt; pass --mirror" 2
commit=$(git -C "$repo" rev-parse HEAD)
git -C "$repo" diff --quiet HEAD 2>/dev/null ||
  echo "fresh-check: note: uncommitted changes are not checked (it clones $commit)"

mkdir -p "$base"
root=$(mktemp -d "$base/strata-fresh.XXXXXX")
chmod 755 "$root"  # its "/": apt's _apt user must get through it
mounts=()  # what this script mounted, in order; unmounted in reverse

# Processes still running inside the root (a stuck mpiexec, an orted) keep its mounts busy.
kill_inside() {
  local pid link
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    link=$(readlink "/proc/$pid/root" 2>/dev/null) || continue
    case "$link" in "$root" | "$root"/*) kill -9 "$pid" 2>/dev/null || true ;; esac
  done
}

# Every mount point at or under the root, deepest first (this namespace's table).
mounts_under() {
  findmnt -rn -o TARGET | awk -v r="$root" '$0 == r || index($0, r "/") == 1' | sort -r
}

cleanup() {
  local rc=$? i m left
  trap - EXIT INT TERM
  kill_inside
  # Ours in reverse, then anything the tests mounted inside (ip netns), deepest first.
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    mountpoint -q "${mounts[i]}" && umount "${mounts[i]}" 2>/dev/null || true
  done
  for m in $(mounts_under); do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true; done
  left=$(mounts_under)
  if [ -n "$left" ]; then
    echo "fresh-check: still mounted, so $root is NOT removed:" >&2
    echo "$left" >&2
    exit 1
  elif ((keep)); then
    echo "fresh-check: kept $root (nothing mounted in it)"
  else
    # --one-file-system: never crosses into a file system, even one mounted since the check.
    rm -rf --one-file-system "$root"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mount_in() {  # mount_in TARGET MOUNT-ARGS...: mounts and remembers it
  local target="$root$1"
  shift
  mkdir -p "$target"
  mount "$@" "$target"
  mounts+=("$target")
}

step_start=$(date +%s)
echo "fresh-check: debootstrap bookworm (minbase) from $mirror into $root"
cache_args=()
[ -n "$cache" ] && cache_args=(--cache-dir="$cache")
debootstrap --variant=minbase "${cache_args[@]}" bookworm "$root" "$mirror" \
  >"$logs/debootstrap.log" 2>&1 ||
  { tail -20 "$logs/debootstrap.log"; echo "fresh-check: debootstrap failed" >&2; exit 1; }
echo "fresh-check: debootstrap took $(($(date +%s) - step_start)) s"

# apt's sources as this machine has them for Debian (updates and security included), DNS.
if compgen -G "/etc/apt/sources.list.d/*.sources" >/dev/null; then
  awk 'BEGIN { RS = ""; ORS = "\n\n" } /(^|\n)Suites:[^\n]*bookworm/ && !/(^|\n)Enabled: *no/' \
    /etc/apt/sources.list.d/*.sources >"$root/etc/apt/sources.list.d/debian.sources"
  [ -s "$root/etc/apt/sources.list.d/debian.sources" ] && : >"$root/etc/apt/sources.list"
fi
if [ -f /etc/apt/sources.list ] && grep -q '^deb .* bookworm' /etc/apt/sources.list; then
  grep '^deb .* bookworm' /etc/apt/sources.list >"$root/etc/apt/sources.list"
fi
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

# The root as a mount point of its own: `ip netns` (the netlab tests) remounts "/" as a slave,
# which a plain directory under chroot refuses, and then skips every netlab test.
mount_in "" --bind "$root"
mount_in /proc -t proc proc
mount_in /sys --bind /sys
mount_in /dev --bind /dev
mount_in /dev/pts -t devpts -o newinstance,ptmxmode=0666 devpts
mount_in /dev/shm -t tmpfs -o mode=1777 tmpfs
[ -n "$cache" ] && mount_in /var/cache/apt/archives --bind "$cache"

git clone -q --no-checkout "$repo" "$root/root/strata"
git -C "$root/root/strata" checkout -q --detach "$commit"
echo "fresh-check: cloned $commit ($(git -C "$repo" log -1 --format=%s "$commit" | cut -c1-60))"

# The README's commands: the "bash scripts/..." lines of the first sh block after Quick start.
mapfile -t commands < <(awk '/^## Quick start/ {q = 1} q && /^```sh/ {b = 1; next}
  b && /^```/ {exit} b {sub(/ *#.*/, ""); if ($0 != "") print}' "$root/root/strata/README.md")
((${#commands[@]} == 2)) ||
  die "expected 2 commands in the README's quick start, found ${#commands[@]}"

results=() status=0
for i in 0 1; do
  cmd=${commands[i]}
  log="$logs/command$((i + 1)).log"
  echo "fresh-check: running '$cmd' (log: $log)"
  start=$(date +%s) rc=0
  # As root with a clean environment, no terminal (setsid, stdin from /dev/null).
  setsid -w chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    bash -c "cd /root/strata && $cmd" </dev/null >"$log" 2>&1 || rc=$?
  secs=$(($(date +%s) - start))
  verdict=$([ $rc = 0 ] && echo "exit 0" || echo "FAILED (exit $rc)")
  if [ "$i" = 0 ] && ! grep -q 'check: PASSED' "$log"; then
    verdict="FAILED (no 'check: PASSED'; exit $rc)"
  fi
  if [ "$i" = 1 ]; then
    summary=$(grep -E 'tests passed|tests failed' "$log" | tail -1)
    [ -n "$summary" ] && verdict="$verdict: $summary"
    grep -qE '^[0-9]+% tests passed, 0 tests failed' "$log" || [ $rc != 0 ] ||
      verdict="FAILED (no ctest summary)"
  fi
  case "$verdict" in FAILED*) status=1; tail -40 "$log" ;; esac
  results+=("$(printf '%-28s %4dm%02ds  %s' "$cmd" $((secs / 60)) $((secs % 60)) "$verdict")")
  [ "$i" = 0 ] && grep -E 'check: (PASSED|FAILED)' "$log" | tail -1
  if [ "$i" = 1 ]; then
    # ctest's own log (every entry's output, skipped ones' reasons too) outlives the root.
    cp "$root/root/strata/build/Testing/Temporary/LastTest.log" "$logs/ctest-LastTest.log" \
      2>/dev/null || true
    grep -A4 'did not run' "$log" | sed -n '2,$p' | sed 's/^/  skipped: /' || true
  fi
done
echo "fresh-check: results on a fresh Debian 12 root, commit ${commit:0:12}:"
printf '  %s\n' "${results[@]}"
exit $status
