#!/usr/bin/env python3
"""strata's column of two bench/run --quick runs before and two after issue 43's architecture
step, side by side per setting and size (usage: compare.py RESULTS_DIR)."""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)) + "/.."
RUNS = ["2026-11-29-arch-before", "2026-11-29-arch-before-2",
        "2026-11-29-arch-after", "2026-11-29-arch-after-2"]
UNITS = {"us": 1.0, "ms": 1000.0, "s": 1e6}


def strata_column(path):
    """{(setting, size): microseconds} from a results.md's tables (the 'strata' column)."""
    out, setting = {}, None
    for line in open(path):
        if line.startswith("## "):
            setting = line[3:].strip()
        m = re.match(r"\| (\d+ [KMG]?i?B) \| ([\d.]+) (us|ms|s) \|", line)
        if m and setting:
            out[(setting, m.group(1))] = float(m.group(2)) * UNITS[m.group(3)]
    return out


cols = [strata_column(os.path.join(ROOT, r, "results.md")) for r in RUNS]
keys = [k for k in cols[0] if all(k in c for c in cols)]
print("| setting | size | before 1 | before 2 | after 1 | after 2 | after/before (best of 2 each) |")
print("|---|---|---|---|---|---|---|")
ratios = []
for setting, size in keys:
    v = [c[(setting, size)] for c in cols]
    r = min(v[2:]) / min(v[:2])
    ratios.append(r)
    print(f"| {setting} | {size} | " + " | ".join(f"{x:.1f} us" for x in v) + f" | {r:.2f} |")
ratios.sort()
print(f"\n{len(ratios)} sizes; after/before median {ratios[len(ratios) // 2]:.2f}, "
      f"range {ratios[0]:.2f}-{ratios[-1]:.2f}")
