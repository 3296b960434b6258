#!/usr/bin/env python3
"""A parser of nccl-tests' all_reduce_perf output, written from nccl-tests' own printf formats
(src/common.cu: the "# nThread" line, "# Using devices" and its "#  Rank" lines, the three
'#' column-header lines, one row per size -- size count type redop root, then time algbw busbw
#wrong out of place and again in place -- and the "# Out of bounds values" and "# Avg bus
bandwidth" lines). It reads the output the way scripts that drive nccl-tests do: '#' lines it
does not know are skipped, lines before the column header that are not '#' (NCCL's "NCCL
version" line) too; everything it does know must be exactly in place.

  nccltests_parse.py FILE [--ranks N] [--rows N]

Checks, beyond the layout: one "# Rank" line per rank (nThread * nGpus per process); the sizes
are minBytes stepped by the factor (or the step) up to maxBytes, one row each; all-reduce's size
is count * the type's size and busbw = algbw * 2(n-1)/n; #wrong is 0; "Avg bus bandwidth" is
the mean busbw of every row, out of place and in place (to the printed rounding). Prints what
it found as JSON; exits 1, naming the line, on anything else.
"""
import json
import re
import sys

HEADER = re.compile(
    r"^# nThread (\d+) nGpus (\d+) minBytes (\d+) maxBytes (\d+) step: (\d+)\((factor|bytes)\) "
    r"warmup iters: (\d+) iters: (\d+) agg iters: (\d+) validation: (\d+) graph: (\d+)")
RANK = re.compile(r"^#\s+Rank\s+(\d+)\s+Group\s+(\d+)\s+Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+"
                  r"(\d+)\s+\[([^\]]*)\]\s+(.+)$")
COLUMNS = re.compile(r"^#\s+size\s+count\s+type\s+redop\s+root(\s+(c?p?u?time)\s+algbw\s+busbw"
                     r"\s+#wrong){2}\s*$")
UNITS = re.compile(r"^#\s+\(B\)\s+\(elements\)(\s+\(us\)\s+\(GB/s\)\s+\(GB/s\)){2}\s*$")
OOB = re.compile(r"^# Out of bounds values : (\d+) (OK|FAILED)\s*$")
AVG = re.compile(r"^# Avg bus bandwidth    : ([0-9.eE+-]+)\s*(OK|FAILED)?\s*$")
NUMBER = r"([0-9.eE+-]+)"
ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\w+)\s+(\w+)\s+(-?\d+)" +
                 (r"\s+" + NUMBER + r"\s+" + NUMBER + r"\s+" + NUMBER + r"\s+(\d+|N/A)") * 2 +
                 r"\s*$")
TYPE_SIZE = {"int8": 1, "uint8": 1, "char": 1, "int32": 4, "uint32": 4, "int": 4, "int64": 8,
             "uint64": 8, "half": 2, "float": 4, "double": 8, "bfloat16": 2}


class ParseError(Exception):
    pass


def parse(lines):
    d = {"ranks": [], "rows": []}
    state = "start"  # start, devices, table, done
    for number, line in enumerate(lines, 1):
        line = line.rstrip("\n")

        def bad(what):
            raise ParseError(f"line {number}: {what}: {line!r}")

        m = HEADER.match(line)
        if m:
            keys = ("nthread", "ngpus", "minbytes", "maxbytes", "step", "step_kind",
                    "warmup_iters", "iters", "agg_iters", "validation", "graph")
            d["header"] = {k: (v if k == "step_kind" else int(v)) for k, v in zip(keys, m.groups())}
            continue
        if line == "# Using devices":
            state = "devices"
            continue
        m = RANK.match(line)
        if m:
            if state != "devices":
                bad("a Rank line outside '# Using devices'")
            d["ranks"].append({"rank": int(m[1]), "group": int(m[2]), "pid": int(m[3]),
                               "host": m[4], "device": int(m[5]), "bus": m[6], "name": m[7]})
            continue
        if COLUMNS.match(line):
            if "header" not in d:
                bad("the column header before the '# nThread' line")
            d["time_column"] = line.split()[6]
            state = "units"
            continue
        if state == "units":
            if not UNITS.match(line):
                bad("the units line does not follow the column header")
            state = "table"
            continue
        m = OOB.match(line)
        if m:
            d["out_of_bounds"], d["oob_verdict"] = int(m[1]), m[2]
            state = "done"
            continue
        m = AVG.match(line)
        if m:
            d["avg_busbw"] = float(m[1])
            continue
        if line.startswith("#") or not line.strip():
            continue
        if state != "table":
            if state in ("start", "devices"):
                continue  # e.g. "NCCL version 2.18.3+cuda12.2"
            bad("a row after the table")
        m = ROW.match(line)
        if not m:
            bad("not a row of size count type redop root time algbw busbw #wrong x 2")
        g = m.groups()
        row = {"size": int(g[0]), "count": int(g[1]), "type": g[2], "redop": g[3],
               "root": int(g[4])}
        for i, placement in enumerate(("oop", "ip")):
            t, alg, bus, wrong = g[5 + 4 * i: 9 + 4 * i]
            row[placement] = {"time": float(t), "algbw": float(alg), "busbw": float(bus),
                              "wrong": None if wrong == "N/A" else int(wrong)}
        d["rows"].append(row)
    return d


