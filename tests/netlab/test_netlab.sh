#!/usr/bin/env bash
# tools/netlab, run as a user runs it: test_netlab.sh CASE (ctest -L netlab).
#
#   two_hosts  a 2-host lab; `hostname` under netlab run shows one name per host; a 4-rank
#              strata-allreduce-demo sees 2 hosts of 2 ranks, PASSES, and its traffic crosses the
#              shaped links
#   lifecycle  up twice (same lab), reconfigure rate and host count, status, bad arguments,
#              down twice (safe when nothing exists)
#   shaping    a TCP stream between two hosts passes through both ends' shapers
#   uid_hosts  unique-id communicators over 2 and 3 hosts (UCX between them): launcher-free with
#              the id in a file and with STRATA_COMM_ID, the conformance program under mpirun
#              with --uid, the NCCL program under the drop-in (CUDA builds)
#
# Each case makes a lab named nlt<pid>, so it never touches a user's lab, and removes it on
# exit, pass or fail. Where network namespaces cannot be made (not root, no CAP_NET_ADMIN) the
# case exits 77, which ctest reports as skipped (SKIP_RETURN_CODE).
# Environment: STRATA_SOURCE_DIR (the tree), STRATA_DEMO (strata-allreduce-demo), PYTHON.
set -euo pipefail
case_name=${1:?usage: test_netlab.sh two_hosts|lifecycle|shaping|uid_hosts}
netlab="${STRATA_SOURCE_DIR:?}/tools/netlab"
lab="nlt$$"

skip() {
  echo "SKIPPED ($case_name): $*"
  exit 77
}
fail() {
  echo "FAIL ($case_name): $*" >&2
  if [ -n "${out:-}" ] && [ -f "$out" ]; then
    echo "--- output:" >&2
    head -c 20000 "$out" >&2
  fi
  exit 1
}

source "$(dirname "${BASH_SOURCE[0]}")/netlab_probe.sh"
netlab_probe_or_skip

work=$(mktemp -d "${TMPDIR:-/tmp}/netlab-test.XXXXXX")
out=$work/out
cleanup() {
  "$netlab" down --name "$lab" >/dev/null 2>&1 || echo "WARNING: netlab down --name $lab failed" >&2
  rm -rf "$work"
}
trap cleanup EXIT

# has TEXT: TEXT is in the last command's output.
has() { grep -qF -- "$1" "$out" || fail "'$1' not in the output"; }

# sent_bytes NS DEV: bytes the root qdisc of DEV in namespace NS has sent.
sent_bytes() { ip netns exec "$1" tc -s qdisc show dev "$2" | awk '/Sent/ { print $2; exit }'; }

case_two_hosts() {
  "$netlab" up --name "$lab" --hosts 2 --rate 1gbit >"$out" 2>&1 || fail "netlab up failed"

  "$netlab" run --name "$lab" --ranks-per-host 2 -- hostname >"$out" 2>&1 || fail "netlab run hostname failed"
  local names
  names=$(sort "$out" | uniq -c | awk '{ print $2 "x" $1 }' | tr '\n' ' ')
  [ "$names" = "$lab-h1x2 $lab-h2x2 " ] || fail "host names per rank: '$names', expected $lab-h1 and $lab-h2 twice each"

  # MCA defaults: btl self,vader,tcp and, with more ranks than cores, mpi_yield_when_idle 1;
  # the same parameter among the run's options replaces a default (mpirun takes it once).
  # shellcheck disable=SC2016  # expanded by the ranks' shell
  local show='echo "btl=$OMPI_MCA_btl yield=${OMPI_MCA_mpi_yield_when_idle:-unset}"' cores
  cores=$(getconf _NPROCESSORS_ONLN)
  "$netlab" run --name "$lab" --ranks-per-host 1 -- sh -c "$show" >"$out" 2>&1 || fail "netlab run sh failed"
  if ((2 <= cores)); then has "btl=self,vader,tcp yield=unset"; else has "btl=self,vader,tcp yield=1"; fi
  "$netlab" run --name "$lab" --ranks-per-host "$cores" -- sh -c "$show" >"$out" 2>&1 || fail "netlab run sh failed"
  has "btl=self,vader,tcp yield=1"
  "$netlab" run --name "$lab" --ranks-per-host 1 --mca btl self,tcp --mca mpi_yield_when_idle 0 -- sh -c "$show" \
    >"$out" 2>&1 || fail "netlab run with --mca btl failed"
  has "btl=self,tcp yield=0"

  local before after
  before=$(sent_bytes "$lab-h1" eth0)
  "$netlab" run --name "$lab" --ranks-per-host 2 -- "${STRATA_DEMO:?}" 100000 >"$out" 2>&1 ||
    fail "strata-allreduce-demo failed under netlab run"
  has "strata allreduce demo: 4 ranks"
  # Two hosts of two ranks: the innermost level groups by host, the outer level joins them.
  has "hierarchy node(2) x network(2) over 4 ranks"
  has "rank 2: node group 1 position 0"
  has "check: PASSED"
  # The demo's network level crossed host 1's shaped upload (at least 100 KB of 400 KB data).
  after=$(sent_bytes "$lab-h1" eth0)
  (( after - before > 100000 )) || fail "host 1's link sent only $((after - before)) bytes during the demo"
}

