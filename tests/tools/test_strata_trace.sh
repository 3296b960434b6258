#!/bin/bash
# strata-trace as a user runs it: one case per ctest entry (tests/tools/trace.cmake).
#
#   test_strata_trace.sh CASE
#
# The environment names what to run (ctest sets it):
#   TRACE_SOURCE_DIR  the source tree (tools/strata-trace, tests/tools/data/trace)
#   PYTHON            python3 (runs the script, checks the JSON output)
#   TRACE_SCRIPT      optional: another copy of the script to test
#   live_* cases: LIVE_DUMPS (tests/mpi's build folder, where the fault entries dump),
#   MPIEXEC, PERF_BIN and HOSTNAME_BY_RANK (live_timeline runs strata-perf with STRATA_TRACE)
#   NVTX_CAPTURE_LIB (live_nvtx: the stand-in NVTX tool, tests/tools/nvtx/nvtx_capture.cc)
# The fixtures (tests/tools/data/trace): timeline/, two hand-written ranks whose numbers are
# worked out below; stall/ and count_mismatch/, the flight-recorder dumps of real runs of
# strata_mpi_faults (4 ranks on 2 hosts interleaved, STRATA_TIMEOUT=2; count_mismatch/ from
# before the dumps listed the levels' names); never_issued/ and agree/, hand-written dumps.
# Every case checks what the tool printed, not only its exit code.
set -u

case_name=${1:?usage: $0 CASE}
src=${TRACE_SOURCE_DIR:?}
python=${PYTHON:-python3}
script=${TRACE_SCRIPT:-$src/tools/strata-trace}
data=$src/tests/tools/data/trace
strata_trace() { "$python" "$script" "$@"; }
tool=strata_trace
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
make_work strata_trace_test

# same_line TEXT: stdout has exactly this line.
same_line() { grep -qxF -- "$1" "$out" || fail "no line '$1' in stdout"; }

# edit_dump FILE PYTHON: rewrites each dump line of FILE with the code, d = the dump.
edit_dump() {
  "$python" - "$1" "$2" <<'PYEOF' || fail "edit_dump $1 failed"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for d in lines:
    exec(sys.argv[2])
open(sys.argv[1], "w").write("".join(json.dumps(d) + "\n" for d in lines))
PYEOF
}

