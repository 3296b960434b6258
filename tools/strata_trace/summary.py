"""strata-trace `summary`: per level of each communicator its steps' time, bytes and bus
bandwidth against the link's, and per collective the share of each call spent waiting."""

import json
import statistics

from .common import ranks_text
from .timeline import load_timelines


def complete(t, cat):
    """The complete ("X") events of one category in one rank's timeline."""
    return [e for e in t["events"] if e.get("ph") == "X" and e.get("cat") == cat]


def waited(t, call):
    """How long one call waited: the wait events with its seq, clipped to the call's span (a
    queue wait lies before the start; queuedUs already counts it), plus queuedUs."""
    args = call.get("args") or {}
    begin = float(call["ts"])
    end = begin + float(call.get("dur") or 0)
    total = float(args.get("queuedUs") or 0)
    for w in complete(t, "wait"):
        if (w.get("args") or {}).get("seq") != args.get("seq"):
            continue
        wb = float(w["ts"])
        total += max(0.0, min(end, wb + float(w.get("dur") or 0)) - max(begin, wb))
    return total


def summarize(comm, ranks):
    """One communicator's numbers. Per level, sums per rank averaged over the ranks with a
    file, and bus bandwidth as nccl-tests reports it: the bytes a rank put on the level's link
    over the time of its steps there."""
    first = next(iter(ranks.values()))["meta"]
    meta_levels = first.get("levels") or []
    # The flat group's steps cross every level: its link is the slowest one (the "flat" entry).
    flat_meta = first.get("flat") or {}
    per_level = {}
    for t in ranks.values():
        for e in complete(t, "step"):
            args = e.get("args") or {}
            level = int(args.get("level", -1))
            lv = per_level.setdefault(level, {"name": args.get("levelName"), "fabric":
                                              args.get("fabric"), "group": args.get("groupSize"),
                                              "steps": 0, "us": 0.0, "bytes": 0, "wire": 0})
            lv["steps"] += 1
            lv["us"] += float(e.get("dur") or 0)
            lv["bytes"] += int(args.get("bytes") or 0)
            lv["wire"] += int(args.get("wireBytes") or 0)
    n = len(ranks)
    levels = []
    for level in sorted(per_level, key=lambda x: (x < 0, x)):
        lv = per_level[level]
        meta = meta_levels[level] if 0 <= level < len(meta_levels) else flat_meta
        us, wire = lv["us"] / n, lv["wire"] / n
        gbps = wire / us / 1e3 if us > 0 else None
        link = meta.get("linkGBps")
        levels.append({
            "level": level, "name": lv["name"] or meta.get("name") or
            ("flat" if level < 0 else f"level {level}"),
            "fabric": lv["fabric"] or meta.get("fabric"), "groupSize": lv["group"],
            "steps": lv["steps"] / n, "timeUs": us, "bytes": lv["bytes"] / n, "wireBytes": wire,
            "GBps": gbps, "linkGBps": link, "link": meta.get("link"),
            "linkPercent": 100 * gbps / link if gbps is not None and link else None})
    per_coll = {}
    for t in ranks.values():
        for c in complete(t, "call"):
            args = c.get("args") or {}
            name = args.get("collective") or c.get("name", "?").split(" #")[0]
            dur = float(c.get("dur") or 0)
            span = dur + float(args.get("queuedUs") or 0)
            pc = per_coll.setdefault(name, {"n": 0, "durs": [], "queued": [], "shares": []})
            pc["n"] += 1
            pc["durs"].append(dur)
            pc["queued"].append(float(args.get("queuedUs") or 0))
            pc["shares"].append(waited(t, c) / span if span > 0 else 0.0)
    colls = [{"collective": k, "calls": v["n"] / n, "meanUs": statistics.fmean(v["durs"]),
              "meanQueuedUs": statistics.fmean(v["queued"]),
              "waitPercent": 100 * statistics.fmean(v["shares"])}
             for k, v in sorted(per_coll.items())]
    return {"commHash": comm, "size": max(t["size"] for t in ranks.values()),
            "ranks": sorted(ranks), "levels": levels, "collectives": colls}


def table(headers, rows):
    """Columns as wide as their widest cell; numbers (and "-") right-aligned, text left."""
    cols = list(zip(headers, *rows))
    widths = [max(len(str(x)) for x in col) for col in cols]
    numeric = [all(str(x)[:1].isdigit() or x == "-" for x in col[1:]) for col in cols]
    return "\n".join("  ".join(str(c).rjust(w) if n else str(c).ljust(w)
                               for c, w, n in zip(r, widths, numeric)).rstrip()
                     for r in [headers] + rows)


def num(x, fmt):
    return "-" if x is None else format(x, fmt)


def count(x):
    return f"{x:g}" if x == int(x) else f"{x:.1f}"


def cmd_summary(a):
    comms = load_timelines(a.dir)
    result = [summarize(c, r) for c, r in sorted(comms.items())]
    if a.json:
        print(json.dumps({"comms": result}, indent=2))
        return 0
    for i, s in enumerate(result):
        if i:
            print()
        print(f"comm {s['commHash']}: {ranks_text(s['ranks'])} of {s['size']} "
              "(per rank: sums over its steps, averaged over the ranks)")
        rows = [[lv["name"], lv["fabric"] or "-", lv["groupSize"] or "-", count(lv["steps"]),
                 f"{lv['timeUs']:.1f}", f"{lv['bytes']:.0f}", f"{lv['wireBytes']:.0f}",
                 num(lv["GBps"], ".2f"),
                 num(lv["linkGBps"], "g"),
                 "-" if lv["linkPercent"] is None else f"{lv['linkPercent']:.1f}%"]
                for lv in s["levels"]]
        print(table(["level", "fabric", "group", "steps", "time (us)", "bytes", "wire bytes",
                     "busbw (GB/s)",
                     "link (GB/s)", "of link"], rows) if rows else "no steps recorded")
        print()
        rows = [[c["collective"], count(c["calls"]), f"{c['meanUs']:.1f}",
                 f"{c['meanQueuedUs']:.1f}", f"{c['waitPercent']:.1f}%"]
                for c in s["collectives"]]
        print(table(["collective", "calls", "mean (us)", "queued (us)", "waiting"], rows)
              if rows else "no calls recorded")
    return 0
