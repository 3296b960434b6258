"""strata-trace `hang`: every rank's flight-recorder dumps compared call by call, and the
first call at which the ranks diverge said in words."""

import glob
import json
import os

from .common import die, need_dir, ranks_text

NO_DUMP = "no dump (the process died, or never reached a dump)"


def dump_lines(path, strict):
    """The dumps in one file, in file order. A *.jsonl file must hold only dumps (a bad line
    is an error naming file and line); another file counts only if every line is a dump."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
    except OSError as e:
        if strict:
            die(f"{path}: cannot read: {e.strerror}")
        return []
    dumps = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line.rstrip())
            why = None if isinstance(d, dict) else "not a JSON object"
        except json.JSONDecodeError as e:
            why = f"{e.msg} at column {e.colno}"
        if why is None:
            lacks = [k for k in ("rank", "size", "commHash", "calls") if k not in d]
            why = f"no \"{lacks[0]}\"" if lacks else None
        if why is None and not (isinstance(d["rank"], int) and isinstance(d["size"], int)
                                and isinstance(d["calls"], list)):
            why = "rank and size must be integers, calls a list"
        if why is not None:
            if strict:
                die(f"{path}:{n}: not a flight-recorder dump: {why}")
            return []
        dumps.append(d)
    return dumps


def load_dumps(d):
    """The latest dump of each (commHash, rank): the last line of a file, and of several files
    holding the same rank (appended runs, renamed copies), the newest file."""
    need_dir(d)
    latest = {}
    paths = sorted(p for p in glob.glob(os.path.join(d, "*")) if os.path.isfile(p))
    for p in sorted(paths, key=os.path.getmtime):
        for dump in dump_lines(p, p.endswith(".jsonl")):
            dump["file"] = p
            dump["calls"] = [c for c in dump["calls"] if isinstance(c, dict)]
            latest[(str(dump["commHash"]), int(dump["rank"]))] = dump
    if not latest:
        die(f"{d}: no flight-recorder dumps (*.jsonl written by STRATA_FLIGHT_RECORDER_FILE)")
    comms = {}
    for (comm, rank), dump in latest.items():
        comms.setdefault(comm, {})[rank] = dump
    return comms


def signature(c):
    """What every rank must agree on for a call: collective, count, type, op, root."""
    return (c.get("collective"), c.get("count"), c.get("type"), c.get("op"), c.get("root"))


def call_text(c):
    op = f" {c['op']}" if c.get("op") else ""
    # A library's own call (strataCommNoteNextCall) says so: the program never made it.
    note = f" [{c['note']}]" if c.get("note") else ""
    return f"{c.get('collective')} #{c.get('seq')} ({c.get('count')} {c.get('type')}{op}){note}"


def level_text(level, levels):
    if level is None:
        return ""
    if level < 0:
        return " over the flat group"
    name = levels[level].get("name") if 0 <= level < len(levels) else None
    return f" at level {level}" + (f" {name}" if name else "")


def where(c, levels):
    """Where a call is in its program: "at step 2 of 3 (allreduce at level 1 network)"."""
    state = c.get("state")
    if state == "issued":
        return "(queued, not started)"
    if state == "done":
        return ""
    if not c.get("steps") or not c.get("step"):
        return "before its first step"
    kind = c.get("stepKind") or "step"
    return (f"at step {c['step']} of {c['steps']} "
            f"({kind}{level_text(c.get('stepLevel'), levels)})")


def short_error(err):
    """An error in ~100 characters, without the "step 2 of 3 (...): " the state already says."""
    if err.startswith("step ") and "): " in err:
        err = err.split("): ", 1)[1]
    return err if len(err) <= 100 else err[:97] + "..."


def frontier(dump, levels):
    """A rank's first call not done, or its last call when all are: where it is."""
    calls = sorted(dump["calls"], key=lambda c: c.get("seq", 0))
    for c in calls:
        if c.get("state") != "done":
            text = f"{call_text(c)} {c.get('state')} {where(c, levels)}".rstrip()
            return c, text + (f": {short_error(c['error'])}" if c.get("error") else "")
    if not calls:
        return None, "idle: no call recorded"
    return None, f"idle: last call #{calls[-1].get('seq')} done ({calls[-1].get('collective')})"


def aligned(dump, c, key):
    """A time of the dump's wall clock (epochUs at the recorder's zero), comparable across
    ranks as far as the hosts' clocks agree."""
    return None if c.get(key) is None else float(dump.get("epochUs") or 0) + float(c[key])


