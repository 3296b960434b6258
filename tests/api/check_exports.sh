#!/usr/bin/env bash
# libstrata.so exports the C API and nothing else: every dynamic symbol it defines starts with
# "strata", and every function the public headers declare with STRATA_API is among them.
#   check_exports.sh <libstrata.so> <include dir>
set -euo pipefail
lib=$1
include=$2
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort -u)
bad=$(grep -v '^strata' <<<"$exported" || true)
if [ -n "$bad" ]; then
  echo "FAIL: libstrata.so exports symbols outside the API:"
  echo "$bad" | head -20
  exit 1
fi
declared=$(grep -ho 'STRATA_API [^(]*strata[A-Za-z0-9_]*(' "$include"/strata/*.h | sed -E 's/.*[ *](strata[A-Za-z0-9_]*)\($/\1/' | sort -u)
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
if [ -n "$missing" ]; then
  echo "FAIL: declared in include/strata but not exported:"
  echo "$missing"
  exit 1
fi
echo "ok: $(wc -l <<<"$exported") symbols, all strata*, every declared function exported"
