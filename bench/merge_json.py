#!/usr/bin/env python3
"""Merges strata-perf --json files of one setting swept in parts (bench/run: small sizes with
many iterations, large ones with few) into one document on stdout: the first file's fields,
every file's rows in size order, and `sweeps` naming each part's sizes and iterations.

  bench/merge_json.py small.json large.json > setting.json
"""
import json
import sys


def main(paths):
    docs = []
    for p in paths:
        with open(p) as f:
            docs.append(json.load(f))
    out = dict(docs[0])
    rows = [r for d in docs for r in d["rows"]]
    sizes = [r["size"] for r in rows]
    if len(set(sizes)) != len(sizes):
        sys.exit(f"merge_json: the parts overlap in size: {sorted(sizes)}")
    out["rows"] = sorted(rows, key=lambda r: r["size"])
    out["minbytes"] = min(d["minbytes"] for d in docs)
    out["maxbytes"] = max(d["maxbytes"] for d in docs)
    out["sweeps"] = [{"minbytes": d["minbytes"], "maxbytes": d["maxbytes"], "iters": d["iters"],
                      "warmup": d["warmup"]} for d in docs]
    out["wrong_total"] = sum(d["wrong_total"] for d in docs)
    out["out_of_bounds"] = sum(d["out_of_bounds"] for d in docs)
    out["ok"] = all(d["ok"] for d in docs)
    errors = [d["error"] for d in docs if d.get("error")]
    out["error"] = "; ".join(errors) if errors else None
    # Averages over the whole sweep are not the parts' averages: recomputed by whoever needs
    # them from the rows.
    for key in ("avg_busbw", "avg_busbw_vs", "ratio_geomean"):
        out.pop(key, None)
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1:])
