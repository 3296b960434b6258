"""Shared setup of the torch backend tests (tests/torch/test_*.py), run under mpiexec, or
without it (tools/strata-run, torchrun's variables) with TORCH_TEST_INIT=env or file.

Every test file starts with `harness.start(watchdog_s)`: it skips (exit 77, ctest's
SKIP_RETURN_CODE) when torch is missing, arms a watchdog so that a hang becomes a failure with
every thread's traceback, and initialises torch.distributed with the strata backend (or with
Gloo when STRATA_TORCH_TEST_BACKEND=gloo, which proves the harness itself without strata).
"""
import faulthandler
import os
import re
import sys
import warnings

SKIP = 77
# "strata" (the default, what ctest runs) or "gloo": the world group's backend. Taken out of
# the environment before strata reads it: strata warns about every STRATA_* variable it does
# not know, and this one is the tests' own (test_teardown.py fails on any warning).
BACKEND = os.environ.pop("STRATA_TORCH_TEST_BACKEND", "strata")


def skip(reason):
    print(f"SKIP: {reason}", flush=True)
    sys.exit(SKIP)


def local_rank():
    """The launcher's local rank (torchrun's, Open MPI's, MPICH's or Slurm's), -1 if none."""
    for name in ("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"):
        if os.environ.get(name):
            return int(os.environ[name])
    return -1


def require_torch():
    try:
        import torch  # noqa: F401
        import torch.distributed as dist
    except ImportError as e:
        skip(f"torch is not importable by {sys.executable}: {e}")
    if not dist.is_available() or not dist.is_gloo_available():
        skip("this torch has no torch.distributed with Gloo (the reference backend)")


_flight_timer = None


def _arm_flight_recorder(watchdog_s):
    """Where the entry sets STRATA_FLIGHT_RECORDER_SIGNAL=USR1: 5 s before the watchdog, the
    process signals itself, so strata's flight recorders print which call each communicator
    was in and at which step (the Python stacks cannot show what strata's threads do)."""
    global _flight_timer
    if os.environ.get("STRATA_FLIGHT_RECORDER_SIGNAL") != "USR1" or watchdog_s <= 10:
        return
    import signal
    import threading
    _flight_timer = threading.Timer(watchdog_s - 5, os.kill, (os.getpid(), signal.SIGUSR1))
    _flight_timer.daemon = True
    _flight_timer.start()


def start(watchdog_s, timeout=None):
    """Skip without torch, arm the watchdog, init the world group; returns (rank, size)."""
    require_torch()
    # exit=True: _exit(1) after dumping every thread's stack, so a hang never outlives ctest's
    # TIMEOUT silently and mpiexec tears the other ranks down.
    faulthandler.dump_traceback_later(watchdog_s, exit=True)
    _arm_flight_recorder(watchdog_s)
    # The underscore calls and all_reduce_coalesced are what the issue names; torch 1.13 warns
    # on every call that they will be deprecated.
    warnings.filterwarnings("ignore", category=UserWarning, message=".*deprecated")
    import datetime
    import torch.distributed as dist
    if timeout is None:
        timeout = datetime.timedelta(seconds=60)
    if BACKEND == "strata":
        try:
            import strata_torch
        except ImportError as e:
            # Built but not importable is a failure, not a skip: ctest sets PYTHONPATH to the
            # build's package folder.
            print(f"FAIL: import strata_torch: {e} (PYTHONPATH={os.environ.get('PYTHONPATH')})",
                  flush=True)
            sys.exit(1)
        init = os.environ.get("TORCH_TEST_INIT", "launcher")
        if init == "launcher":  # mpirun's ranks, or the environment without an MPI launcher
            strata_torch.init(timeout=timeout)
        elif init in ("env", "file"):
            # As users write it, with no MPI anywhere: torchrun's variables (tools/strata-run),
            # rendezvous through env:// (MASTER_ADDR's TCPStore) or a file store.
            kwargs = {}
            if init == "file":
                kwargs = dict(init_method="file://" + os.environ["TORCH_TEST_STORE"],
                              rank=int(os.environ["RANK"]),
                              world_size=int(os.environ["WORLD_SIZE"]))
            dist.init_process_group("strata", timeout=timeout, **kwargs)
        else:
            raise SystemExit(f"TORCH_TEST_INIT={init}: expected launcher, env or file")
    elif BACKEND == "gloo":
        rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
        size = int(os.environ["OMPI_COMM_WORLD_SIZE"])
        # A file store in the job's session folder: fresh per mpiexec and shared by its ranks
        # (all on this host), so no port has to be agreed on.
        store = os.path.join(os.environ["OMPI_MCA_orte_jobfam_session_dir"], "torch_store")
        dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank,
                                world_size=size, timeout=timeout)
    else:
        raise SystemExit(f"STRATA_TORCH_TEST_BACKEND={BACKEND}: expected strata or gloo")
    return dist.get_rank(), dist.get_world_size()


