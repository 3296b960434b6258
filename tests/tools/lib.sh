# Shared by the test_strata_*.sh scripts, which source it after setting:
#   case_name  the case being run (for messages)
#   tool       the executable under test (for run)
#   python     python3 (for check_json; only scripts that call it need it)
# and then call make_work.

# make_work NAME: a scratch directory $work, removed on exit, and the capture files $out, $err.
make_work() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  out=$work/out
  err=$work/err
}

fail() {
  echo "FAIL ($case_name): $*" >&2
  echo "--- stdout:" >&2
  head -c 20000 "$out" >&2 2>/dev/null
  echo "--- stderr:" >&2
  head -c 20000 "$err" >&2 2>/dev/null
  exit 1
}

# run ARGS...: the tool's stdout in $out, stderr in $err, exit code in $rc.
run() {
  "$tool" "$@" >"$out" 2>"$err"
  rc=$?
}

# mpirun ARGS...: mpiexec with ARGS (which name the program), same outputs as run.
mpirun() {
  "${MPIEXEC:?}" --oversubscribe "$@" >"$out" 2>"$err"
  rc=$?
}

expect_rc() { [ "$rc" -eq "$1" ] || fail "exit code $rc, expected $1"; }
# expect_exit CODE: a clean failure with exit code CODE (1 failure, 2 usage error; see
# tools/lib/tool_cli.h), a message on stderr, and no uncaught exception, signal or abort.
expect_exit() {
  expect_rc "$1"
  [ -s "$err" ] || fail "exit code $1 without a message"
  ! grep -qE 'terminate called|Aborted|core dumped|Segmentation' "$err" ||
    fail "crashed instead of failing cleanly"
}
expect_failure() { expect_exit 1; }
expect_usage() { expect_exit 2; }
has() { grep -qF -- "$1" "${2:-$out}" || fail "'$1' not in ${3:-stdout}"; }
has_err() { has "$1" "$err" stderr; }
lacks() { ! grep -qF -- "$1" "${2:-$out}" || fail "'$1' unexpectedly in ${3:-stdout}"; }

# check_json PYTHON-CODE: runs the code with d = the JSON on stdout.
check_json() {
  "$python" - "$out" "$1" <<'PYEOF' || fail "json check failed"
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
exec(sys.argv[2])
PYEOF
}
