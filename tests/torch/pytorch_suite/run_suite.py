#!/usr/bin/python3
"""Runs PyTorch's own distributed test suite (distributed_test.py, class
DistributedTest._DistTestBase) against one backend, strata or gloo, at one world size, under
PyTorch's multi-process harness: each test starts WORLD_SIZE ranks, which initialise the backend
through file:// (what test/distributed/test_distributed_spawn.py does in PyTorch's repository).

    PYTHONPATH=build/python /usr/bin/python3 tests/torch/pytorch_suite/run_suite.py \\
        --backend strata --world-size 2 [--start fork] \\
        [--select ci|collectives|subgroups|ddp-cpu|all] \\
        [-k SUBSTRING] [--json strata.json]
    /usr/bin/python3 tests/torch/pytorch_suite/run_suite.py --compare gloo.json strata.json

Every test ends as one of:
  PASS   passed
  FAIL   failed or errored, and not on the expected list: the run fails
  XFAIL  failed, as the expected list says (expected.txt; its reason, then the error)
  XPASS  on the expected-failure list but passed: the run fails ("now passes, remove from list")
  SKIP   skipped, by PyTorch's decorators or a rank's skip exit code (with PyTorch's reason), or
         by a "skip" entry of the list; never counted as a pass

The expected list is the running PyTorch's own (LISTS: expected.txt for 1.13,
expected-2.11.txt for 2.11, expected-2.15.txt for 2.15), unless --expected names one; a PyTorch release without a list
fails the run, since its suite differs.

Exit status: 0 when no test FAILed or XPASSed, 1 otherwise, 77 when this interpreter has no
torch.distributed with Gloo (ctest's SKIP_RETURN_CODE). With --backend strata, strata_torch not
importable is a failure, not a skip.
"""
import argparse
import fnmatch
import json
import os
import re
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77

# The selections (--select), fnmatch globs on the test name; docs/torch.md says what CI runs
# and why.
# collectives: the tests of the collectives, point-to-point, barriers, groups and the object
# collectives. No DDP or model-averaging test: tests/torch/test_ddp.py and test_stock_hooks.py
# cover DDP against Gloo, and most of the suite's DDP tests need GPUs or NCCL anyway.
COLLECTIVES = [
    "test_all_gather*", "test_all_reduce*", "test_all_to_all*", "test_barrier*",
    "test_batch_isend_irecv*", "test_broadcast*", "test_gather*", "test_scatter*",
    "test_reduce_*", "test_send_recv*", "test_isend*", "test_irecv*", "test_sparse_all_reduce*",
    "test_monitored_barrier*", "test_new_subgroups*", "test_destroy_*", "test_get_backend",
    "test_get_rank*", "test_get_future", "test_Backend_enum_class", "test_backend_*",
    "test_*_object*",
]
# ddp-cpu: the DDP tests that run on CPU tensors, under PyTorch 2 (under Debian's 1.13 they fail
# for every backend: torch.distributed._shard does not import; expected.txt). Under PyTorch 2,
# ci is collectives and ddp-cpu at every world size: every test Gloo passes on CPU at 2 and 3
# ranks (--select all shows the same passes for Gloo at 2 and 3 ranks with PyTorch 2.11).
CPU_DDP = [
    "test_DistributedDataParallelCPU*", "test_DistributedDataParallel_requires_grad",
    "test_accumulate_gradients_no_sync*", "test_ddp_create_graph", "test_ddp_logging_data_cpu",
    "test_dump_DDP_relevant_env_vars", "test_grads_same_across_ranks_with_no_sync",
    "test_static_graph_api_cpu",
]
# Left out of every selection but all: tests that need GPUs (or NCCL). Without them they skip,
# but only after every rank has initialised the backend (1 to 2 s a test for strata on 2 cores).
NEEDS_GPU = ["*cuda*", "*multigpu*", "*nccl*"]
# subgroups: the collectives' variants over the subgroup [1, 2] (the suite's _init_group_test),
# which PyTorch skips below 3 ranks; not the full-group variants, which world size 2 runs.
SUBGROUPS = ["*_group", "*_group_*"]
NOT_SUBGROUPS = ["*full_group*", "test_new_subgroups*"]

