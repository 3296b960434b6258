#!/usr/bin/env python3
"""Writes results.md (to stdout) for a bench/run results folder: one table per setting and the
Targets check. Reads the folder's manifest.tsv and the strata-perf JSON files it names.

  bench/report.py bench/results/<label> [--quick 0|1] > results.md

Times are the out-of-place medians over the repetitions (strata-perf --repeat). strata's time comes
from the plain run (--vs mpi, MPI side = Open MPI's default MPI_Allreduce); "han" is the MPI
side of the run with --mca coll_han_priority 100 (its strata columns are not used).
ratio = best(default, han) / strata (> 1: strata faster); its spread is min-max of the same
ratio computed per repetition from samples_us. The link-bound limit of an allreduce of S bytes
over H hosts, each with one link of rate B per direction: every host must send (and receive)
(H-1)/H*S for the reduce-scatter and (H-1)/H*S for the all-gather, so
limit = 2*S*(H-1)/H / B; "% of limit" = limit / time.

Settings (d) and (e), listed in extra.tsv when bench/run made them: strata's blocking vs
nonblocking allreduce latency per call on one host (strata-perf --nonblocking; the difference
nonblocking - blocking per call is checked against 5 us), and the fraction of a 16 MiB
allreduce hidden behind an equal computation (strata-perf --overlap; reported, no target).
Python 3 standard library only.
"""
import argparse
import csv
import datetime
import json
import os
import platform
import subprocess
import sys

KIB, MIB = 1 << 10, 1 << 20
PLACEMENT = "oop"
NONBLOCKING_LIMIT_US = 5.0


def size_text(b):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift} {unit}"
    return f"{b} B"


def run(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        return (r.stdout or r.stderr).strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine(root):
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "unknown"
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / (1 << 20):.1f} GiB"
                break
    except OSError:
        pass
    ompi = run(["ompi_info", "--version"]).splitlines()
    ompi = ompi[0] if ompi else (run(["mpirun", "--version"]).splitlines() or ["unknown"])[0]
    commit = run(["git", "-C", root, "rev-parse", "HEAD"]) or "unknown"
    return [("CPU", cpu), ("cores", str(os.cpu_count())), ("memory", mem),
            ("kernel", f"{platform.system()} {platform.release()}"), ("Open MPI", ompi),
            ("commit", commit)]


def load(path):
    with open(path) as f:
        return json.load(f)


def rows_by_size(doc):
    return {r["size"]: r for r in doc["rows"]} if doc else {}


def meas(row, impl):
    m = ((row or {}).get(impl) or {}).get(PLACEMENT)
    return m if m and m.get("time_us") else None


def fmt_t(us):
    if us is None:
        return "-"
    return f"{us / 1000:.2f} ms" if us >= 10000 else f"{us:.1f} us"


def fmt_pct(x):
    return "-" if x is None else f"{100 * x:.0f}%"


def analyse(setting, ddoc, hdoc):
    """One dict per size: times, ratio with spread, fractions of the link limit."""
    hosts, rate_bits = int(setting["hosts"]), int(setting["rate_bits"])
    drows, hrows = rows_by_size(ddoc), rows_by_size(hdoc)
    out = []
    for size in sorted(drows):
        s, d, h = meas(drows[size], "strata"), meas(drows[size], "vs"), meas(hrows.get(size), "vs")
        if s is None:
            continue
        mpis = [m["time_us"] for m in (d, h) if m]
        best = min(mpis) if mpis else None
        ratio = best / s["time_us"] if best else None
        per = []
        ss, ds = s.get("samples_us") or [], (d or {}).get("samples_us") or []
        hs = (h or {}).get("samples_us") or []
        for i, st in enumerate(ss):
            cand = [x[i] for x in (ds, hs) if i < len(x)]
            if cand and st > 0:
                per.append(min(cand) / st)
        limit = None
        if hosts > 1 and rate_bits > 0:
            limit = 2 * size * (hosts - 1) / hosts / (rate_bits / 8 / 1e6)  # us
        frac = lambda m: (limit / m["time_us"]) if (limit and m) else None
        out.append(dict(size=size, strata=s["time_us"], default=d and d["time_us"],
                        han=h and h["time_us"], best=best, ratio=ratio,
                        rmin=min(per) if per else None, rmax=max(per) if per else None,
                        limit=limit, f_strata=frac(s), f_default=frac(d), f_han=frac(h),
                        wrong=(s.get("wrong") or 0) + ((d or {}).get("wrong") or 0)
                        + ((h or {}).get("wrong") or 0)))
    return out


