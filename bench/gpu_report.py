#!/usr/bin/env python3
"""Writes results.md (to stdout) for a bench/gpu results folder: what was measured and how, the
environment, and tables of the numbers in the raw outputs. No conclusions are drawn here.

  bench/gpu_report.py bench/results/<label> > results.md

Reads env.txt, commands.txt, kernels.json (strata-kernels --device --json), and the strata-perf
--json files ar64-device.json, ar64-host.json, sweep-device.json and sweep-host.json, plus the
"# Device ..." header lines of ar64-device.txt. Python 3 standard library only.
"""
import json
import os
import sys

PLACEMENTS = (("oop", "out of place"), ("ip", "in place"))


def size_text(b):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift} {unit}"
    return f"{b} B"


def read_text(folder, name):
    path = os.path.join(folder, name)
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def read_json(folder, name):
    text = read_text(folder, name)
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as e:
        sys.exit(f"bench/gpu_report.py: {os.path.join(folder, name)}: not JSON: {e}")


def num(x, digits=2):
    return "n/a" if x is None else f"{x:.{digits}f}"


def wrong(m):
    return "n/a" if m.get("wrong", -1) < 0 else str(m["wrong"])


def header_lines(text, prefix):
    return [line for line in (text or "").splitlines() if line.startswith(prefix)]


def perf_rows(doc):
    """{size: row} of a strata-perf JSON document (None: an empty dict)."""
    return {r["size"]: r for r in (doc or {}).get("rows", [])}


def ratio(a, b):
    return a / b if a and b else None


def kernels_section(folder, out):
    doc = read_json(folder, "kernels.json")
    out.append("## (1) strata-kernels --device: reduction kernel vs device copy\n")
    if doc is None:
        out.append("kernels.json is missing: this part did not run.\n")
        return
    dev = doc.get("device", {})
    out.append(f"Device: {dev.get('name', '?')}, compute capability "
               f"{dev.get('compute_capability', '?')}, {dev.get('sms', '?')} SMs, "
               f"{num(dev.get('memory_bytes', 0) / (1 << 30), 1)} GiB. "
               f"Median of {doc.get('iters', '?')} rounds after {doc.get('warmup_calls', '?')} "
               "warm-up calls, CUDA events on one stream. GB/s = bytes moved / time / 1e9 with "
               "S = one buffer's size: copy (cudaMemcpyAsync device to device) moves 2S, "
               "reduceMany over 2 sources into a separate destination 3S. "
               "% of copy = reduceMany GB/s / copy GB/s at the same size.\n")
    by_type = {}
    for r in doc.get("results", []):
        by_type.setdefault((r["type"], r["op"]), []).append(r)
    for (type_name, op), rows in by_type.items():
        out.append(f"### {type_name} {op}\n")
        out.append("| size | copy GB/s | reduceMany k=2 GB/s | % of copy |")
        out.append("|---:|---:|---:|---:|")
        for r in sorted(rows, key=lambda r: r["bytes"]):
            pct = ratio(r["reduce_many_gbps"], r["copy_gbps"])
            out.append(f"| {size_text(r['bytes'])} | {num(r['copy_gbps'])} | "
                       f"{num(r['reduce_many_gbps'])} | "
                       f"{'n/a' if pct is None else f'{100 * pct:.0f}%'} |")
        out.append("")


def run_line(doc, device):
    if doc is None:
        return "missing"
    if ("--device" in doc.get("argv", [])) != device:
        return (f"**its argv {'lacks' if device else 'has'} --device**: "
                f"{' '.join(doc.get('argv', []))}")
    return (f"{doc.get('nranks')} ranks on {doc.get('nhosts')} host(s), {doc.get('collective')} "
            f"{doc.get('datatype')} {doc.get('op')}, -n {doc.get('iters')} -w "
            f"{doc.get('warmup')} -c {doc.get('check')}, wrong elements in total: "
            f"{doc.get('wrong_total')}, ok: {doc.get('ok')}")