OUTCOMES = ["pass", "fail", "xfail", "xpass", "skip"]

# The expected list of each PyTorch release (major.minor) the suite has been run against: its
# suite, and what a backend can pass, differ from release to release.
LISTS = {"1.13": "expected.txt", "2.11": "expected-2.11.txt", "2.15": "expected-2.15.txt"}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", choices=["strata", "gloo"], default="strata")
    p.add_argument("--world-size", type=int, default=2)
    p.add_argument("--start", choices=["spawn", "fork"], default="spawn",
                   help="how the harness starts the ranks: spawn (fresh interpreters, as "
                        "test_distributed_spawn.py; the default) or fork (the same harness "
                        "with forked ranks; 4-7x faster on 2 cores; CI's choice)")
    p.add_argument("--select", choices=["ci", "collectives", "subgroups", "ddp-cpu", "all"],
                   default="ci",
                   help="collectives: the collective, point-to-point, barrier, group and "
                        "object tests that run without a GPU; subgroups: their variants over "
                        "the subgroup [1, 2] (world size 3 or more); ddp-cpu: the DDP tests "
                        "on CPU tensors; ci (default): under PyTorch 1.13 collectives at "
                        "world size 2, subgroups above it; under PyTorch 2 collectives and "
                        "ddp-cpu at every world size (its subgroup variants need 8 ranks); "
                        "all: the whole class")
    p.add_argument("-k", dest="keywords", action="append", default=[],
                   help="of those, only tests whose name contains this (repeatable)")
    p.add_argument("--expected",
                   help="the list of expected failures and skips (default: the running "
                        "PyTorch's own list here, by its release: " + ", ".join(
                            f"{r}: {f}" for r, f in sorted(LISTS.items())) + "; a release "
                        "without a list fails the run)")
    p.add_argument("--test-timeout", type=int, default=120,
                   help="seconds a test's ranks may run before the harness kills them (120)")
    p.add_argument("--json", help="write every test's outcome to this file")
    p.add_argument("--list", action="store_true",
                   help="print the selected tests and PyTorch's own collection skips; run none")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="let every test's output through (default: only FAIL's and XPASS's)")
    p.add_argument("--compare", nargs=2, metavar=("GLOO_JSON", "OTHER_JSON"),
                   help="read two --json results and print the tests the first passes and the "
                        "second does not; runs nothing")
    return p.parse_args(argv)


# ---------------------------------------------------------------------------------------------
# The expected list (expected.txt)

class Entry:
    def __init__(self, pattern, backends, worlds, kind, reason, where):
        self.pattern, self.backends, self.worlds = pattern, backends, worlds
        self.kind, self.reason, self.where = kind, reason, where

    def applies(self, name, kind, backend, world):
        return (self.kind == kind and fnmatch.fnmatchcase(name, self.pattern)
                and (self.backends == ["*"] or backend in self.backends)
                and (self.worlds == ["*"] or str(world) in self.worlds))


def read_expected(path):
    """One entry a line: `<test> <backends> <world sizes> <kind> <reason...>` (expected.txt's
    header explains them); '#' starts a comment line."""
    entries = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            where = f"{os.path.basename(path)}:{n}"
            fields = line.split(None, 4)
            if len(fields) < 5:
                raise SystemExit(f"{where}: expected <test> <backends> <world sizes> <kind> "
                                 f"<reason>, got {line!r}")
            pattern, backends, worlds, kind, reason = fields
            if kind not in ("fail", "skip", "run"):
                raise SystemExit(f"{where}: kind {kind!r}: expected fail, skip or run")
            entries.append(Entry(pattern, backends.split(","), worlds.split(","), kind, reason,
                                 where))
    return entries