def check(d, ranks=None, rows=None):
    for key in ("header", "time_column", "out_of_bounds", "avg_busbw"):
        if key not in d:
            raise ParseError(f"no {key} found")
    h = d["header"]
    if ranks is not None and len(d["ranks"]) != ranks:
        raise ParseError(f"{len(d['ranks'])} Rank lines, expected {ranks}")
    if [r["rank"] for r in d["ranks"]] != list(range(len(d["ranks"]))):
        raise ParseError("Rank lines are not ranks 0, 1, ... in order")
    n = len(d["ranks"])
    # The sweep: nccl-tests' loop, size *= factor (factor > 1) or size += step.
    sizes, s = [], h["minbytes"]
    while s <= h["maxbytes"] and len(sizes) < 10000:
        sizes.append(s)
        s = s * h["step"] if h["step_kind"] == "factor" else s + h["step"]
    if rows is not None and len(d["rows"]) != rows:
        raise ParseError(f"{len(d['rows'])} rows, expected {rows}")
    if len(d["rows"]) != len(sizes):
        raise ParseError(f"{len(d['rows'])} rows for the {len(sizes)} sizes of the header")
    total = 0.0
    for want, r in zip(sizes, d["rows"]):
        ts = TYPE_SIZE.get(r["type"])
        if ts is None:
            raise ParseError(f"unknown type {r['type']}")
        # all_reduce: count = size / type size, the size column count * type size.
        if r["count"] != want // ts or r["size"] != r["count"] * ts:
            raise ParseError(f"row {r['size']}: count {r['count']} is not {want} B of {r['type']}")
        for p in ("oop", "ip"):
            m = r[p]
            if m["wrong"] != 0:
                raise ParseError(f"row {r['size']} {p}: #wrong {m['wrong']}")
            if m["time"] <= 0:
                raise ParseError(f"row {r['size']} {p}: time {m['time']}")
            # busbw = algbw * 2(n-1)/n, both printed with 2 decimals (each off by 0.005).
            factor = 2 * (n - 1) / n
            if abs(m["busbw"] - m["algbw"] * factor) > 0.005 * (1 + factor) + 1e-3 * m["busbw"]:
                raise ParseError(f"row {r['size']} {p}: busbw {m['busbw']} is not algbw "
                                 f"{m['algbw']} * 2({n}-1)/{n}")
            total += m["busbw"]
    mean = total / (2 * len(d["rows"]))
    if abs(mean - d["avg_busbw"]) > 0.006 + 1e-4 * mean:
        raise ParseError(f"Avg bus bandwidth {d['avg_busbw']} is not the rows' mean {mean:.4f}")
    if d["out_of_bounds"] != 0 or d["oob_verdict"] != "OK":
        raise ParseError("Out of bounds values is not 0 OK")


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    path, opts = args[0], dict(zip(args[1::2], args[2::2]))
    try:
        with open(path) as f:
            d = parse(f)
        check(d, ranks=int(opts["--ranks"]) if "--ranks" in opts else None,
              rows=int(opts["--rows"]) if "--rows" in opts else None)
    except ParseError as e:
        print(f"nccltests_parse: {path}: {e}", file=sys.stderr)
        return 1
    print(json.dumps({"header": d["header"], "ranks": len(d["ranks"]), "rows": len(d["rows"]),
                      "time_column": d["time_column"], "avg_busbw": d["avg_busbw"],
                      "out_of_bounds": d["out_of_bounds"],
                      "hosts": sorted({r["host"] for r in d["ranks"]})}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
