"""strata-trace's timelines: reading the per-rank files STRATA_TRACE wrote (a file cut short
by a dying process repaired), grouped by communicator, and `merge`."""

import glob
import json
import os

from .common import die, need_dir, ranks_text, warn


def parse_array(text):
    """The events of a JSON-array trace. A process that died leaves the array open (no "]"),
    possibly in the middle of an event: close it, and drop the last event if it is cut short.
    Returns (events, how it was repaired or None); raises ValueError when nothing parses."""
    try:
        return json.loads(text), None
    except json.JSONDecodeError as first:
        error = first
    body = text.rstrip().rstrip(",")
    tries = [(body + "\n]", "no closing ']'")]
    cut = body.rfind(",\n")
    if cut > 0:
        tries.append((body[:cut] + "\n]", "no closing ']', its last event cut short (dropped)"))
    for candidate, how in tries:
        try:
            return json.loads(candidate), how
        except json.JSONDecodeError:
            pass
    raise ValueError(f"{error.msg} at line {error.lineno}")


def load_timeline(path):
    """One rank's timeline: its events and its "strata" metadata (rank, size, host, commHash,
    clock offset and error, levels). None for a trace this tool merged (skipped, not an error);
    anything else without exactly one strata metadata event is refused."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        die(f"{path}: cannot read: {e.strerror}")
    not_timeline = f'{path}: not a strata timeline (no "strata" metadata event)'
    try:
        events, repaired = parse_array(text)
    except ValueError as e:
        die(f"{path}: not a strata timeline (not JSON: {e})")
    if isinstance(events, dict) and "traceEvents" in events:
        return None
    if not isinstance(events, list):
        die(not_timeline)
    events = [e for e in events if isinstance(e, dict)]
    metas = [e for e in events if e.get("ph") == "M" and e.get("name") == "strata"]
    if not metas:
        die(not_timeline)
    if len(metas) > 1:
        die(f"{path}: {len(metas)} strata metadata events, expected one")
    meta = metas[0].get("args") or {}
    for key in ("rank", "size", "commHash"):
        if key not in meta:
            die(f'{path}: its strata metadata has no "{key}"')
    if not isinstance(meta["rank"], int) or not isinstance(meta["size"], int):
        die(f"{path}: its strata metadata's rank and size must be integers")
    if repaired:
        warn(f"{path}: {repaired}: the process ended before closing its timeline")
    return {"path": path, "events": events, "meta": meta, "rank": int(meta["rank"]),
            "comm": str(meta["commHash"]), "size": int(meta["size"]),
            "offset": float(meta.get("clockOffsetUs") or 0.0)}


def load_timelines(d, skip=None):
    """Every timeline in DIR grouped by communicator: {commHash: {rank: timeline}}. A rank seen
    twice in one communicator is two runs mixed in one directory: refused, since aligning them
    would draw a picture of a job that never ran."""
    need_dir(d)
    paths = sorted(p for p in glob.glob(os.path.join(d, "*.json"))
                   if skip is None or os.path.abspath(p) != os.path.abspath(skip))
    comms = {}
    for p in paths:
        t = load_timeline(p)
        if t is None:
            continue
        ranks = comms.setdefault(t["comm"], {})
        if t["rank"] in ranks:
            die(f"{p}: rank {t['rank']} of comm {t['comm']} is in "
                f"{ranks[t['rank']]['path']} too (two runs in one directory?)")
        ranks[t["rank"]] = t
    if not comms:
        die(f"{d}: no timeline files (*.json written by STRATA_TRACE)")
    for comm, ranks in sorted(comms.items()):
        size = max(t["size"] for t in ranks.values())
        missing = [r for r in range(size) if r not in ranks]
        if missing:
            warn(f"comm {comm}: no timeline of {ranks_text(missing)} (of {size})")
    return comms


def cmd_merge(a):
    """Aligns every rank's clock to rank 0's (ts - clockOffsetUs), then shifts the whole job so
    that its first event is at 0: one trace whose ranks line up as they ran."""
    out = a.output or os.path.join(a.dir, "merged.json")
    comms = load_timelines(a.dir, skip=out)
    several = len(comms) > 1
    merged, pid_base, other = [], 0, {"tool": "strata-trace merge", "comms": []}
    for comm, ranks in sorted(comms.items()):
        size = max(t["size"] for t in ranks.values())
        for rank, t in sorted(ranks.items()):
            pid = pid_base + rank
            label = f"rank {rank} (host {t['meta'].get('host', '?')})"
            name = {"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                    "args": {"name": f"comm {comm} {label}" if several else label}}
            # The rank's own process_name is replaced by one that says which communicator.
            merged.append(name)
            for e in t["events"]:
                if e.get("ph") == "M" and e.get("name") == "process_name":
                    continue
                e = dict(e, pid=pid)
                if "ts" in e:
                    e["ts"] = float(e["ts"]) - t["offset"]
                merged.append(e)
        other["comms"].append({
            "commHash": comm, "size": size, "ranks": sorted(ranks), "firstPid": pid_base,
            "files": [ranks[r]["path"] for r in sorted(ranks)],
            "maxClockErrorUs": max(float(t["meta"].get("clockErrorUs") or 0)
                                   for t in ranks.values())})
        pid_base += size
    timed = [e for e in merged if "ts" in e]
    t0 = min((e["ts"] for e in timed), default=0.0)
    for e in timed:
        # To the nanosecond, as the ranks wrote them: the shift leaves float noise below it.
        e["ts"] = round(e["ts"] - t0, 3)
    end = max((e["ts"] + float(e.get("dur") or 0) for e in timed), default=0.0)
    other["shiftUs"] = t0
    doc = {"traceEvents": merged, "displayTimeUnit": "ms", "otherData": other}
    try:
        with open(out, "w", encoding="utf-8") as f:
            json.dump(doc, f, separators=(",", ":"))
            f.write("\n")
    except OSError as e:
        die(f"{out}: cannot write: {e.strerror}")
    files = sum(len(c["files"]) for c in other["comms"])
    print(f"merged {files} timeline file{'s' if files != 1 else ''} into {out}: "
          f"{len(merged)} events, span {end / 1000:.3f} ms")
    for c in other["comms"]:
        print(f"  comm {c['commHash']}: {ranks_text(c['ranks'])} of {c['size']}, "
              f"max clock error {c['maxClockErrorUs']:g} us"
              + (f", pids from {c['firstPid']}" if several else ""))
    return 0
