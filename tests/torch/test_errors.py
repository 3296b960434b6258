"""Errors of the strata backend: bad arguments raise a clear Python exception on every rank and
leave the group usable; ranks that call different collectives all raise strata's error within
the group's timeout instead of hanging.

Bad arguments: every rank makes the same bad call, so every rank must raise (a rank that goes on
into the collective instead would hang the others: the watchdog turns that into a failure).
"Clear" means RuntimeError or ValueError naming what is wrong (a word from the case's list).

The mismatch (rank 0 all_reduce, the others broadcast) comes last: the group is broken after
it. With a 5 s group timeout every rank must raise within TIMEOUT_S + MARGIN_S, and say so on
its stderr at WARN: the flight recorder's dump naming its call (STRATA_CHECK=1: the warning
naming both calls, which are refused before they run), however quiet a healthy teardown is.
"""
import datetime
import os
import re
import time

import harness

TIMEOUT_S = 5
MARGIN_S = 15  # 2 busy cores, 4 ranks: an error reaches every rank within this after the timeout
rank, size = harness.start(watchdog_s=90, timeout=datetime.timedelta(seconds=TIMEOUT_S))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

ck = harness.Checker(rank)


def refused(what, call, words, may_work=None):
    """call() must raise RuntimeError/ValueError whose message matches `words`; or, where
    may_work is given, it may instead succeed with may_work() returning True."""
    try:
        call()
    except (RuntimeError, ValueError) as e:
        msg = str(e).splitlines()[0] if str(e) else ""
        clear = re.search(words, str(e), re.IGNORECASE) is not None
        if harness.BACKEND == "strata":
            ck.check(clear, f"{what}: unclear error (expected /{words}/): {msg}")
            # The reason is in the message: a Python user cannot call strataGetLastError.
            ck.check("strataGetLastError" not in str(e),
                     f"{what}: the message points to strataGetLastError: {msg}")
        elif not clear:
            ck.note(f"{what}: gloo's error does not match /{words}/: {msg}")
        if rank == 0:
            print(f"{what}: {type(e).__name__}: {msg[:150]}", flush=True)
    except Exception as e:  # noqa: BLE001 - any other type is the failure we report
        ck.fail(f"{what}: raised {type(e).__name__} (expected RuntimeError/ValueError): {e}")
    else:
        if may_work is None:
            ck.fail(f"{what}: no error")
        else:
            ck.check(may_work(), f"{what}: accepted, with a wrong result")
    # The group must still work after a refused call.
    t = torch.full((5,), float(rank))
    dist.all_reduce(t)
    ck.equal(t, torch.full((5,), float(size * (size - 1) // 2)), f"all_reduce after {what}")


def meta_all_reduce():
    """PyTorch 1.13 hands a meta tensor to the backend, which refuses it. PyTorch 2 registers
    meta kernels for its c10d operations (for tracing): an all_reduce of a meta tensor returns
    at once and never reaches the backend, whose operation count must not move."""
    meta = torch.ones(8, device="meta")
    if not hasattr(dist.distributed_c10d._get_default_group(), "_get_backend"):
        refused("all_reduce of a meta tensor", lambda: dist.all_reduce(meta), r"device|cpu|meta")
        return
    import strata_torch
    backend = strata_torch.backend_of(None)
    before = backend._get_sequence_number_for_group() if backend is not None else None
    try:
        dist.all_reduce(meta)
    except Exception as e:  # noqa: BLE001 - PyTorch 2 handles it, whatever the backend
        ck.fail(f"all_reduce of a meta tensor: PyTorch 2 raised {type(e).__name__}: {e}")
        return
    if backend is not None:
        after = backend._get_sequence_number_for_group()
        ck.check(after == before, f"all_reduce of a meta tensor reached strata ({before} -> "
                 f"{after} operations); PyTorch 2's meta kernel should have taken it")
    if rank == 0:
        print("all_reduce of a meta tensor: handled by PyTorch 2's meta kernel, not the backend",
              flush=True)


def bad_arguments():
    f32 = torch.ones(8)
    mixed = [torch.ones(8), torch.ones(8, dtype=torch.int32)]
    refused("all_reduce_coalesced of float32 and int32",
            lambda: dist.all_reduce_coalesced(mixed),
            r"type", may_work=lambda: all(bool((t == size).all()) for t in mixed))
    refused("all_gather into float64 outputs from a float32 input",
            lambda: dist.all_gather([torch.zeros(8, dtype=torch.float64)] * size, f32),
            r"type")
    refused("all_gather into world size + 1 outputs",
            lambda: dist.all_gather([torch.zeros(8) for _ in range(size + 1)], f32),
            r"size|number|length|count")
    refused("all_gather into outputs of another size",
            lambda: dist.all_gather([torch.zeros(9) for _ in range(size)], f32),
            r"size|shape|numel|element")
    refused("_all_gather_base into an output of the wrong size",
            lambda: dist._all_gather_base(torch.zeros(8 * size + 1), f32),
            r"size|shape|numel|element")
    meta_all_reduce()
    refused("all_gather from a cpu input into meta outputs",
            lambda: dist.all_gather([torch.empty(8, device="meta")] * size, f32),
            r"device|cpu|meta")
    sparse = torch.eye(4).to_sparse()  # Gloo sums sparse tensors; refusing them is fine too
    refused("all_reduce of a sparse tensor", lambda: dist.all_reduce(sparse),
            r"sparse|layout|dense|strided",
            may_work=lambda: bool((sparse.to_dense() == torch.eye(4) * size).all()))
    refused("broadcast from rank == world size",
            lambda: dist.broadcast(torch.ones(8), src=size), r"rank|root|src|range")
    ok = torch.full((3,), 1 + 1j) * (rank + 1)
    refused("all_reduce of complex64", lambda: dist.all_reduce(ok), r"type|complex",
            may_work=lambda: bool((ok == (1 + 1j) * size * (size + 1) / 2).all()))


def mismatch():
    """Rank 0 calls all_reduce, the others broadcast: every rank must raise, not hang, and
    strata must dump its flight recorder naming the call that failed (a teardown at exit is
    silent when healthy: test_teardown.py; this is the failure that must still be loud)."""
    t = torch.ones(1021)
    start = time.monotonic()
    with harness.StderrCapture() as log:
        try:
            if rank == 0:
                dist.all_reduce(t)
            else:
                dist.broadcast(t, src=0)
        except RuntimeError as e:
            took = time.monotonic() - start
            ck.check(took < TIMEOUT_S + MARGIN_S, f"mismatch: raised after {took:.1f} s")
            if harness.BACKEND == "strata":
                ck.check("strata" in str(e).lower(), f"mismatch: not strata's message: {e}")
                ck.check("strataGetLastError" not in str(e),
                         f"mismatch: the message points to strataGetLastError: {e}")
            print(f"rank {rank}: mismatch raised after {took:.1f} s: {str(e)[:200]}",
                  flush=True)
        else:
            ck.fail(f"mismatch: rank {rank} returned from its call, result {t[:3].tolist()}")
        if harness.BACKEND == "strata":
            call = "allreduce" if rank == 0 else "broadcast"
            if os.environ.get("STRATA_CHECK", "0") not in ("", "0"):
                # Refused before it ran (no call to dump): the warning names both calls.
                what = "STRATA_CHECK's warning"
                loud = re.compile(r"STRATA WARN .*ranks called different collectives")
            else:
                what = f"flight-recorder dump naming the {call}"
                # The mismatched call, the only one of 1021 elements, whatever its state
                # (rank 0's allreduce fails agreeing on a fusion pack: still "issued").
                loud = re.compile(r"STRATA WARN .*flight recorder \(.*\n(.*\n)*" + call +
                                  r" #\d+ \(1021 float32\): ")
            # strata puts the communicator in its error state, then logs: the error may reach
            # Python a moment before the log is written.
            deadline = time.monotonic() + 10
            while not loud.search(log.text()) and time.monotonic() < deadline:
                time.sleep(0.1)
            ck.check(loud.search(log.text()) is not None, f"mismatch: no {what} on stderr")


bad_arguments()
if size > 1:
    mismatch()
# After the mismatch the group is broken: no destroy_process_group (a collective may hang).
ck.finish(destroy=size == 1)