def ar64_section(folder, out):
    dev, host = read_json(folder, "ar64-device.json"), read_json(folder, "ar64-host.json")
    out.append("## (2) allreduce 64 MiB, device buffers vs host buffers\n")
    out.append(f"- device buffers: {run_line(dev, True)}")
    out.append(f"- host buffers: {run_line(host, False)}")
    for line in header_lines(read_text(folder, "ar64-device.txt"), "# Device"):
        out.append(f"- strata-perf header: `{line.lstrip('# ')}`")
    out.append("")
    if dev is None or host is None:
        out.append("A run is missing: no table.\n")
        return
    size = 64 << 20
    drow, hrow = perf_rows(dev).get(size), perf_rows(host).get(size)
    if drow is None or hrow is None:
        out.append(f"No {size_text(size)} row in both runs: no table.\n")
        return
    out.append("| buffers | placement | time (us) | algbw (GB/s) | busbw (GB/s) | #wrong |")
    out.append("|---|---|---:|---:|---:|---:|")
    for label, row in (("device", drow), ("host", hrow)):
        for key, name in PLACEMENTS:
            m = row["strata"][key]
            out.append(f"| {label} | {name} | {num(m['time_us'], 1)} | {num(m['algbw'])} | "
                       f"{num(m['busbw'])} | {wrong(m)} |")
    out.append("")
    out.append("Ratio of times at 64 MiB, device / host (> 1: the device-buffer call takes "
               "longer):\n")
    out.append("| placement | device time (us) | host time (us) | device / host |")
    out.append("|---|---:|---:|---:|")
    for key, name in PLACEMENTS:
        d, h = drow["strata"][key]["time_us"], hrow["strata"][key]["time_us"]
        out.append(f"| {name} | {num(d, 1)} | {num(h, 1)} | {num(ratio(d, h), 3)} |")
    out.append("")


def sweep_section(folder, out):
    dev, host = read_json(folder, "sweep-device.json"), read_json(folder, "sweep-host.json")
    out.append("## (3) allreduce sweep, device buffers vs host buffers\n")
    out.append(f"- device buffers: {run_line(dev, True)}")
    out.append(f"- host buffers: {run_line(host, False)}\n")
    drows, hrows = perf_rows(dev), perf_rows(host)
    sizes = sorted(set(drows) | set(hrows))
    if not sizes:
        out.append("No rows: no table.\n")
        return
    for key, name in PLACEMENTS:
        out.append(f"### {name}\n")
        out.append("| size | device time (us) | host time (us) | device / host | "
                   "device busbw (GB/s) | host busbw (GB/s) | #wrong device | #wrong host |")
        out.append("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for s in sizes:
            d = drows[s]["strata"][key] if s in drows else {}
            h = hrows[s]["strata"][key] if s in hrows else {}
            out.append(f"| {size_text(s)} | {num(d.get('time_us'), 1)} | "
                       f"{num(h.get('time_us'), 1)} | "
                       f"{num(ratio(d.get('time_us'), h.get('time_us')), 3)} | "
                       f"{num(d.get('busbw'))} | {num(h.get('busbw'))} | "
                       f"{wrong(d) if d else 'n/a'} | {wrong(h) if h else 'n/a'} |")
        out.append("")


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        sys.exit(__doc__)
    folder = sys.argv[1]
    if not os.path.isdir(folder):
        sys.exit(f"bench/gpu_report.py: {folder}: not a folder")
    env = read_text(folder, "env.txt") or "(env.txt missing)\n"
    label = os.path.basename(os.path.normpath(folder))
    quick = any(line.strip() == "quick: 1" for line in env.splitlines())
    out = [f"# strata GPU measurement: {label}\n"]
    if quick:
        out.append("**--quick run** (fewer sizes and iterations): a smoke test, not a record.\n")
    out.append(
        "Written by bench/gpu and bench/gpu_report.py from the raw outputs in this folder; "
        "every number below is parsed from them.\n\n"
        "What was measured, on one machine with one NVIDIA GPU:\n\n"
        "1. strata's device reduction kernel (gpu::reduceMany, 2 sources, separate destination, "
        "sum) against a device-to-device cudaMemcpyAsync of the same size, per element type "
        "(`strata-kernels --device`).\n"
        "2. strataAllReduce (float, sum) on 2 MPI ranks sharing the GPU at 64 MiB, once with "
        "CUDA device buffers (`strata-perf --device`: the call is ordered on a non-blocking "
        "stream; with two ranks on one GPU strata runs it on its staged fabric, through pinned "
        "host memory, unless MPI reports CUDA support) and once with host buffers (the same "
        "command without --device).\n"
        "3. For context, the same two runs over a sweep of sizes (4 MiB .. 256 MiB, x4; "
        "--quick: 4 and 64 MiB).\n\n"
        "How strata-perf times (nccl-tests' method): a barrier, then -n calls back to back after "
        "-w warm-up calls, the mean time per call on the host (MPI_Wtime), averaged over ranks "
        "(-a 1). With --device each call is followed by cudaStreamSynchronize inside the timed "
        "loop, so a time is the call's completion, as a host call's is when it returns. After "
        "the timing, one checked call per placement (-c 1) compares every element with the "
        "exact result (#wrong). algbw = size / time; busbw = algbw * 2(n-1)/n.\n")
    out.append("## Commands\n")
    out.append("```")
    out.append((read_text(folder, "commands.txt") or "(commands.txt missing)\n").rstrip())
    out.append("```\n")
    out.append("## Environment\n")
    out.append("```")
    out.append(env.rstrip())
    out.append("```\n")
    kernels_section(folder, out)
    ar64_section(folder, out)
    sweep_section(folder, out)
    print("\n".join(out).rstrip())


if __name__ == "__main__":
    main()