case "$case_name" in
  help)
    run --help
    expect_rc 0
    for word in merge summary hang "tools/strata-trace hang tests/tools/data/trace/stall" \
        "Exit status: 0 success, 1 failure"; do
      has "$word"
    done
    for sub in merge summary hang; do
      run $sub --help
      expect_rc 0
      has "DIR"
    done
    run merge --help
    has "--output"
    run hang --help
    has "--json"
    run
    expect_usage
    has_err "the following arguments are required"
    run hang
    expect_usage
    has_err "DIR"
    ;;

  bad_input)
    for sub in merge summary hang; do
      run $sub "$work/none"
      expect_failure
      has_err "strata-trace: error: $work/none: no such directory"
    done
    mkdir "$work/empty"
    run merge "$work/empty"
    expect_failure
    has_err "strata-trace: error: $work/empty: no timeline files (*.json written by STRATA_TRACE)"
    run summary "$work/empty"
    expect_failure
    has_err "no timeline files"
    run hang "$work/empty"
    expect_failure
    has_err "strata-trace: error: $work/empty: no flight-recorder dumps (*.jsonl written by STRATA_FLIGHT_RECORDER_FILE)"
    # A JSON array that is not a strata timeline, and a file that is not JSON at all.
    mkdir "$work/other"
    echo '[{"ph":"X","name":"x","ts":1,"dur":2,"pid":0,"tid":0}]' >"$work/other/x.json"
    run merge "$work/other"
    expect_failure
    has_err "strata-trace: error: $work/other/x.json: not a strata timeline (no \"strata\" metadata event)"
    echo 'hello' >"$work/other/x.json"
    run merge "$work/other"
    expect_failure
    has_err "$work/other/x.json: not a strata timeline (not JSON: Expecting value at line 1)"
    # The same rank of one communicator twice: two runs mixed in one directory.
    mkdir "$work/dup"
    cp "$data/timeline/trace.0.json" "$work/dup/a.json"
    cp "$data/timeline/trace.0.json" "$work/dup/b.json"
    run merge "$work/dup"
    expect_failure
    has_err "$work/dup/b.json: rank 0 of comm 0x00000000000a11ce is in $work/dup/a.json too"
    # A dump file with a line cut short, and one without a dump's fields.
    mkdir "$work/dumps"
    cp "$data"/stall/*.jsonl "$work/dumps/"
    echo '{"calls": [' >>"$work/dumps/flight.2.jsonl"
    run hang "$work/dumps"
    expect_failure
    has_err "strata-trace: error: $work/dumps/flight.2.jsonl:2: not a flight-recorder dump: Expecting value at column 12"
    echo '{"rank": 1, "calls": []}' >"$work/dumps/flight.2.jsonl"
    run hang "$work/dumps"
    expect_failure
    has_err "$work/dumps/flight.2.jsonl:1: not a flight-recorder dump: no \"size\""
    ;;

  merge)
    # trace.0.json: rank 0, clock offset 0. trace.1.json: rank 1, offset 1000.5 us, so its
    # aligned times are ts - 1000.5; its queue wait (ts 1070.5) is the earliest event at
    # aligned 70, which the merge moves to 0. Rank 1's allreduce (ts 1110.5) lands at 40,
    # rank 0's (ts 100) at 30; the last end is rank 1's broadcast, 1605.5 + 245 - 1000.5 - 70
    # = 780 us.
    cp -r "$data/timeline" "$work/t"
    run merge "$work/t"
    expect_rc 0
    same_line "merged 2 timeline files into $work/t/merged.json: 22 events, span 0.780 ms"
    same_line "  comm 0x00000000000a11ce: ranks 0-1 of 2, max clock error 4 us"
    cp "$work/t/merged.json" "$out"
    check_json '
ev = d["traceEvents"]
assert d["displayTimeUnit"] == "ms", d["displayTimeUnit"]
inputs = [json.load(open(sys.argv[1].rsplit("/", 1)[0] + f"/t/trace.{r}.json")) for r in (0, 1)]
assert len(ev) == sum(len(i) for i in inputs) == 22, len(ev)
def at(pid, name):
    (e,) = [e for e in ev if e["pid"] == pid and e["name"] == name]
    return e
assert at(1, "queue")["ts"] == 0.0
assert at(0, "allreduce #1")["ts"] == 30.0 and at(1, "allreduce #1")["ts"] == 40.0
assert at(0, "pipelined allreduce wait")["ts"] == 230.0
assert at(1, "pipelined allreduce wait")["ts"] == 220.0
assert at(1, "broadcast #2")["ts"] == 535.0 and at(1, "broadcast #2")["dur"] == 245.0
assert at(0, "a category strata-trace does not know")["extra"] == "tolerated"
names = sorted(e["args"]["name"] for e in ev if e["name"] == "process_name")
assert names == ["rank 0 (host a)", "rank 1 (host b)"], names
assert len([e for e in ev if e["name"] == "strata"]) == 2
o = d["otherData"]
assert o["shiftUs"] == 70.0 and o["comms"][0]["maxClockErrorUs"] == 4.0, o
assert o["comms"][0]["ranks"] == [0, 1], o
'
    # Its own output is not read back; -o writes elsewhere.
    run merge "$work/t"
    expect_rc 0
    has "22 events"
    run merge "$work/t" -o "$work/elsewhere.json"
    expect_rc 0
    has "into $work/elsewhere.json: 22 events"
    "$python" -c 'import json, sys; json.load(open(sys.argv[1]))' "$work/elsewhere.json" ||
      fail "-o wrote no JSON"
    # A rank missing: a warning naming it, and what there is is merged.
    rm "$work/t/trace.1.json"
    run merge "$work/t"
    expect_rc 0
    has_err "strata-trace: warning: comm 0x00000000000a11ce: no timeline of rank 1 (of 2)"
    has "merged 1 timeline file into"
    ;;

  merge_truncated)
    # A process that died leaves no closing bracket, or an event cut in the middle.
    mkdir "$work/open" "$work/cut"
    cp "$data/timeline/trace.0.json" "$work/open/"
    cp "$data/timeline/trace.0.json" "$work/cut/"
    head -n -1 "$data/timeline/trace.1.json" >"$work/open/trace.1.json"
    ! grep -q '^]' "$work/open/trace.1.json" || fail "the fixture still has its ']'"
    run merge "$work/open"
    expect_rc 0
    has_err "$work/open/trace.1.json: no closing ']': the process ended before closing its timeline"
    has "merged 2 timeline files into $work/open/merged.json: 22 events, span 0.780 ms"
    head -c -60 "$data/timeline/trace.1.json" >"$work/cut/trace.1.json"
    run merge "$work/cut"
    expect_rc 0
    has_err "$work/cut/trace.1.json: no closing ']', its last event cut short (dropped)"
    has ": 21 events,"
    ;;

  merge_two_comms)
    # Two communicators: a pid per (comm, rank), and process names that say which comm.
    mkdir "$work/t"
    for r in 0 1; do
      cp "$data/timeline/trace.$r.json" "$work/t/"
      sed 's/0x00000000000a11ce/0x00000000000b0b00/' "$data/timeline/trace.$r.json" \
        >"$work/t/split.$r.json"
    done
    run merge "$work/t" -o "$work/merged.json"
    expect_rc 0
    has "merged 4 timeline files into $work/merged.json: 44 events"
    same_line "  comm 0x00000000000b0b00: ranks 0-1 of 2, max clock error 4 us, pids from 2"
    cp "$work/merged.json" "$out"
    check_json '
ev = d["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in ev if e["name"] == "process_name"}
assert names == {0: "comm 0x00000000000a11ce rank 0 (host a)",
                 1: "comm 0x00000000000a11ce rank 1 (host b)",
                 2: "comm 0x00000000000b0b00 rank 0 (host a)",
                 3: "comm 0x00000000000b0b00 rank 1 (host b)"}, names
assert sorted({e["pid"] for e in ev}) == [0, 1, 2, 3]
'
    ;;

  summary)
    # Level 0 (network, 10 GB/s link): each rank's one step took 250 us and sent 1000000 bytes
    # on the link: 1e6 B / 250 us = 4 GB/s, 40% of 10. The flat group's broadcast: 160 and 240
    # us (mean 200), rank 0 sent 2000000 bytes and rank 1 none (mean 1e6): 5 GB/s, link unknown.
    # Allreduce: rank 0 waited 100 us + 20 queued of 380 + 20 (30%), rank 1 160 + 40 of
    # 360 + 40 (50%; its queue wait lies before the call and is not counted twice): 40%, mean
    # 370 us. Broadcast: rank 1's 60 us wait starts 10 us before the call: 50 + 5 queued of
    # 245 + 5 (22%), rank 0 none: 11%, mean (200 + 245) / 2 = 222.5 us.
    run summary "$data/timeline"
    expect_rc 0
    same_line "comm 0x00000000000a11ce: ranks 0-1 of 2 (per rank: sums over its steps, averaged over the ranks)"
    same_line "level    fabric  group  steps  time (us)    bytes  wire bytes  busbw (GB/s)  link (GB/s)  of link"
    same_line "network  mpi         2      1      250.0  1000000     1000000          4.00           10    40.0%"
    same_line "flat     mpi         2      1      200.0  2000000     1000000          5.00            -        -"
    same_line "collective  calls  mean (us)  queued (us)  waiting"
    same_line "allreduce       1      370.0         30.0    40.0%"
    same_line "broadcast       1      222.5          2.5    11.0%"
    run summary "$data/timeline" --json
    expect_rc 0
    check_json '
(c,) = d["comms"]
net, flat = c["levels"]
assert (net["level"], net["name"], net["fabric"], net["groupSize"]) == (0, "network", "mpi", 2)
assert (net["timeUs"], net["bytes"], net["wireBytes"]) == (250.0, 1e6, 1e6), net
assert abs(net["GBps"] - 4.0) < 1e-12 and abs(net["linkPercent"] - 40.0) < 1e-9, net
assert net["linkGBps"] == 10.0 and net["link"] == "ethernet 10 GB/s", net
assert flat["level"] == -1 and abs(flat["GBps"] - 5.0) < 1e-12, flat
assert flat["linkGBps"] is None and flat["linkPercent"] is None, flat
ar, bc = c["collectives"]
assert ar["collective"] == "allreduce" and ar["calls"] == 1 and ar["meanUs"] == 370.0, ar
assert abs(ar["waitPercent"] - 40.0) < 1e-9, ar
assert bc["meanUs"] == 222.5 and abs(bc["waitPercent"] - 11.0) < 1e-9, bc
'
    ;;

  hang_stall)
    # Rank 3 slept 5 s before allreduce #4 (strata_mpi_faults --scenario stall): the others
    # timed out in it after 2 s, and it issued it after that.
    run hang "$data/stall"
    expect_rc 0
    same_line "comm 0xafc0660099afaaf5: ranks 0,2 failed in allreduce #4 (1048576 float32 sum) at step 2 of 3 (allreduce at level 1 network), rank 1 at step 1 of 3 (reducescatter at level 0 node); rank 3 stalled: issued allreduce #4 5.0 s after ranks 0-2, once they had timed out in it"
    has "  rank 0 (host h0): allreduce #4 (1048576 float32 sum) failed at step 2 of 3 (allreduce at level 1 network): ring step 0 of 2: timed out after 2 s (STRATA_TIMEOUT)"
    has "  rank 3 (host h1): allreduce #4 (1048576 float32 sum) failed at step 1 of 3 (reducescatter at level 0 node): timed out after 2 s"
    run hang "$data/stall" --json
    expect_rc 0
    check_json '
(c,) = d["comms"]
assert c["comm"] == "0xafc0660099afaaf5" and c["size"] == 4, c["comm"]
v = c["divergence"]
assert v["seq"] == 4 and v["kind"] == "stalled", v
late = [g for g in v["groups"] if g["state"] == "late"]
assert len(late) == 1 and late[0]["ranks"] == [3] and late[0]["lateUs"] > 4e6, late
assert [r["rank"] for r in c["ranks"]] == [0, 1, 2, 3]
assert all(r["state"] == "failed" and r["seq"] == 4 for r in c["ranks"]), c["ranks"]
'
    ;;

  hang_dead_peer)
    # The same job with rank 3's dump gone, as when its process was killed.
    mkdir "$work/d"
    cp "$data"/stall/flight.[012].jsonl "$work/d/"
    run hang "$work/d"
    expect_rc 0
    same_line "comm 0xafc0660099afaaf5: ranks 0,2 failed in allreduce #4 (1048576 float32 sum) at step 2 of 3 (allreduce at level 1 network), rank 1 at step 1 of 3 (reducescatter at level 0 node); rank 3: no dump (the process died, or never reached a dump)"
    same_line "  rank 3: no dump (the process died, or never reached a dump)"
    lacks "stalled"
    run hang "$work/d" --json
    check_json '
v = d["comms"][0]["divergence"]
assert v["seq"] == 4 and v["kind"] == "missing", v
assert {"ranks": [3], "state": "no dump"} in v["groups"], v
assert d["comms"][0]["ranks"][3] == {"rank": 3, "dump": False,
    "text": "no dump (the process died, or never reached a dump)"}
'
    ;;

  hang_lost)
    # A real job (4 ranks on 2 emulated hosts, strataCommInitRank) whose rank 3 was killed in
    # allreduce #51: the three survivors failed within tens of milliseconds and dumped; their
    # dumps name the lost rank, which left none.
    run hang "$data/lost"
    expect_rc 0
    has "comm 0x249f302337a1d276: rank 3 was lost (its process is gone: its connections closed without a goodbye"
    has "as ranks 0-2 report; ranks 0-1 failed in allreduce #51 (1024 float32 sum) at step 2 of 3"
    same_line "  rank 3: lost: its process is gone: its connections closed without a goodbye (it crashed, was killed, or exited without destroying its communicators)"
    run hang "$data/lost" --json
    expect_rc 0
    check_json '
(c,) = d["comms"]
assert [(x["rank"], x["reportedBy"]) for x in c["lost"]] == [(3, [0, 1, 2])], c["lost"]
assert " found it lost" not in c["lost"][0]["why"], c["lost"]
assert c["ranks"][3]["dump"] is False and c["ranks"][3]["text"].startswith("lost: "), c["ranks"][3]
'
    # Without the lost field (dumps of a strata before it), nobody is named lost.
    mkdir "$work/old"
    for f in "$data"/lost/*.jsonl; do
      python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read()); d.pop("lost"); print(json.dumps(d))' "$f" >"$work/old/$(basename "$f")"
    done
    run hang "$work/old"
    expect_rc 0
    lacks "was lost ("
    ;;

  hang_count_mismatch)
    # strata_mpi_faults --scenario count-mismatch: rank 1 passed half the count.
    run hang "$data/count_mismatch"
    expect_rc 0
    same_line "comm 0xd3dec57d9ef5d23c: rank 1 is in allreduce #1 with 524288 float32, ranks 0,2-3 with 1048576 float32"
    has "  rank 1 (host h1): allreduce #1 (524288 float32 sum) failed at step 1 of 3 (reducescatter at level 0): the ranks disagree on a collective"
    run hang "$data/count_mismatch" --json
    check_json '
v = d["comms"][0]["divergence"]
assert v["seq"] == 1 and v["kind"] == "differs", v
assert [(g["ranks"], g["count"]) for g in v["groups"]] == [([1], 524288), ([0, 2, 3], 1048576)]
'
    # Only what differs is named: an op, then a collective.
    mkdir "$work/m"
    cp "$data"/count_mismatch/*.jsonl "$work/m/"
    edit_dump "$work/m/flight.1.jsonl" 'd["calls"][0]["count"] = 1048576'
    edit_dump "$work/m/flight.2.jsonl" 'd["calls"][0]["op"] = "max"'
    run hang "$work/m"
    expect_rc 0
    has ": rank 2 is in allreduce #1 with op max, ranks 0-1,3 with op sum"
    edit_dump "$work/m/flight.2.jsonl" 'd["calls"][0].update(collective="broadcast", op=None)'
    run hang "$work/m"
    expect_rc 0
    has ": rank 2 is in broadcast #1 (1048576 float32, root 0), ranks 0-1,3 in allreduce #1 (1048576 float32 sum, root 0)"
    ;;

  hang_never_issued)
    # Rank 2 never issued allreduce #4 (hand-written, with the levels' names). Rank 0's file
    # holds an older dump (its #4 only issued) before the latest (running): the latest counts.
    run hang "$data/never_issued"
    expect_rc 0
    same_line "comm 0x5e1f00000000cafe: ranks 0-1 wait in allreduce #4 (1048576 float32 sum) at step 2 of 3 (allreduce at level 1 network), rank 3 at step 1 of 3 (reducescatter at level 0 node); rank 2 never issued allreduce #4: its last call is allreduce #3, done"
    same_line "  rank 2 (host b): idle: last call #3 done (allreduce)"
    same_line "  rank 0 (host a): allreduce #4 (1048576 float32 sum) running at step 2 of 3 (allreduce at level 1 network)"
    run hang "$data/never_issued" --json
    check_json '
v = d["comms"][0]["divergence"]
assert v["seq"] == 4 and v["kind"] == "missing", v
assert v["groups"][-1] == {"ranks": [2], "state": "never issued",
    "last": {"seq": 3, "collective": "allreduce", "state": "done"}}, v["groups"]
'
    # Another file holding rank 2: the newest file wins.
    mkdir "$work/n"
    cp "$data"/never_issued/*.jsonl "$work/n/"
    cp "$data/never_issued/flight.1.jsonl" "$work/n/copy.jsonl"
    edit_dump "$work/n/copy.jsonl" 'd.update(rank=2, host="b")'
    touch -d "2020-01-01" "$work/n/copy.jsonl"
    run hang "$work/n"
    has "rank 2 never issued allreduce #4"
    touch -d "2030-01-01" "$work/n/copy.jsonl"
    run hang "$work/n"
    expect_rc 0
    has "no divergence: every rank made the same calls up to #4; ranks 0-2 wait in allreduce #4 (1048576 float32 sum) at step 2 of 3"
    lacks "never issued"
    # Rank 2 finished #4 while the others wait in it: stalled.
    cp "$data/never_issued/flight.1.jsonl" "$work/n/copy.jsonl"
    edit_dump "$work/n/copy.jsonl" 'd.update(rank=2, host="b"); d["calls"][-1].update(state="done", endedUs=130000)'
    run hang "$work/n"
    expect_rc 0
    has "; rank 2 finished allreduce #4 (1048576 float32 sum)"
    run hang "$work/n" --json
    check_json 'assert d["comms"][0]["divergence"]["kind"] == "stalled", d'
    ;;

  hang_agree)
    # Two communicators whose ranks agree: one idle (rank 0's recorder no longer holds #1),
    # one with both ranks in the same step of allreduce #2.
    run hang "$data/agree"
    expect_rc 0
    same_line "comm 0x00000000000beef0: no divergence: every rank made the same calls up to #5; all are idle"
    same_line "comm 0x00000000000f00d0: no divergence: every rank made the same calls up to #2; ranks 0-1 wait in allreduce #2 (1048576 float32 sum) at step 1 of 1 (allreduce at level 0 node)"
    same_line "  rank 1 (host a): idle: last call #5 done (allreduce)"
    run hang "$data/agree" --json
    check_json '
assert [c["divergence"] for c in d["comms"]] == [None, None], d
assert [c["comm"] for c in d["comms"]] == ["0x00000000000beef0", "0x00000000000f00d0"]
'
    ;;
  live_timeline)
    # STRATA_TRACE on a real job: strata-perf, 4 ranks as 2 emulated hosts (levels node/shm and
    # network/ucx, the default engine), 1 MiB allreduces: 2 warm-up calls, 4 timed and 1 checked, out of place and
    # in place, so 14 calls per rank. Each rank's file must hold them with their steps; merge and
    # summary must take the files as they are.
    mkdir "$work/t"
    STRATA_TRACE="$work/t/trace.%r.json" mpirun -n 4 sh "${HOSTNAME_BY_RANK:?}" 2 \
      "${PERF_BIN:?}" -b 1M -e 1M -w 2 -n 4
    expect_rc 0
    "$python" - "$work/t" <<'PYEOF' || fail "the timeline files are not what they should be"
import collections, json, os, sys
d = sys.argv[1]
files = sorted(os.listdir(d))
assert files == ["trace.%d.json" % r for r in range(4)], files
for r in range(4):
    ev = json.load(open(os.path.join(d, "trace.%d.json" % r)))
    meta = [e for e in ev if e.get("ph") == "M" and e["name"] == "strata"]
    assert len(meta) == 1, meta
    m = meta[0]["args"]
    assert (m["rank"], m["size"]) == (r, 4), m
    assert [(l["name"], l["fabric"], l["size"]) for l in m["levels"]] == \
        [("node", "shm", 2), ("network", "ucx", 2)], m["levels"]
    calls = [e for e in ev if e.get("cat") == "call"]
    assert len(calls) == 14, len(calls)
    for c in calls:
        a = c["args"]
        assert a["collective"] == "allreduce" and a["count"] == 262144, a
        assert a["bytes"] == 1 << 20 and a["type"] == "float32", a
        assert c["dur"] > 0 and c["pid"] == r, c
    steps = collections.defaultdict(list)
    for e in ev:
        if e.get("cat") == "step":
            steps[e["args"]["seq"]].append(e)
    assert sorted(steps) == sorted(c["args"]["seq"] for c in calls), sorted(steps)
    for c in calls:
        s = steps[c["args"]["seq"]]
        levels = sorted({(x["args"]["levelName"], x["args"]["fabric"]) for x in s})
        assert levels == [("network", "ucx"), ("node", "shm")], levels
        # The steps run inside the call, one after another.
        for x in s:
            assert c["ts"] - 1 <= x["ts"] and x["ts"] + x["dur"] <= c["ts"] + c["dur"] + 1, (c, x)
PYEOF
    run merge "$work/t"
    expect_rc 0
    has "merged 4 timeline files into $work/t/merged.json"
    run summary "$work/t" --json
    expect_rc 0
    check_json '
c = d["comms"][0]
levels = {l["name"]: l for l in c["levels"]}
assert set(levels) == {"node", "network"}, levels
for l in levels.values():
    assert l["steps"] > 0 and l["GBps"] > 0 and l["wireBytes"] > 0, l
'
    # Nonblocking 4 KiB allreduces, 8 in flight: the fusion queue packs them. The timeline must
    # show the packs' waits, agreements and copies, inside the time between issue and end.
    mkdir "$work/f"
    STRATA_TRACE="$work/f/trace.%r.json" mpirun -n 2 "$PERF_BIN" --nonblocking --inflight 8 \
      -b 4K -e 4K -w 1 -n 4
    expect_rc 0
    "$python" - "$work/f" <<'PYEOF' || fail "the fusion packs are not on the timeline"
import json, os, sys
for r in range(2):
    ev = [e for e in json.load(open(os.path.join(sys.argv[1], "trace.%d.json" % r)))
          if e.get("ph") == "X"]
    names = {e["name"] for e in ev}
    for want in ["fusion agreement", "fusion pack", "fusion unpack"]:
        assert want in names, (r, want, sorted(names))
    agreements = [e for e in ev if e["name"] == "fusion agreement"]
    assert all(e["cat"] == "wait" and e["args"]["fabric"] for e in agreements), agreements[:2]
PYEOF
    ;;

  live_nvtx)
    # NVTX ranges (CUDA builds), seen by a stand-in NVTX tool loaded as Nsight Systems is
    # (NVTX_CAPTURE_LIB: tests/tools/nvtx/nvtx_capture.cc; no GPU needed). The same job as
    # live_timeline: with STRATA_TRACE too, the ranges must be the timeline's spans by name and
    # number (all but the "queue" waits, which are known only once the call starts); with the
    # tool alone, ranges and no file; with STRATA_NVTX=0, no range; STRATA_NVTX=2 is refused.
    lib=${NVTX_CAPTURE_LIB:?}
    perf=("${PERF_BIN:?}" -b 1M -e 1M -w 2 -n 4)
    mkdir "$work/both" "$work/nvtx" "$work/off"
    NVTX_INJECTION64_PATH=$lib NVTX_CAPTURE_DIR=$work/both STRATA_TRACE="$work/both/trace.%r.json" \
      mpirun -n 4 sh "${HOSTNAME_BY_RANK:?}" 2 "${perf[@]}"
    expect_rc 0
    NVTX_INJECTION64_PATH=$lib NVTX_CAPTURE_DIR=$work/nvtx mpirun -n 4 sh "$HOSTNAME_BY_RANK" 2 \
      "${perf[@]}"
    expect_rc 0
    NVTX_INJECTION64_PATH=$lib NVTX_CAPTURE_DIR=$work/off STRATA_NVTX=0 \
      mpirun -n 4 sh "$HOSTNAME_BY_RANK" 2 "${perf[@]}"
    expect_rc 0
    "$python" - "$work" <<'PYEOF' || fail "the NVTX ranges are not the timeline's spans"
import collections, glob, json, os, sys
w = sys.argv[1]

def ranges(d):
    """Per process: the (category, message) of each range, checked to be closed once."""
    out = []
    for log in sorted(glob.glob(os.path.join(d, "nvtx.*.log"))):
        lines = open(log).read().splitlines()
        assert lines[0] == "injected", (log, lines[:2])
        domains = {l.split()[1]: l.split(None, 2)[2] for l in lines if l.startswith("domain ")}
        assert list(domains.values()) == ["strata"], domains
        cats = {int(l.split()[2]): l.split(None, 3)[3] for l in lines if l.startswith("category ")}
        assert cats == {1: "call", 2: "step", 3: "wait", 4: "fusion", 5: "compress",
                        6: "staging"}, cats
        open_, got = {}, []
        for l in lines:
            if l.startswith("start "):
                _, dom, rid, cat, msg = l.split(" ", 4)
                assert rid not in open_, l
                open_[rid] = (cats[int(cat)], msg)
                got.append(open_[rid])
            elif l.startswith("end "):
                _, dom, rid = l.split()
                assert rid in open_, ("an end without a start", l)
                del open_[rid]
        assert not open_, ("ranges never ended", log, open_)
        out.append(got)
    return out

both = ranges(os.path.join(w, "both"))
assert len(both) == 4, len(both)
nvtx = collections.Counter(r for proc in both for r in proc)
trace = collections.Counter()
for f in glob.glob(os.path.join(w, "both", "trace.*.json")):
    for e in json.load(open(f)):
        if e.get("ph") == "X" and e["name"] != "queue":
            trace[(e["cat"], e["name"])] += 1
assert sum(trace.values()) > 0 and nvtx == trace, (nvtx - trace, trace - nvtx)
calls = [m for c, m in nvtx if c == "call"]
assert nvtx[("call", "allreduce #1")] == 4 and len(calls) == 14, calls
assert {m for c, m in nvtx if c == "step"} >= {"reducescatter node/shm", "allgather node/shm"}, nvtx

alone = ranges(os.path.join(w, "nvtx"))
assert len(alone) == 4 and not glob.glob(os.path.join(w, "nvtx", "*.json")), os.listdir(w + "/nvtx")
for proc in alone:
    assert sum(1 for c, m in proc if c == "call") == 14, proc
    assert any(c == "step" and m.endswith("network/ucx") for c, m in proc), proc

for log in glob.glob(os.path.join(w, "off", "nvtx.*.log")):
    assert not any(l.startswith(("start ", "domain ")) for l in open(log)), log
PYEOF
    STRATA_NVTX=2 mpirun -n 2 "${perf[@]}"
    [ "$rc" -ne 0 ] || fail "STRATA_NVTX=2 was accepted"
    grep -q "STRATA_NVTX=2: expected 0 or 1" "$out" "$err" || fail "no message about STRATA_NVTX=2"
    ;;

  live_device)
    # A GPU machine's check (labelled gpu; without a GPU strata-perf exits 77 and so does this):
    # device allreduces of 2 ranks as 2 hosts sharing the GPU, so the network level runs on the
    # staged fabric (NCCL refuses members on one GPU) behind the progress thread's stream gate.
    # The timeline must show the gate's wait and the staging copies inside the calls, and the
    # calls' route (joined: the host stage is a call event of its own).
    mkdir "$work/d"
    STRATA_TRACE="$work/d/trace.%r.json" mpirun -n 2 sh "${HOSTNAME_BY_RANK:?}" 1 \
      "${PERF_BIN:?}" --device -b 4M -e 4M -w 1 -n 2
    [ "$rc" -eq 77 ] && { echo "no GPU: skipped"; exit 77; }
    expect_rc 0
    "$python" - "$work/d" <<'PYEOF' || fail "the device timeline lacks the gate or the staging copies"
import json, os, sys
for r in range(2):
    ev = json.load(open(os.path.join(sys.argv[1], "trace.%d.json" % r)))
    names = {(e.get("cat"), e.get("name")) for e in ev if e.get("ph") == "X"}
    for want in [("wait", "stream gate"), ("staging", "staging copy down"),
                 ("staging", "staging copy up")]:
        assert want in names, (r, want, sorted(names))
    steps = [e for e in ev if e.get("cat") == "step"]
    assert any(e["args"]["fabric"].endswith("-staged") for e in steps), steps[:3]
    staging = [e for e in ev if e.get("cat") == "staging"]
    assert all(e["args"]["bytes"] > 0 for e in staging), staging[:3]
    # Each call's route: joined (a host stage behind the gate), its host stage a call event.
    calls = [e for e in ev if e.get("cat") == "call"]
    assert calls and all(e["args"].get("route") == "joined" for e in calls), calls[:3]
    assert any(e["args"].get("part") == "host stage" for e in calls), calls[:3]
PYEOF
    ;;

  live_stall | live_dead_peer | live_skip)
    # Dumps a fault entry of tests/mpi just wrote (LIVE_DUMPS: its build folder): whatever the
    # communicator's hash, the verdict must name rank 3 and the call.
    live=${LIVE_DUMPS:?}
    prefix=flight.stall.np4.hosts_2_2
    [ "$case_name" = live_skip ] && prefix=flight.skip
    ranks="0 1 2 3"
    [ "$case_name" = live_dead_peer ] && ranks="0 1 2"
    mkdir "$work/live"
    for r in $ranks; do
      cp "$live/$prefix.$r.jsonl" "$work/live/" || fail "no dump $live/$prefix.$r.jsonl"
    done
    run hang "$work/live"
    expect_rc 0
    case "$case_name" in
      live_stall) verdict="rank 3 stalled: issued allreduce #4" ;;
      live_dead_peer) verdict="rank 3: no dump (the process died, or never reached a dump)" ;;
      live_skip) verdict="rank 3 never issued allreduce #5: its last call is allreduce #4, done" ;;
    esac
    grep -E "^comm 0x[0-9a-f]+: " "$out" | grep -qF -- "$verdict" ||
      fail "the verdict line lacks '$verdict'"
    ;;


  *)
    echo "unknown case $case_name" >&2
    exit 2
    ;;
esac
echo "PASS ($case_name)"
