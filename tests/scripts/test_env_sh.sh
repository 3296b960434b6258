#!/usr/bin/env bash
# scripts/env.sh, which the README asks users to source: it must not confine a user's later
# multi-host mpirun to loopback (no OMPI_MCA_*_if_include exported), while the scripts that run
# on this machine only get those settings from strata_loopback_mpi.
# Argument: the source directory.
set -euo pipefail
src="$1"
fail() { echo "FAIL: $*"; exit 1; }
shell=$(env -i PATH="$PATH" HOME="${HOME:-/}" bash -c "source '$src/scripts/env.sh'; env")
if grep -E '^OMPI_MCA_(btl|oob)_tcp_if_(in|ex)clude=' <<<"$shell"; then
  fail "sourcing scripts/env.sh exports the lines above into the user's shell"
fi
grep -q '^OMPI_ALLOW_RUN_AS_ROOT=1$' <<<"$shell" || fail "env.sh no longer lets mpirun run as root"
loop=$(env -i PATH="$PATH" bash -c "source '$src/scripts/env.sh'; strata_loopback_mpi; env")
grep -q '^OMPI_MCA_oob_tcp_if_include=lo$' <<<"$loop" || fail "strata_loopback_mpi sets no oob"
grep -q '^OMPI_MCA_btl_tcp_if_include=lo$' <<<"$loop" || fail "strata_loopback_mpi sets no btl"
# A user's own choice survives.
mine=$(env -i PATH="$PATH" OMPI_MCA_oob_tcp_if_include=eth9 bash -c \
  "source '$src/scripts/env.sh'; strata_loopback_mpi; env")
grep -q '^OMPI_MCA_oob_tcp_if_include=eth9$' <<<"$mine" ||
  fail "strata_loopback_mpi overrode the user's own setting"
for s in test.sh quickstart.sh sanitize.sh; do
  grep -q '^strata_loopback_mpi' "$src/scripts/$s" ||
    fail "scripts/$s does not call strata_loopback_mpi"
done
echo "scripts/env.sh exports no interface restriction; the test scripts add it themselves"