def table(rows, multi):
    head = ["size", "strata", "MPI default", "MPI han", "best/strata (min-max)"]
    if multi:
        head += ["limit", "strata % of limit", "default % of limit", "han % of limit"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        if r["rmin"] is not None:
            ratio += f" ({r['rmin']:.2f}-{r['rmax']:.2f})"
        cells = [size_text(r["size"]), fmt_t(r["strata"]), fmt_t(r["default"]), fmt_t(r["han"]),
                 ratio]
        if multi:
            cells += [fmt_t(r["limit"]), fmt_pct(r["f_strata"]), fmt_pct(r["f_default"]),
                      fmt_pct(r["f_han"])]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def check(name, items, ok, describe, empty="no size in range was measured"):
    """items: [(label, value)], ok(value) -> bool. Returns Markdown lines."""
    if not items:
        return [f"- **{name}**: N/A ({empty})"]
    bad = [(l, v) for l, v in items if not ok(v)]
    verdict = "MET" if not bad else "NOT MET"
    text = f"- **{name}**: **{verdict}** ({len(items) - len(bad)}/{len(items)} sizes pass). "
    text += describe(items, bad)
    return [text]


def load_extra(folder):
    """[(row of extra.tsv, JSON document)] for settings (d) and (e); [] for older folders."""
    path = os.path.join(folder, "extra.tsv")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return [(r, load(os.path.join(folder, r["json"]))) for r in rows]


def progress_text(doc):
    on = doc.get("progress_thread")
    return "on" if on else f"**off** ({doc.get('thread_level', '?')})"


def fmt_delta(us):
    return "-" if us is None else f"{us:+.2f} us"


def nonblocking_section(extra):
    """Markdown lines for (d) and the items [(label, delta_us)] of its target."""
    docs = [(st, d) for st, d in extra if st["kind"] == "nonblocking"]
    if not docs:
        return [], []
    md = ["## (d) Blocking vs nonblocking allreduce latency, one host", "",
          "`strata-perf --nonblocking --inflight 1`: every timed iteration is one "
          "`strataIAllReduce` then `strataWait`, alternating every repeat with `strataAllReduce` "
          "on the same buffers; per call, median over repetitions of the mean over ranks. "
          "nb - bl > 0: the nonblocking path costs more.", "",
          "| setting | size | blocking oop | nonblocking oop | nb - bl oop | blocking ip | "
          "nonblocking ip | nb - bl ip | progress thread | wrong |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    items = []
    for st, d in docs:
        for r in d["rows"]:
            cells = [st["title"], size_text(r["size"])]
            for p in ("oop", "ip"):
                b = (r.get("strata") or {}).get(p) or {}
                n = (r.get("nonblocking") or {}).get(p) or {}
                delta = r.get("delta_us_" + p)
                cells += [fmt_t(b.get("time_us")), fmt_t(n.get("time_us")), fmt_delta(delta)]
                if p == PLACEMENT and delta is not None:
                    items.append((f"{size_text(r['size'])}, {d['nranks']} ranks", delta))
            wrong = sum((((r.get(i) or {}).get(p) or {}).get("wrong") or 0)
                        for i in ("strata", "nonblocking") for p in ("oop", "ip"))
            cells += [progress_text(d), str(wrong)]
            md.append("| " + " | ".join(cells) + " |")
    md.append("")
    return md, items


def overlap_section(extra):
    """Markdown lines for (e) and [(label, fraction, raw)] for the Targets list."""
    docs = [(st, d) for st, d in extra if st["kind"] == "overlap"]
    if not docs:
        return [], []
    md = ["## (e) Overlap of a nonblocking allreduce with computation", "",
          "`strata-perf --overlap`: t_coll = `strataAllReduce` alone; t_comp = a CPU-bound loop "
          "alone (no strata or MPI call), calibrated on each rank to its t_coll; t_both = "
          "`strataIAllReduce`, the loop, `strataWait`. hidden = (t_coll + t_comp - t_both) / "
          "t_coll, clamped to [0, 1]; raw = unclamped. On a machine with fewer cores than ranks "
          "x 2 (caller and progress thread), the progress thread competes with the loop.", "",
          "| setting | size | t_coll | t_comp | t_both | hidden | raw | progress thread | "
          "compute ok | wrong |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    items = []
    for st, d in docs:
        for r in d["rows"]:
            o = r.get("overlap") or {}
            md.append("| " + " | ".join([
                st["title"], size_text(r["size"]), fmt_t(o.get("t_coll_us")),
                fmt_t(o.get("t_comp_us")), fmt_t(o.get("t_both_us")),
                f"{o.get('fraction_hidden', 0):.2f}", f"{o.get('fraction_hidden_raw', 0):.2f}",
                progress_text(d), "yes" if o.get("compute_ok") else "**no**",
                str(o.get("wrong"))]) + " |")
            items.append((f"{size_text(r['size'])}, {d['nranks']} ranks",
                          o.get("fraction_hidden"), o.get("fraction_hidden_raw")))
    md.append("")
    return md, items


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--quick", default="0")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(a.folder, "manifest.tsv")) as f:
        settings = list(csv.DictReader(f, delimiter="\t"))

    results = []
    for st in settings:
        ddoc = load(os.path.join(a.folder, st["default_json"]))
        hpath = os.path.join(a.folder, st["han_json"])
        hdoc = load(hpath) if os.path.exists(hpath) else None
        results.append((st, ddoc, hdoc, analyse(st, ddoc, hdoc)))

    md = [f"# strata vs Open MPI allreduce (float32 sum): {os.path.basename(os.path.abspath(a.folder))}", ""]
    if a.quick == "1":
        md += ["**Quick smoke run** (`bench/run --quick`): few sizes, iterations and repetitions; "
               "not for conclusions.", ""]
    md += ["| | |", "|---|---|",
           f"| date | {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')} |"]
    md += [f"| {k} | {v} |" for k, v in machine(root)]
    if results:
        d0 = results[0][1]
        md.append(f"| strata-perf | {d0.get('version')}, {PLACEMENT} (out-of-place) medians over "
                  f"-R {d0.get('repeat')} repetitions, -c {d0.get('check')} |")
    md += ["", "## Method", "",
           "- Each setting runs `strata-perf --collective allreduce -d float -o sum -c 1 --vs mpi --repeat N` twice: "
           "plain (MPI side = Open MPI's default `MPI_Allreduce`, *default*) and with "
           "`--mca coll_han_priority 100 --vs-label han` (MPI side = Open MPI coll/han, *han*). "
           "strata's times come from the plain run; of the han run only the MPI columns are used.",
           "- Times: median over repetitions of the mean time per call over ranks, out-of-place. "
           "ratio = best(default, han) / strata (> 1: strata faster); the spread (min-max) is the "
           "same ratio computed per repetition from `samples_us`.",
           "- (a) runs under `mpiexec --oversubscribe` with `scripts/env.sh`'s environment. "
           "(b)/(c) run on emulated hosts (`tools/netlab`, 2 ranks per host, shared memory "
           "within a host, TCP over tc-tbf shaped links between hosts). **No link delay**: this "
           "kernel has no netem, so the links have a rate only (latency is the veth/TCP stack's). "
           "All emulated hosts share this machine's cores; a program sees 92-96 % of the "
           "configured rate as TCP payload.",
           "- Link-bound limit = 2·S·(H−1)/H bytes per host link direction / rate "
           "(reduce-scatter plus all-gather over each host's one link); "
           "% of limit = limit / time (100 % = the link is the only cost).",
           ""]
    for st, ddoc, hdoc, rows in results:
        multi = int(st["hosts"]) > 1
        md += [f"## {st['title']}", ""]
        iters = (", ".join(f"-n {s['iters']} -w {s['warmup']} from {size_text(s['minbytes'])} to "
                           f"{size_text(s['maxbytes'])}" for s in ddoc["sweeps"])
                 if "sweeps" in ddoc else f"-n {ddoc['iters']} -w {ddoc['warmup']}")
        md.append(f"{ddoc['nranks']} ranks on {ddoc['nhosts']} host(s); "
                  f"{iters}, --repeat {ddoc['repeat']}"
                  + (f"; link rate {st['rate_text']} = {int(st['rate_bits']) / 8e6:.1f} MB/s per direction"
                     if multi else "")
                  + f". Files: `{st['default_json']}`, `{st['han_json']}`, plot `{st['setting']}.png`.")
        if hdoc is None:
            txt = os.path.join(a.folder, st["han_json"][:-5] + ".txt")
            why = ""
            if os.path.exists(txt):
                bad = [l.strip() for l in open(txt, errors="replace")
                       if "Segmentation fault" in l or "error" in l.lower()]
                why = f": `{bad[0][:160]}`" if bad else ""
            md.append(f"**The coll/han run failed{why}** (log `{st['han_json'][:-5]}.txt`); "
                      "no han column, best = default.")
        wrong = sum(r["wrong"] for r in rows)
        if wrong or not ddoc.get("ok", True) or (hdoc and not hdoc.get("ok", True)):
            md.append(f"**Validation: {wrong} wrong elements / a run reported not ok.**")
        md += [""] + table(rows, multi) + ["", f"![{st['title']}]({st['setting']}.png)", ""]

    extra = load_extra(a.folder)
    nb_md, nb_items = nonblocking_section(extra)
    ov_md, ov_items = overlap_section(extra)
    md += nb_md + ov_md

    # Targets.
    md += ["## Targets", "", "Checked on the medians; float32 sum, out-of-place.", ""]
    big = [(f"{size_text(r['size'])}, {st['title']}", r) for st, _, _, rows in results
           if int(st["hosts"]) > 1 for r in rows if 16 * MIB <= r["size"] <= 64 * MIB]
    one = [(f"{size_text(r['size'])}, {st['title']}", r) for st, _, _, rows in results
           if int(st["hosts"]) == 1 for r in rows if 8 <= r["size"] <= 64 * MIB]
    small = [(f"{size_text(r['size'])}, {st['title']}", r) for st, _, _, rows in results
             for r in rows if r["size"] <= 64 * KIB]

    def worst(items, key, lowest=True):
        v = [(l, r[key]) for l, r in items if r[key] is not None]
        return (min if lowest else max)(v, key=lambda x: x[1]) if v else None

    def ratio_desc(need):
        def f(items, bad):
            w = min(items, key=lambda x: x[1])
            s = f"Worst: {w[1]:.2f}x at {w[0]} (target {need:.2f}x"
            return s + (f", gap {need - w[1]:.2f}x)." if w[1] < need else ").")
        return f

    items = [(l, r["ratio"]) for l, r in big if r["ratio"] is not None]
    md += check("Multi-host, 16-64 MiB: strata >= 1.5x best of (default, han)", items,
                lambda v: v >= 1.5, ratio_desc(1.5))
    items = [(l, r["f_strata"]) for l, r in big if r["f_strata"] is not None]

    def frac_desc(items, bad):
        w = min(items, key=lambda x: x[1])
        s = f"Worst: {100 * w[1]:.0f}% at {w[0]} (target 85%"
        return s + (f", gap {100 * (0.85 - w[1]):.0f} points)." if w[1] < 0.85 else ").")
    md += check("Multi-host, 16-64 MiB: strata >= 85% of the link-bound limit", items,
                lambda v: v >= 0.85, frac_desc)
    items = [(l, r["ratio"]) for l, r in one if r["ratio"] is not None]
    md += check("One host, 8 B-64 MiB: strata no slower than MPI_Allreduce (best of default, han) "
                "at every size", items, lambda v: v >= 1.0, ratio_desc(1.0))

    def lat_desc(items, bad):
        w = max(items, key=lambda x: x[1])
        s = f"Worst: strata {w[1]:.2f}x MPI's time at {w[0]} (target <= 1.20x"
        s += f", over by {w[1] - 1.2:.2f}x)." if w[1] > 1.2 else ")."
        if bad:
            s += " Failing: " + "; ".join(f"{l} ({v:.2f}x)" for l, v in bad[:8])
            s += " ..." if len(bad) > 8 else ""
        return s
    items = [(l, 1 / r["ratio"]) for l, r in small if r["ratio"]]
    md += check("Small messages (<= 64 KiB), every setting: strata time <= 1.2x best MPI time",
                items, lambda v: v <= 1.2, lat_desc)

    def nb_desc(items, bad):
        w = max(items, key=lambda x: x[1])
        s = f"Worst: {w[1]:+.2f} us per call at {w[0]} (target <= +{NONBLOCKING_LIMIT_US:.0f} us"
        return s + (f", over by {w[1] - NONBLOCKING_LIMIT_US:.2f} us)." if bad else ").")
    md += check(f"The nonblocking path adds no more than {NONBLOCKING_LIMIT_US:.0f} us per call on "
                "one host (8 B and 64 KiB, 2 and 4 ranks)", nb_items,
                lambda v: v <= NONBLOCKING_LIMIT_US, nb_desc,
                empty="setting (d) was not run")
    if ov_items:
        md += [f"- **Overlap, 16 MiB allreduce vs an equal computation**: measured fraction hidden "
               + "; ".join(f"{f:.2f} (raw {r:.2f}) at {l}" for l, f, r in ov_items
                           if f is not None and r is not None)
               + " (reported, no target)."]
    else:
        md += ["- **Overlap, 16 MiB allreduce vs an equal computation**: N/A (setting (e) was not "
               "run)"]
    if a.quick == "1":
        md += ["", "(Quick run: the ranges above hold only the sizes it measured.)"]
    print("\n".join(md))


if __name__ == "__main__":
    sys.exit(main())
