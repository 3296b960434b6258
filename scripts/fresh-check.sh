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
repo="${STRATA_DROOT_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
# shellcheck source=lib/debian_root.sh
source "$repo/scripts/lib/debian_root.sh"
droot_name=fresh-check
keep=0 cache="" base=/var/tmp mirror=""
args=("$@")  # for the re-execution in a mount namespace of its own
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
[ "$(id -u)" -eq 0 ] || droot_die "run as root (debootstrap, chroot, mount)" 2
droot_enter_namespace "$0" "${args[@]}"

logs="${FRESH_LOG_DIR:-$repo/fresh-check-logs}"
mkdir -p "$logs"
command -v debootstrap >/dev/null ||
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap; }
mirror=$(droot_mirror "$mirror")
commit=$(git -C "$repo" rev-parse HEAD)
git -C "$repo" diff --quiet HEAD 2>/dev/null ||
  echo "fresh-check: note: uncommitted changes are not checked (it clones $commit)"

droot_create "$base" "$keep"
root=$droot
droot_debootstrap "$mirror" "$logs/debootstrap.log" "$cache"
droot_apt_sources
droot_standard_mounts "$cache"

droot_clone "$repo" "$commit" /root/strata
echo "fresh-check: cloned $commit ($(git -C "$repo" log -1 --format=%s "$commit" | cut -c1-60))"

# The README's commands: the "bash scripts/..." lines of the first sh block after Quick start.
mapfile -t commands < <(awk '/^## Quick start/ {q = 1} q && /^```sh/ {b = 1; next}
  b && /^```/ {exit} b {sub(/ *#.*/, ""); if ($0 != "") print}' "$root/root/strata/README.md")
((${#commands[@]} == 2)) ||
  droot_die "expected 2 commands in the README's quick start, found ${#commands[@]}"

results=() status=0
for i in 0 1; do
  cmd=${commands[i]}
  log="$logs/command$((i + 1)).log"
  echo "fresh-check: running '$cmd' (log: $log)"
  start=$(date +%s) rc=0
  # As root with a clean environment, no terminal (setsid, stdin from /dev/null).
  droot_run "cd /root/strata && $cmd" >"$log" 2>&1 || rc=$?
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
