#!/usr/bin/env python3
"""Writes results.md (to stdout) for a bench/ucx/run folder: per size, strata's time with the
MPI engine (strataCommInitMPI) and with the ucx engine (strataCommInitRank, --uid), each as a
fraction of the link-bound limit, their ratio, and MPI_Allreduce's time from the same runs.

  bench/ucx/report.py bench/results/<label> > results.md

Times are medians over every round's repetitions (out of place). The link-bound limit of an
allreduce of S bytes over H hosts with one link of rate B per direction is 2*S*(H-1)/H / B
(bench/report.py says why). Target (issue 25): the ucx engine no slower than the MPI engine
from 1 MiB up; "ratio" = mpi-engine time / ucx-engine time (>= 1: ucx as fast or faster).
Python 3 standard library only.
"""
import glob
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import report  # noqa: E402  (bench/report.py: shared loaders and formats)

MIB = 1 << 20


def samples(folder, engine, impl):
    """size -> every out-of-place sample (us) of `impl` over the engine's rounds; and #wrong."""
    out, wrong = {}, 0
    for path in sorted(glob.glob(os.path.join(folder, f"engine-{engine}-*.json"))):
        for size, row in report.rows_by_size(report.load(path)).items():
            m = report.meas(row, impl)
            if m is None:
                continue
            out.setdefault(size, []).extend(m.get("samples_us") or [m["time_us"]])
            wrong += m.get("wrong") or 0
    return out, wrong


def main():
    folder = sys.argv[1]
    setting = dict(line.rstrip("\n").split("\t") for line in open(os.path.join(folder,
                                                                             "setting.tsv")))
    hosts, rate_bits = int(setting["hosts"]), int(setting["rate_bits"])
    mpi_e, w1 = samples(folder, "mpi", "strata")
    ucx_e, w2 = samples(folder, "ucx", "strata")
    mpi_a, w3 = samples(folder, "mpi", "vs")
    mpi_b, w4 = samples(folder, "ucx", "vs")
    md = [f"# strata's inter-host engines: mpi and ucx ({os.path.basename(folder)})", ""]
    md += [f"{hosts} emulated hosts (tools/netlab) x {setting['ranks_per_host']} ranks, links "
           f"of {setting['rate']} per direction; `bench/ucx/run` (the command lines are in the "
           "`engine-*.txt` headers). Times are medians of every repetition of every round, out "
           "of place, float32 sum. Link-bound limit = 2·S·(H−1)/H / rate: the least time the "
           "inter-host bytes need on the links.", ""]
    md += ["| size | limit | strata, mpi engine | % of limit | strata, ucx engine | % of limit "
           "| ratio mpi/ucx | MPI_Allreduce |", "|---|---|---|---|---|---|---|---|"]
    failed = []
    for size in sorted(set(mpi_e) & set(ucx_e)):
        a, b = statistics.median(mpi_e[size]), statistics.median(ucx_e[size])
        ref = statistics.median(mpi_a.get(size, []) + mpi_b.get(size, [])) if (
            size in mpi_a or size in mpi_b) else None
        limit = 2 * size * (hosts - 1) / hosts / (rate_bits / 8 / 1e6)
        ratio = a / b
        if size >= MIB and ratio < 1:
            failed.append(report.size_text(size))
        md.append(f"| {report.size_text(size)} | {report.fmt_t(limit)} | {report.fmt_t(a)} | "
                  f"{report.fmt_pct(limit / a)} | {report.fmt_t(b)} | {report.fmt_pct(limit / b)} "
                  f"| {ratio:.2f} | {report.fmt_t(ref)} |")
    md += ["", f"Wrong values (`-c 1`): {w1 + w2 + w3 + w4}.", ""]
    md += ["**Target: the ucx engine no slower than the mpi engine from 1 MiB up:** " +
           ("met." if not failed else "missed at " + ", ".join(failed) + "."), ""]
    md += ["![busbw against size](engines.png)", "", "## Machine", ""]
    md += [f"- {k}: {v}" for k, v in report.machine(os.path.join(folder, "..", "..", ".."))]
    print("\n".join(md))


if __name__ == "__main__":
    main()
