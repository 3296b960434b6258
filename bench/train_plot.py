#!/usr/bin/python3
"""Bar charts of bench/train's results: bench/train_plot.py DIR. For each strata-train JSON of
DIR (with its -fp16links companion), DIR/<name>.png shows ms per iteration by column (gnuplot)."""
import json
import os
import subprocess
import sys


def main():
    d = sys.argv[1]
    for f in sorted(os.listdir(d)):
        if not f.endswith(".json") or f.startswith("c-") or f.endswith("-fp16links.json"):
            continue
        data = json.load(open(os.path.join(d, f)))
        cols = [(c["column"], c["ms"]) for c in data["columns"]]
        extra = os.path.join(d, f.replace(".json", "-fp16links.json"))
        if os.path.exists(extra):
            cols += [(c["column"] + "+fp16links", c["ms"]) for c in json.load(open(extra))["columns"]]
        wl = os.path.basename(data["workload"]).replace(".txt", "")
        title = "%s: %d ranks on %d host(s), ms per iteration (lower is better)" % (
            wl, data["nranks"], data["nhosts"])
        rows = "\n".join('"%s" %.3f' % c for c in cols)
        script = "\n".join([
            "set terminal pngcairo size 900,480",
            "set output '%s'" % os.path.join(d, f.replace(".json", ".png")),
            "set title '%s'" % title, "set style fill solid 0.7", "set boxwidth 0.7",
            "set ylabel 'ms per iteration'", "set grid ytics", "set xtics rotate by -30",
            "set yrange [0:*]", "$d << EOD", rows, "EOD",
            "plot $d using 0:2:xtic(1) with boxes notitle"])
        subprocess.run(["gnuplot"], input=script, text=True, check=True)


if __name__ == "__main__":
    main()