class StderrCapture:
    """Collects what this process writes to its stderr (file descriptor 2: strata's log, its
    flight-recorder dumps among them, written by the C library) while the block runs, then
    writes it on to the real stderr, so nothing is lost from the job's output. text() reads
    what was collected so far, also inside the block."""

    def __enter__(self):
        import tempfile
        sys.stderr.flush()
        self._file = tempfile.TemporaryFile()
        self._saved = os.dup(2)
        os.dup2(self._file.fileno(), 2)
        return self

    def text(self):
        # pread: the file's offset, where strata's threads may be writing, stays at its end.
        fd = self._file.fileno()
        return os.pread(fd, os.fstat(fd).st_size, 0).decode(errors="replace")

    def __exit__(self, *exc):
        sys.stderr.flush()
        os.dup2(self._saved, 2)
        os.close(self._saved)
        os.write(2, self.text().encode())
        self._file.close()
        return False


def unsupported(err):
    """True for an error that says an operation or type is not supported (a clear refusal)."""
    return re.search(r"not supported|does not support|no support|unsupported|invalid scalar type|cannot use",
                     str(err), re.IGNORECASE) is not None


class Checker:
    """Records failures instead of raising, so that every rank keeps calling the same
    collectives in the same order and the job ends with a summary rather than a hang."""

    def __init__(self, rank):
        self.rank = rank
        self.failures = 0
        self.checks = 0
        self.notes = set()

    def fail(self, what):
        self.failures += 1
        if self.failures <= 30:
            print(f"FAIL rank {self.rank}: {what}", flush=True)

    def check(self, cond, what):
        self.checks += 1
        if not cond:
            self.fail(what)
        return cond

    def note(self, text):
        """Something the test could not compare (e.g. Gloo lacks an op); reported once."""
        self.notes.add(text)

    def equal(self, actual, expected, what, rtol=0.0):
        """Element by element; exact unless rtol is given (relative to the expected value)."""
        self.checks += 1
        if actual.shape != expected.shape or actual.dtype != expected.dtype:
            self.fail(f"{what}: got {actual.dtype}{list(actual.shape)}, "
                      f"expected {expected.dtype}{list(expected.shape)}")
            return False
        a, e = actual.double().flatten(), expected.double().flatten()
        bad = (a - e).abs() > rtol * e.abs() if rtol else a != e
        bad |= a.isnan() != e.isnan()
        if bad.any():
            i = int(bad.nonzero()[0])
            self.fail(f"{what}: {int(bad.sum())} of {a.numel()} elements differ, first at "
                      f"{i}: got {a[i].item()}, expected {e[i].item()}")
            return False
        return True

    def finish(self, destroy=True):
        """Prints the summary and exits: 0 when every check on this rank passed. destroy=False
        where the group is broken (after an error a collective may hang)."""
        import torch.distributed as dist
        if _flight_timer is not None:
            _flight_timer.cancel()
        if self.rank == 0:
            for n in sorted(self.notes):
                print(f"note: {n}", flush=True)
        print(f"rank {self.rank}: {self.checks} checks, {self.failures} failures "
              f"(backend {BACKEND})", flush=True)
        if destroy:
            # 20 s for the teardown: a hang here shows destroy_process_group in the traceback.
            faulthandler.dump_traceback_later(20, exit=True)
            dist.destroy_process_group()
        faulthandler.cancel_dump_traceback_later()
        code = 1 if self.failures else 0
        if not destroy and BACKEND == "gloo":
            # Gloo 1.13 aborts at exit with a broken group ("terminate called without an
            # active exception"). Strata must exit normally: it finalizes MPI at exit, and
            # mpiexec fails a job whose ranks skip that.
            sys.stdout.flush()
            os._exit(code)
        sys.exit(code)