# Unique-id communicators across emulated hosts (no MPI in the communicator): the control plane
# over TCP between namespaces, the data over UCX. Launcher-free (tools/strata-run --netlab) with
# the id in a file and with STRATA_COMM_ID, the conformance program under mpirun with --uid, and
# the NCCL program under the drop-in where the build has it.
case_uid_hosts() {
  local run=("${PYTHON:-python3}" "$STRATA_SOURCE_DIR/tools/strata-run" --netlab "$lab" --timeout 150)
  "$netlab" up --name "$lab" --hosts 3 --rate 1gbit >"$out" 2>&1 || fail "netlab up failed"
  local before after
  before=$(sent_bytes "$lab-h1" eth0)
  "${run[@]}" --hosts h1:2,h2:2 -- "${STRATA_UID_DEMO:?}" "$work/id" 1000003 >"$out" 2>&1 ||
    fail "strata-uid-demo over 2 hosts failed"
  [ "$(grep -c ": PASSED" "$out")" = 4 ] || fail "expected 4 ranks to pass"
  has "ucx"  # strataCommDescribe names the inter-host level's fabric
  after=$(sent_bytes "$lab-h1" eth0)
  (( after - before > 1000000 )) || fail "host 1's link sent only $((after - before)) bytes"

  "${run[@]}" --hosts h1:2,h2:1,h3:2 --comm-id -- "$STRATA_UID_DEMO" - 65537 >"$out" 2>&1 ||
    fail "strata-uid-demo over 3 hosts with STRATA_COMM_ID failed"
  [ "$(grep -c ": PASSED" "$out")" = 5 ] || fail "expected 5 ranks to pass"

  "$netlab" run --name "$lab" --hosts 3 --ranks-per-host 1 -- "${STRATA_COLLECTIVES:?}" --uid \
    --quick --timeout 150 >"$out" 2>&1 || fail "the conformance program with --uid failed over 3 hosts"
  has "0 failed"

  if [ -n "${STRATA_NCCL_PROGRAM:-}" ]; then
    "${run[@]}" --hosts h1:1,h2:2 -- env LD_PRELOAD="$STRATA_NCCL_DROPIN" "$STRATA_NCCL_PROGRAM" \
      --id-file "$work/nccl.id" >"$out" 2>&1 || fail "the NCCL program under the drop-in failed"
    [ "$(grep -c " 0 failed" "$out")" = 3 ] || fail "expected 3 ranks to pass"
  fi
}

