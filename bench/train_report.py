#!/usr/bin/python3
"""Renders bench/train's results folder as Markdown: bench/train_report.py DIR RATE > train.md.

Reads strata-train's JSON (a-<workload>.json, b-<workload>.json, b-<workload>-fp16links.json)
and strata-perf's (c-sweep-none.json, c-sweep-fp16.json); checks issue 13's targets.
"""
import json
import os
import sys

LABELS = {
    "mpi": "one MPI_Allreduce per tensor",
    "strata": "one strataAllReduce per tensor",
    "group": "strata group (fused)",
    "nonblocking": "strataIAllReduce per tensor (fused by agreement)",
    "whole-fp16": "fp16 everywhere (Horovod-style), fused",
    "csc": "CSC, 10% of 32K-element chunks",
}


def load(path):
    with open(path) as f:
        return json.load(f)


def rows_of(d, suffix=""):
    return [dict(c, column=c["column"] + suffix) for c in d["columns"]]


def table(rows, base_ms):
    out = ["| column | what | ms / iteration | speedup vs MPI per tensor | inter-host MB / iteration | #wrong |",
           "|---|---|---:|---:|---:|---:|"]
    for r in rows:
        name = r["column"]
        what = LABELS.get(name.split(" ")[0], "")
        if "+fp16" in name:
            what += ", STRATA_COMPRESS=fp16 (fp16 between hosts only)"
        mb = "-" if r["inter_host_bytes"] < 0 else "%.1f" % (r["inter_host_bytes"] / 1e6)
        wrong = "-" if r["wrong"] < 0 else str(r["wrong"])
        out.append("| %s | %s | %.2f | %.2fx | %s | %s |" % (
            name, what, r["ms"], base_ms / r["ms"], mb, wrong))
    return "\n".join(out)


def main():
    d, rate = sys.argv[1], sys.argv[2]
    files = sorted(os.listdir(d))
    print("# Training-step communication (bench/train)\n")
    print("Each iteration allreduces every gradient tensor of the model once (float32 sum, in "
          "place, backward order); times are the median iteration of the slowest rank. "
          "Inter-host bytes are what both hosts' links sent per iteration (eth0 tx counters, "
          "headers included). `#wrong`: elements that differ from the exact sum (csc is not "
          "checked: it sends only the selected chunks). Machine: `machine.txt`.\n")
    targets = []
    for f in files:
        if not (f.startswith("a-") or f.startswith("b-")) or not f.endswith(".json"):
            continue
        if f.endswith("-fp16links.json"):
            continue
        data = load(os.path.join(d, f))
        rows = rows_of(data)
        extra = f.replace(".json", "-fp16links.json")
        if extra in files:
            rows += rows_of(load(os.path.join(d, extra)), " +fp16 links")
        base = next((r["ms"] for r in rows if r["column"] == "mpi"), rows[0]["ms"])
        setting = ("(a) 1 host x %d ranks" % data["nranks"]) if f.startswith("a-") else \
            ("(b) %d emulated hosts x %d ranks, %s links" % (
                data["nhosts"], data["nranks"] // max(1, data["nhosts"]), rate))
        wl = os.path.basename(data["workload"]).replace(".txt", "")
        print("## %s: %s (%d tensors, %.1f M parameters)\n" % (
            setting, wl, data["tensors"], data["elements"] / 1e6))
        print(table(rows, base))
        print()
        if f.startswith("b-") and wl == "resnet50":
            by = {r["column"]: r for r in rows}
            if "group" in by and "mpi" in by:
                s = by["mpi"]["ms"] / by["group"]["ms"]
                targets.append(("fused >= 3x faster than one MPI_Allreduce per tensor (ResNet-50, "
                                "2-host lab)", "%.2fx" % s, s >= 3))
            if "csc" in by and "group" in by and by["group"]["inter_host_bytes"] > 0:
                frac = by["csc"]["inter_host_bytes"] / by["group"]["inter_host_bytes"]
                targets.append(("CSC at 10% moves <= 15% of the dense bytes across hosts",
                                "%.1f%%" % (100 * frac), frac <= 0.15))
    sweep = {}
    for c in ("none", "fp16"):
        p = os.path.join(d, "c-sweep-%s.json" % c)
        if os.path.exists(p):
            sweep[c] = {row["size"]: row["strata"]["oop"]["time_us"] for row in load(p)["rows"]}
    if len(sweep) == 2:
        print("## (c) 2 emulated hosts x 2 ranks, %s links: allreduce with STRATA_COMPRESS\n" % rate)
        print("| size | float32 (us) | fp16 between hosts (us) | speedup |")
        print("|---:|---:|---:|---:|")
        big = []
        for size in sorted(sweep["none"]):
            if size not in sweep["fp16"]:
                continue
            a, b = sweep["none"][size], sweep["fp16"][size]
            print("| %d | %.0f | %.0f | %.2fx |" % (size, a, b, a / b))
            if size >= 16 << 20:
                big.append(a / b)
        print()
        if big:
            targets.append(("fp16 on the slow level >= 1.5x faster than float32 at 16 MiB and "
                            "above", ", ".join("%.2fx" % x for x in big), min(big) >= 1.5))
    if targets:
        print("## Targets (issue 13)\n")
        print("| target | measured | met |")
        print("|---|---|---|")
        for name, value, ok in targets:
            print("| %s | %s | %s |" % (name, value, "yes" if ok else "**no**"))
        print()


if __name__ == "__main__":
    main()