def expected_list(args):
    """The path of the expected list: --expected, or the one of the running PyTorch's release;
    None (after saying why) for a release that has none."""
    if args.expected:
        return args.expected
    import torch
    release = ".".join(torch.__version__.split("+")[0].split(".")[:2])
    if release not in LISTS:
        print(f"FAIL: no expected list for PyTorch {torch.__version__} (lists: " + ", ".join(
            f"{r} {f}" for r, f in sorted(LISTS.items())) + "). Run the suite for gloo and "
            "for strata with --expected /dev/null --json, compare them (--compare), write "
            f"expected-{release}.txt with a reason per exception and add it to LISTS in "
            f"{os.path.basename(__file__)}", flush=True)
        return None
    return os.path.join(HERE, LISTS[release])


def entry_for(entries, name, kind, backend, world):
    return next((e for e in entries if e.applies(name, kind, backend, world)), None)


# ---------------------------------------------------------------------------------------------
# Selecting and running

def matches(name, patterns):
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def select(names, args):
    import torch
    which = args.select
    patterns = COLLECTIVES
    if which == "ci" and int(torch.__version__.split(".")[0]) >= 2:
        # PyTorch 2 runs the subgroup variants from 8 ranks only (skip_if_small_worldsize);
        # at 3 ranks the full-world tests run on a world that is not a power of two.
        which, patterns = "collectives", COLLECTIVES + CPU_DDP
    elif which == "ci":
        which = "collectives" if args.world_size <= 2 else "subgroups"
    elif which == "ddp-cpu":
        patterns = CPU_DDP
    chosen = names
    if which != "all":
        chosen = [n for n in chosen if matches(n, patterns) and not matches(n, NEEDS_GPU)]
    if which == "subgroups":
        chosen = [n for n in chosen if matches(n, SUBGROUPS) and not matches(n, NOT_SUBGROUPS)]
    if args.keywords:
        chosen = [n for n in chosen if any(k in n for k in args.keywords)]
    return chosen


class Capture:
    """Points file descriptors 1 and 2 at a temporary file while a test runs, so that its ranks
    (which inherit them) and the harness's logging land there; the driver shows the output of
    the tests that FAIL or XPASS only."""

    def __enter__(self):
        sys.stdout.flush()
        sys.stderr.flush()
        self.saved = os.dup(1), os.dup(2)
        self.file = tempfile.TemporaryFile()
        os.dup2(self.file.fileno(), 1)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, saved in zip((1, 2), self.saved):
            os.dup2(saved, fd)
            os.close(saved)
        self.file.seek(0)
        self.text = self.file.read().decode(errors="replace")
        self.file.close()
        return False


ERROR_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit)\b(: .*)?$")
HARNESS_ERROR = re.compile(r"^RuntimeError: Process \d+ ")
FRAME_LINE = re.compile(r"^frame #\d+: ")


def rank_error(trace):
    """The rank's own error in the harness's report: the last `SomeError: message` line other
    than the harness's wrapper (`RuntimeError: Process N exited with error code ...`)."""
    found = None
    for line in trace.splitlines():
        if ERROR_LINE.match(line) and not HARNESS_ERROR.match(line):
            found = line
    found = found or trace.strip().splitlines()[-1]
    return found if len(found) <= 240 else found[:237] + "..."


def without_frames(text):
    """The output without C++ stack frames (the harness sets TORCH_SHOW_CPP_STACKTRACES in every
    rank: some 30 lines per error that say nothing about the backend)."""
    return "\n".join(line for line in text.splitlines() if not FRAME_LINE.match(line))


def run_one(suite, name, verbose):
    """Runs one test through unittest; returns (outcome, reason, seconds, output)."""
    import unittest
    result = unittest.TestResult()
    start = time.monotonic()
    text = ""
    if verbose:
        suite.TestDistBackendWithSpawn(name).run(result)
    else:
        with Capture() as cap:
            suite.TestDistBackendWithSpawn(name).run(result)
        text = cap.text
    seconds = time.monotonic() - start
    if result.skipped:
        return "skip", result.skipped[0][1], seconds, text
    problems = result.failures + result.errors
    if problems:
        return "fail", rank_error(problems[0][1]), seconds, text + problems[0][1]
    if result.testsRun != 1:
        return "fail", "the test did not run", seconds, text
    return "pass", "", seconds, text