case_lifecycle() {
  "$netlab" up --name "$lab" --hosts 3 --rate 300mbit >"$out" 2>&1 || fail "first up failed"
  has "lab $lab created: 3 hosts"
  "$netlab" up --name "$lab" --hosts 3 --rate 300mbit >"$out" 2>&1 || fail "second up failed"
  has "lab $lab updated: 3 hosts"
  [ "$(ip netns list | grep -c "^$lab-")" = 4 ] || fail "expected 4 namespaces after up twice: $(ip netns list)"

  # Reconfigure: the rate is applied to both directions, the third host goes.
  "$netlab" up --name "$lab" --hosts 2 --rate 700mbit >"$out" 2>&1 || fail "reconfiguring up failed"
  "$netlab" status --name "$lab" >"$out" 2>&1 || fail "status failed"
  has "lab $lab: 2 hosts, rate 700mbit"
  [ "$(grep -c "rate 700Mbit" "$out")" = 4 ] || fail "expected 4 qdiscs at 700Mbit"
  ! grep -q "$lab-h3" "$out" || fail "host 3 is still there"
  ! ip netns list | grep -q "^$lab-h3" || fail "namespace $lab-h3 is still there"
  # Settings not given keep their values.
  "$netlab" up --name "$lab" >"$out" 2>&1 || fail "up without settings failed"
  has "2 hosts on 198."
  has "rate 700mbit"

  # Bad input is refused with a message, and leaves the lab alone.
  for args in "--rate fast" "--delay 5" "--hosts 0" "--name bad-name" "--subnet 512" "--bogus"; do
    # shellcheck disable=SC2086  # one option and its value
    if "$netlab" up --name "$lab" $args >"$out" 2>&1; then fail "up $args succeeded"; fi
    has "netlab: "
  done
  "$netlab" status --name "$lab" >"$out" 2>&1 || fail "status after bad input failed"
  has "rate 700mbit"

  "$netlab" down --name "$lab" >"$out" 2>&1 || fail "down failed"
  has "lab $lab removed (3 namespaces)"
  ! ip netns list | grep -q "^$lab-" || fail "namespaces left after down: $(ip netns list)"
  "$netlab" down --name "$lab" >"$out" 2>&1 || fail "second down failed"
  has "nothing to remove"
  if "$netlab" status --name "$lab" >"$out" 2>&1; then fail "status of a removed lab succeeded"; fi
  has "no lab $lab"
}

# One TCP stream of 25 MB from host 1 to host 2 must pass through the shapers on host 1's
# upload and host 2's download, each set to the configured rate: their tbf counters must hold
# the stream's bytes. The rate achieved is printed, never asserted (tests assert no timings).
case_shaping() {
  "$netlab" up --name "$lab" --hosts 2 --rate 200mbit >"$out" 2>&1 || fail "netlab up failed"
  cat >"$work/stream.py" <<'EOF'
import socket, sys, time
if sys.argv[1] == "serve":
    s = socket.socket()
    s.settimeout(30)
    s.bind(("0.0.0.0", 5201))
    s.listen(1)
    open(sys.argv[2], "w").close()  # listening now
    c, _ = s.accept()
    c.settimeout(30)
    buf, n, t0 = bytearray(1 << 20), 0, None
    while True:
        k = c.recv_into(buf)
        if t0 is None:
            t0 = time.monotonic()
        if not k:
            break
        n += k
    print(f"{n * 8 / (time.monotonic() - t0) / 1e6:.1f}")
else:
    c = socket.create_connection((sys.argv[2], 5201), timeout=30)
    chunk = b"x" * (1 << 20)
    for _ in range(25):
        c.sendall(chunk)
    c.close()
EOF
  "$netlab" exec --name "$lab" 2 -- "${PYTHON:-python3}" "$work/stream.py" serve "$work/ready" >"$work/mbit" 2>&1 &
  local server=$! i
  for ((i = 0; i < 100; i++)); do [ -e "$work/ready" ] && break; sleep 0.1; done
  local addr
  addr=$(ip -n "$lab-h2" -4 -o addr show dev eth0 | awk '{ sub("/.*", "", $4); print $4 }')
  "$netlab" exec --name "$lab" 1 -- "${PYTHON:-python3}" "$work/stream.py" send "$addr" >"$out" 2>&1 ||
    fail "sender failed"
  wait "$server" || { out=$work/mbit; fail "receiver failed"; }
  local mbit
  mbit=$(cat "$work/mbit")
  echo "configured 200mbit, measured $mbit Mbit/s of TCP payload (for information)"
  local where ns dev qdisc sent
  for where in "$lab-h1 eth0" "$lab-sw h2"; do
    read -r ns dev <<<"$where"
    qdisc=$(tc -n "$ns" -s qdisc show dev "$dev")
    grep -q "tbf .*rate 200Mbit" <<<"$qdisc" || fail "no 200Mbit tbf on $dev in $ns: $qdisc"
    sent=$(awk '/Sent/ { print $2; exit }' <<<"$qdisc")
    ((sent >= 25 * 1048576)) || fail "the tbf on $dev in $ns passed only $sent bytes: $qdisc"
  done
}

case "$case_name" in
  two_hosts) case_two_hosts ;;
  lifecycle) case_lifecycle ;;
  shaping) case_shaping ;;
  uid_hosts) case_uid_hosts ;;
  *) fail "unknown case" ;;
esac
echo "PASS ($case_name)"
