"""bench/wire/run's table: per layout and engine, strata's and Open MPI's allreduce times and the
share of the link bound each reached. Usage: report.py OUTDIR RATE (tc units: 2gbit, 500mbit)."""
import os
import re
import sys

out, rate_text = sys.argv[1], sys.argv[2]


def rate_bytes(text):
    m = re.fullmatch(r"([0-9.]+)([kmg]?)(bit|bps)", text.lower())
    if not m:
        sys.exit(f"report.py: cannot read the rate {text!r} (expected e.g. 2gbit, 500mbit)")
    scale = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)]
    value = float(m.group(1)) * scale
    return value / 8 if m.group(3) == "bit" else value  # tc's "bps" is bytes per second


rate = rate_bytes(rate_text)
print(f"# Inter-host allreduce against the link ({rate_text} = {rate / 1e6:.0f} MB/s per host "
      f"and direction, emulated hosts)\n")
tcp = [line.split() for line in open(os.path.join(out, "tcp.txt")) if line.strip()]
if tcp:
    rates = sorted(float(t[2]) for t in tcp)
    print(f"The link alone (one blocking TCP stream each way at once, {len(rates)} streams): "
          f"{rates[0]:.0f}-{rates[-1]:.0f} MB/s, {100 * rates[0] * 1e6 / rate:.0f}-"
          f"{100 * rates[-1] * 1e6 / rate:.0f}% of the rate.\n")
print("Link bound of an allreduce of S bytes: 2 S (H-1)/H / rate per host. Times in ms, "
      "out of place / in place; share = bound / time.\n")
print("| layout | engine | size | bound | strata | share of bound | MPI_Allreduce | strata vs MPI |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for layout in ("2x1", "2x2", "4x1"):
    hosts = int(layout.split("x")[0])
    for engine in ("mpi", "ucx", "mpi-nopipe", "ucx-nopipe", "ucx-pipe"):
        path = os.path.join(out, f"{layout}-{engine}", "perf.txt")
        if not os.path.exists(path):
            continue
        for line in open(path):
            f = line.split()
            if len(f) < 20 or not f[0].isdigit():
                continue
            size = int(f[0])
            s_oop, s_ip, m_oop, m_ip = float(f[5]), float(f[9]), float(f[13]), float(f[17])
            bound = 2 * size * (hosts - 1) / hosts / rate * 1e6
            share = f"{100 * bound / max(s_oop, s_ip):.0f}-{100 * bound / min(s_oop, s_ip):.0f}%"
            vs = min(m_oop, m_ip) / max(s_oop, s_ip)
            print(f"| {layout} | {engine} | {size >> 20} MiB | {bound / 1e3:.0f} | "
                  f"{s_oop / 1e3:.0f} / {s_ip / 1e3:.0f} | {share} | "
                  f"{m_oop / 1e3:.0f} / {m_ip / 1e3:.0f} | {vs:.2f}x |")
print("\n(strata vs MPI: MPI's better time over strata's worse one.)")


def rows(layout, run):
    """{size: (strata oop, strata ip, mpi oop, mpi ip)} of OUTDIR/<layout>-<run>/perf.txt."""
    path = os.path.join(out, f"{layout}-{run}", "perf.txt")
    found = {}
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            if len(f) >= 20 and f[0].isdigit():
                found[int(f[0])] = (float(f[5]), float(f[9]), float(f[13]), float(f[17]))
    return found


# Open MPI's best: the best MPI_Allreduce time of each setting (default: over every run of the
# layout, all of which measured it), against strata's worse time (out of place or in place).
for layout in ("2x1", "2x2", "4x1"):
    han, pml = rows(layout, "ompi-han"), rows(layout, "ompi-pmlucx")
    if not han and not pml:
        continue
    runs = [rows(layout, e) for e in ("mpi", "ucx", "mpi-nopipe", "ucx-nopipe")]
    print(f"\n## {layout}: strata against Open MPI's best (default, coll/han, pml ucx), ms\n")
    print("| size | default | coll/han | pml ucx | best | strata mpi engine | vs best | "
          "strata ucx engine | vs best |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size in sorted(runs[0]):
        default = min(min(r[size][2:]) for r in runs if size in r)
        h = min(han[size][2:]) if size in han else float("inf")
        p = min(pml[size][2:]) if size in pml else float("inf")
        best = min(default, h, p)
        cells = [f"{size >> 20} MiB", f"{default / 1e3:.0f}",
                 f"{h / 1e3:.0f}" if h != float("inf") else "-",
                 f"{p / 1e3:.0f}" if p != float("inf") else "-", f"{best / 1e3:.0f}"]
        for r in runs[:2]:
            worse = max(r[size][:2]) if size in r else float("nan")
            cells += [f"{worse / 1e3:.0f}", f"{best / worse:.2f}x"]
        print("| " + " | ".join(cells) + " |")
