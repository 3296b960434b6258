#!/usr/bin/env bash
# The runs behind README.md: 2 emulated hosts x 2 ranks (tools/netlab, 2 Gbit/s tbf links),
# strata's two inter-host engines alternated over two rounds, Open MPI's MPI_Allreduce in the
# same runs (--vs mpi). Small sizes with many iterations, large ones with few. Needs root.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
out="$(cd "$(dirname "$0")" && pwd)"
lab=ucxdefault
"$root/tools/netlab" up --name "$lab" --hosts 2 --rate 2gbit >/dev/null
trap '"$root/tools/netlab" down --name "$lab" >/dev/null 2>&1 || true' EXIT
for k in 1 2; do
  for net in mpi ucx; do
    for part in small large; do
      if [ "$part" = small ]; then sizes=(-b 8 -e 256K -f 8 -n 200 -w 50); else sizes=(-b 2M -e 64M -f 8 -n 3 -w 1); fi
      "$root/tools/netlab" run --name "$lab" --hosts 2 --ranks-per-host 2 -x STRATA_NET=$net -- \
        "$root/build/tools/strata-perf" --collective allreduce -d float -o sum -c 1 "${sizes[@]}" \
        --repeat 3 --vs mpi --json "$out/$net-$part-$k.json" > "$out/$net-$part-$k.txt" 2>&1
    done
  done
done
