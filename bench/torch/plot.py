#!/usr/bin/python3
"""Plots of bench/torch/run's results: bench/torch/plot.py DIR writes DIR/torch-<model>.png per
model: per setting, iteration time per config split into compute (the nocomm run's iteration)
and synchronisation overhead, and below it the loss per epoch of each DDP config."""
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import CONFIGS, load  # noqa: E402

TITLES = {"a": "1 host x 4 ranks", "b": "2 emulated hosts x 2 ranks"}


def main():
    d = sys.argv[1]
    runs = load(d)
    for model in sorted({m for _, m in runs}):
        settings = sorted(s for s, m in runs if m == model)
        fig, axes = plt.subplots(2, len(settings), figsize=(6 * len(settings), 8), squeeze=False)
        for col, s in enumerate(settings):
            group = runs[(s, model)]
            names = [c for c in CONFIGS if c in group and c != "nocomm"]
            base = group["nocomm"]["iter_ms"] if "nocomm" in group else 0.0
            iters = [group[c]["iter_ms"] for c in names]
            ax = axes[0][col]
            ax.bar(names, [base] * len(names), label="compute (nocomm run)", color="#999999")
            ax.bar(names, [max(0.0, t - base) for t in iters], bottom=[base] * len(names),
                   label="sync overhead", color="#d95f02")
            ax.set_ylabel("ms per iteration")
            ax.set_title("%s, %s" % (model, TITLES.get(s, s)))
            ax.tick_params(axis="x", rotation=30)
            ax.legend()
            ax = axes[1][col]
            for c in names:
                ep = group[c]["epochs"]
                ax.plot([e["epoch"] for e in ep], [e["loss"] for e in ep], marker="o", label=c)
            ax.set_xlabel("epoch")
            ax.set_ylabel("training loss (mean over ranks)")
            ax.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(d, "torch-%s.png" % model), dpi=80)
        plt.close(fig)


if __name__ == "__main__":
    main()