def set_environment(args, run_dir):
    """What the suite reads at import, as test_distributed_spawn.py's callers set it; the ranks
    inherit it. The harness replaces TEMP_DIR per test. INIT_METHOD is the rendezvous that
    test_barrier_timeout_global re-initialises with (each test's own group uses a fresh file)."""
    os.environ.update(BACKEND=args.backend, WORLD_SIZE=str(args.world_size), TEMP_DIR=run_dir,
                      INIT_METHOD=f"file://{run_dir}/shared_init_file",
                      DISTRIBUTED_TESTS_DEFAULT_TIMEOUT=str(args.test_timeout),
                      PYTORCH_SUITE_START=args.start)
    # Sandcastle mode turns skips into passes, and retries hide failures: neither here.
    for var in ("SANDCASTLE", "TW_JOB_USER", "PYTORCH_RETRY_TEST_CASES"):
        os.environ.pop(var, None)
    # common_utils parses sys.argv at import (and spawned ranks get the driver's argv).
    sys.argv = sys.argv[:1]


def load_suite(backend):
    """The suite module, or an exit status: 77 without torch.distributed and Gloo, 1 when the
    backend cannot be loaded."""
    try:
        import torch.distributed as dist
    except ImportError as e:
        print(f"SKIP: torch is not importable by {sys.executable}: {e}")
        return SKIP
    if not dist.is_available() or not dist.is_gloo_available():
        print("SKIP: this torch has no torch.distributed with Gloo")
        return SKIP
    try:
        sys.path.insert(0, HERE)
        import suite
    except ImportError as e:
        print(f"FAIL: importing the suite for backend {backend}: {e!r} "
              f"(PYTHONPATH={os.environ.get('PYTHONPATH')})")
        return 1
    return suite


def main(args):
    # Every temporary file of the run (the harness's file stores, which it never deletes, and
    # its per-test folders) goes into one folder, removed at the end.
    run_dir = tempfile.mkdtemp(prefix="strata-pytorch-suite-")
    tempfile.tempdir = run_dir
    os.environ["TMPDIR"] = run_dir
    try:
        set_environment(args, run_dir)
        suite = load_suite(args.backend)
        if isinstance(suite, int):
            return suite
        path = expected_list(args)
        if path is None:
            return 1
        return run_suite(args, read_expected(path), suite, path)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def run_suite(args, entries, suite, path):
    backend, world = args.backend, args.world_size
    names = suite.test_names()
    for e in entries:
        if not any(fnmatch.fnmatchcase(n, e.pattern) for n in names):
            print(f"FAIL: {e.where}: {e.pattern} matches no test of this PyTorch's suite "
                  "(a stale entry: remove it)")
            return 1
    chosen = select(names, args)
    restricted = {}  # test -> PyTorch's collection skip that a "run" entry overrides
    for name in chosen:
        why = suite.skip_reason(name)
        if why is not None and entry_for(entries, name, "run", backend, world):
            restricted[name] = why
            suite.unrestrict(name)

    print(f"PyTorch's distributed suite: backend {backend}, world size {world}, {len(chosen)} "
          f"of {len(names)} tests (--start {args.start} --select {args.select}"
          + "".join(f" -k {k}" for k in args.keywords) + f"); {suite.versions()}; list "
          f"{path if args.expected else os.path.basename(path)}", flush=True)
    if args.list:
        for name in chosen:
            why = suite.skip_reason(name)
            print(name + (f"  [PyTorch skips it: {why}]" if why else "")
                  + (f"  [run, though PyTorch skips it: {restricted[name]}]"
                     if name in restricted else ""))
        return 0

    results = {}
    counts = dict.fromkeys(OUTCOMES, 0)
    start = time.monotonic()
    for name in chosen:
        collected_skip = suite.skip_reason(name) or restricted.get(name)
        listed_skip = entry_for(entries, name, "skip", backend, world)
        if listed_skip:
            outcome, reason, seconds, text = "skip", f"list: {listed_skip.reason}", 0.0, ""
        else:
            outcome, reason, seconds, text = run_one(suite, name, args.verbose)
        listed_fail = entry_for(entries, name, "fail", backend, world)
        if outcome == "fail" and listed_fail:
            outcome, reason = "xfail", f"{listed_fail.reason} [{reason}]"
        elif outcome == "pass" and listed_fail:
            outcome = "xpass"
            reason = f"now passes, remove from list ({listed_fail.where})"
        counts[outcome] += 1
        results[name] = dict(outcome=outcome, reason=reason, seconds=round(seconds, 2),
                             collected_skip=collected_skip, run_anyway=name in restricted)
        print(f"{outcome.upper():5} {name} ({seconds:.1f} s)" + (f": {reason}" if reason else ""),
              flush=True)
        if outcome in ("fail", "xpass") and text:
            print(f"----- output of {name}\n{without_frames(text).rstrip()}\n----- end of {name}",
                  flush=True)
    total = time.monotonic() - start

    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(backend=backend, world_size=world, start=args.start,
                           select=args.select, keywords=args.keywords, seconds=round(total, 1),
                           versions=suite.versions(), results=results), f, indent=1)
    bad = counts["fail"] + counts["xpass"]
    print(f"backend {backend}, world size {world}, {total:.0f} s: {counts['pass']} passed, "
          f"{bad} failed, {counts['skip']} skipped, {counts['xfail']} expected failures"
          + (f" ({counts['fail']} unexpected failures, {counts['xpass']} unexpected passes)"
             if bad else ""), flush=True)
    return 1 if bad else 0