def standing(here, levels):
    """Ranks in the same call grouped by state and step, and their words: the call is named
    once per state ("ranks 0,2 failed in allreduce #4 (...) at step 2 of 3 (...), rank 1 at
    step 1 of 3 (...)")."""
    keyed = {}
    for r, c in sorted(here.items()):
        keyed.setdefault((c.get("state"), where(c, levels)), []).append(r)
    groups = [{"ranks": rs, "state": st, "where": w, "call": call_text(here[rs[0]])}
              for (st, w), rs in keyed.items()]
    verbs = {"running": "wait in", "failed": "failed in", "issued": "issued", "done": "finished"}
    clauses = {}
    for g in groups:
        head = ranks_text(g["ranks"])
        if g["state"] not in clauses:
            head += f" {verbs.get(g['state'], g['state'] + ' in')} {g['call']}"
        clauses.setdefault(g["state"], []).append(head + (f" {g['where']}" if g["where"] else ""))
    return groups, [", ".join(parts) for parts in clauses.values()]


def late_ranks(dumps, here):
    """Ranks that issued the call only after another rank had timed out in it: they stalled
    before the call (the others waited STRATA_TIMEOUT for them). A fast failure (a
    disagreement found at once) makes nobody late."""
    timeouts = [(o, aligned(dumps[o], c, "endedUs")) for o, c in here.items()
                if c.get("state") == "failed" and "timed out" in (c.get("error") or "")
                and c.get("endedUs") is not None]
    return sorted(r for r, c in here.items() if c.get("issuedUs") is not None and
                  any(o != r and e < aligned(dumps[r], c, "issuedUs") for o, e in timeouts))


def diverge(size, dumps, levels):
    """The first call at which the ranks part: (seq, kind, groups, words), or None when every
    rank made the same calls and stands at the same place. Kinds: "missing" (a rank never
    issued it, or left no dump), "differs" (collective, count, type, op or root), "stalled"
    (some finished it and others not, or some issued it after the others timed out)."""
    calls = {r: {c.get("seq"): c for c in d["calls"]} for r, d in dumps.items()}
    oldest = {r: min(cs) if cs else 0 for r, cs in calls.items()}
    absent = [r for r in range(size) if r not in dumps]
    nodump = ([{"ranks": absent, "state": "no dump"}], [f"{ranks_text(absent)}: {NO_DUMP}"]) \
        if absent else ([], [])
    for seq in sorted({s for cs in calls.values() for s in cs}):
        here = {r: cs[seq] for r, cs in calls.items() if seq in cs}
        # A rank whose recorder no longer holds seq (older than its window) cannot disagree.
        lacking = [r for r in calls if seq not in calls[r] and seq > oldest[r]]
        sigs = {}
        for r, c in here.items():
            sigs.setdefault(signature(c), []).append(r)
        late = late_ranks(dumps, here)
        if len(sigs) > 1:
            return (seq, "differs") + differs_groups(seq, sigs)
        if not lacking and not late and len({c.get("state") == "done"
                                             for c in here.values()}) == 1:
            continue
        first = next(iter(here.values()))
        groups, words = standing({r: c for r, c in here.items() if r not in late}, levels)
        if late:
            others = [r for r in here if r not in late]
            delay = max(aligned(dumps[r], here[r], "issuedUs") for r in late) - \
                min(aligned(dumps[r], here[r], "issuedUs") for r in others)
            groups.append({"ranks": late, "state": "late", "call": call_text(first),
                           "lateUs": delay})
            words.append(f"{ranks_text(late)} stalled: issued {first.get('collective')} #{seq} "
                         f"{delay / 1e6:.1f} s after {ranks_text(others)}, once they had "
                         "timed out in it")
        for r in lacking:
            last = max(calls[r].values(), key=lambda c: c.get("seq", 0)) if calls[r] else None
            groups.append({"ranks": [r], "state": "never issued", "last": last and {
                k: last.get(k) for k in ("seq", "collective", "state")}})
            words.append(f"{ranks_text([r])} never issued {first.get('collective')} #{seq}: " +
                         (f"its last call is {last.get('collective')} #{last.get('seq')}, "
                          f"{last.get('state')}" if last else "it recorded no call"))
        kind = "missing" if lacking or absent else "stalled"
        return seq, kind, groups + nodump[0], "; ".join(words + nodump[1])
    if not absent:
        return None
    # The ranks with a dump agree: where they stand, and who left no word.
    open_calls = [c for c in (frontier(d, levels)[0] for d in dumps.values()) if c]
    seq = min((c["seq"] for c in open_calls), default=None)
    groups, words = standing({r: cs[seq] for r, cs in calls.items() if seq in cs}, levels) \
        if open_calls else ([], [])
    return seq, "missing", groups + nodump[0], "; ".join(words + nodump[1])


