#!/usr/bin/env bash
# tools/strata-run as a user runs it (tests/tools/run.cmake). Usage: test_strata_run.sh CASE.
#   loopback_env   what each rank is given: STRATA_SOCKET_IFNAME==lo when every rank is on this
#                  machine (-n, --hosts) and MASTER_ADDR is loopback; untouched when the user set
#                  it or gave a --master-addr that is not loopback
#   loopback_job   a unique-id job (strata-uid-demo, 2 ranks; 1+1 emulated hosts; --comm-id):
#                  STRATA_DEBUG=INFO shows the rendezvous root and every rank on 127.0.0.1.
#                  Without the export, a machine with any other interface up listens there.
# Environment: STRATA_RUN (tools/strata-run), STRATA_UID_DEMO, PYTHON.
set -uo pipefail
case_name=$1
. "$(dirname "$0")/lib.sh"
make_work strata_run
run_py=("${PYTHON:-python3}" "${STRATA_RUN:?}")
# A user's own setting would hide what strata-run does; the cases that want one set it.
unset STRATA_SOCKET_IFNAME STRATA_COMM_ID

# ifname_seen ARGS...: the STRATA_SOCKET_IFNAME every rank of `strata-run ARGS` sees, one line
# per rank ("<unset>" when it is not set), in $out.
ifname_seen() {
  "${run_py[@]}" "$@" -- sh -c 'echo "${STRATA_SOCKET_IFNAME-<unset>}"' >"$out" 2>"$err"
  rc=$?
  expect_rc 0
}

# expect_lines TEXT COUNT: $out is exactly COUNT lines, each TEXT.
expect_lines() {
  [ "$(grep -cxF -- "$1" "$out")" = "$2" ] && [ "$(wc -l <"$out")" = "$2" ] ||
    fail "expected $2 lines '$1'"
}

case "$case_name" in
  loopback_env)
    ifname_seen -n 3
    expect_lines "=lo" 3
    ifname_seen --hosts a:1,b:2
    expect_lines "=lo" 3
    ifname_seen -n 2 --master-addr localhost
    expect_lines "=lo" 2
    ifname_seen -n 2 --master-addr ::1
    expect_lines "=lo" 2
    # The user's choice stands, even an empty one.
    STRATA_SOCKET_IFNAME=eth ifname_seen -n 2
    expect_lines "eth" 2
    STRATA_SOCKET_IFNAME= ifname_seen -n 2
    expect_lines "" 2
    # A MASTER_ADDR that is not loopback (TEST-NET-1, never routed) names the interface the
    # user wants: strata chooses, as on a real cluster.
    ifname_seen -n 2 --master-addr 192.0.2.77
    expect_lines "<unset>" 2
    ;;
  loopback_job)
    cd "$work" || exit 1
    for how in "-n 2" "--hosts a:1,b:1" "-n 2 --comm-id"; do
      idarg=job.id
      [[ $how == *--comm-id* ]] && idarg=-
      # shellcheck disable=SC2086  # $how is several options
      STRATA_DEBUG=INFO STRATA_DEBUG_SUBSYS=ALL "${run_py[@]}" $how --timeout 100 -- \
        "${STRATA_UID_DEMO:?}" "$idarg" 4096 >"$out" 2>"$err"
      rc=$?
      case_name="loopback_job ($how)"
      expect_rc 0
      [ "$(grep -c ': PASSED' "$out")" = 2 ] || fail "not every rank printed PASSED"
      grep -qE 'rendezvous root listening on 127\.0\.0\.1:[0-9]+' "$err" "$out" ||
        fail "no 'rendezvous root listening on 127.0.0.1:PORT'"
      for r in 0 1; do
        grep -qE "rank $r of 2 listens on 127\.0\.0\.1:[0-9]+ \(interface lo\)" "$err" "$out" ||
          fail "rank $r does not listen on 127.0.0.1 (interface lo)"
      done
      ! grep -hE 'listening on|listens on' "$err" "$out" | grep -vq '127\.0\.0\.1' ||
        fail "something listens outside loopback"
    done
    ;;
  *)
    echo "unknown case $case_name" >&2
    exit 2
    ;;
esac
echo "PASS ($case_name)"