# ---------------------------------------------------------------------------------------------
# Comparing two runs

def compare(ref_path, other_path):
    """Prints the tests the first run (Gloo's) passes and the second does not, with those
    PyTorch restricts to other backends (skipped at collection for the second only) apart."""
    runs = []
    for path in (ref_path, other_path):
        with open(path) as f:
            runs.append(json.load(f))
    ref, other = runs
    rb, ob = ref["backend"], other["backend"]
    for run in runs:
        n = sum(r["outcome"] == "pass" for r in run["results"].values())
        print(f"{run['backend']:>8} world size {run['world_size']} (--select {run['select']}): "
              f"{n} passed of {len(run['results'])} ({run['seconds']:.0f} s)")

    gaps = [(n, other["results"].get(n)) for n, r in sorted(ref["results"].items())
            if r["outcome"] == "pass" and other["results"].get(n, {}).get("outcome") != "pass"]
    not_run = [(n, r) for n, r in gaps if r and r["collected_skip"] and not r["run_anyway"]
               and not ref["results"][n]["collected_skip"]]
    ran = [(n, r) for n, r in gaps if (n, r) not in not_run]
    print(f"\n{len(gaps)} tests {rb} passes and {ob} does not.")
    print(f"{len(not_run)} of them PyTorch restricts to other backends (not run for {ob}):")
    for n, r in not_run:
        print(f"  {n}: {r['collected_skip']}")
    print(f"{len(ran)} of them ran for {ob}, or were not selected:")
    for n, r in ran:
        if r is None:
            print(f"  {n}: not run for {ob}")
            continue
        note = f" (run, though PyTorch restricts it: {r['collected_skip']})" \
            if r["run_anyway"] else ""
        print(f"  {n}: {r['outcome'].upper()} {r['reason']}{note}")
    extra = [n for n, r in sorted(other["results"].items())
             if r["outcome"] == "pass" and ref["results"].get(n, {}).get("outcome") != "pass"]
    if extra:
        print(f"\n{len(extra)} tests {ob} passes and {rb} does not:")
        for n in extra:
            g = ref["results"].get(n)
            print(f"  {n}: {rb} " + (f"{g['outcome'].upper()} {g['reason']}" if g else
                                      "did not run it"))
    return 0


if __name__ == "__main__":
    args = parse_args(sys.argv[1:])
    sys.exit(compare(*args.compare) if args.compare else main(args))