def differs_groups(seq, sigs):
    """Ranks in the same call number with different arguments: only what differs is named,
    the odd ones out first ("rank 1 is in allreduce #4 with 524288 float32, ranks 0,2-3
    with 1048576 float32")."""
    keys = sorted(sigs, key=lambda k: (len(sigs[k]), min(sigs[k])))
    names = ("collective", "count", "type", "op", "root")
    diff = {n for i, n in enumerate(names) if len({k[i] for k in keys}) > 1}
    groups, parts = [], []
    for i, k in enumerate(keys):
        f = dict(zip(names, k))
        if "collective" in diff:
            op = f" {f['op']}" if f["op"] else ""
            what = f"in {f['collective']} #{seq} ({f['count']} {f['type']}{op}, root {f['root']})"
        else:
            bits = [f"{f['count']} {f['type']}"] if diff & {"count", "type"} else []
            bits += [f"op {f['op']}"] if "op" in diff else []
            bits += [f"root {f['root']}"] if "root" in diff else []
            what = (f"in {f['collective']} #{seq} with " if i == 0 else "with ") + ", ".join(bits)
        parts.append(f"{ranks_text(sigs[k])} {'is ' if i == 0 else ''}{what}")
        groups.append({"ranks": sorted(sigs[k]), "state": "differs", **f})
    return groups, ", ".join(parts)


def analyze(comm, dumps):
    """One communicator's verdict and each rank's frontier, as printed and as --json."""
    size = max(int(d.get("size") or 0) for d in dumps.values())
    levels = next((d["levels"] for d in dumps.values() if d.get("levels")), [])
    ranks = []
    for r in range(size):
        if r not in dumps:
            ranks.append({"rank": r, "dump": False, "text": NO_DUMP})
            continue
        d = dumps[r]
        c, text = frontier(d, levels)
        ranks.append({"rank": r, "dump": True, "host": d.get("host"), "pid": d.get("pid"),
                      "file": d["file"], "reason": d.get("reason"), "text": text,
                      **{k: c and c.get(k) for k in ("seq", "collective", "state", "step",
                                                     "steps", "stepKind", "stepLevel", "error")}})
    lost = lost_ranks(dumps)
    for x in ranks:
        if not x["dump"] and any(l["rank"] == x["rank"] for l in lost):
            x["text"] = "lost: " + next(l["why"] for l in lost if l["rank"] == x["rank"])
    found = diverge(size, dumps, levels)
    if found:
        seq, kind, groups, verdict = found
        return {"comm": comm, "size": size, "verdict": lost_text(lost) + verdict, "lost": lost,
                "divergence": {"seq": seq, "kind": kind, "groups": groups}, "ranks": ranks}
    last = max((c.get("seq", 0) for d in dumps.values() for c in d["calls"]), default=0)
    fronts = {r: frontier(d, levels)[0] for r, d in dumps.items()}
    now = "all are idle" if not any(fronts.values()) else \
        "; ".join(standing({r: c for r, c in fronts.items() if c}, levels)[1])
    verdict = f"no divergence: every rank made the same calls up to #{last}; {now}"
    return {"comm": comm, "size": size, "verdict": lost_text(lost) + verdict, "lost": lost,
            "divergence": None, "ranks": ranks}


def lost_ranks(dumps):
    """The ranks the survivors' dumps name lost (their process gone: it leaves no dump), each
    with the first reason given and the ranks that report it."""
    lost = {}
    for r, d in sorted(dumps.items()):
        for entry in d.get("lost") or []:
            x = lost.setdefault(int(entry["rank"]), {"rank": int(entry["rank"]),
                                                     "why": entry.get("why", ""),
                                                     "reportedBy": []})
            # A rank that found it itself says best why; one that heard it says who did.
            if " found it lost: " in x["why"] and " found it lost: " not in entry.get("why", ""):
                x["why"] = entry.get("why", "")
            x["reportedBy"].append(r)
    return [lost[k] for k in sorted(lost)]


def lost_text(lost):
    """The verdict's first words when ranks were lost: "rank 2 was lost (its process is gone:
    ...), as ranks 0-1,3 report; "."""
    return "".join(f"rank {x['rank']} was lost ({x['why']}), as {ranks_text(x['reportedBy'])} "
                   "report; " for x in lost)


def cmd_hang(a):
    comms = load_dumps(a.dir)
    result = [analyze(c, d) for c, d in sorted(comms.items())]
    if a.json:
        print(json.dumps({"comms": result}, indent=2))
        return 0
    for i, r in enumerate(result):
        if i:
            print()
        print(f"comm {r['comm']}: {r['verdict']}")
        for x in r["ranks"]:
            host = f" (host {x['host']})" if x.get("host") else ""
            print(f"  rank {x['rank']}{host}: {x['text']}")
    return 0
