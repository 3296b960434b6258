"""Asynchrony of the strata backend: a Work completes while Python keeps computing, without
wait() ever being called, futures run their callbacks, and calls nobody waits for do not stop
destroy_process_group.

Rank 0 joins a large allreduce 2 s late. Every other rank's all_reduce(async_op=True) must
return at once (a backend that runs the collective on the calling thread blocks here until
rank 0 arrives), must not be complete before rank 0 can have joined, and must then complete
while the rank runs torch ops and polls is_completed(), within a deadline.
"""
import threading
import time

import harness

rank, size = harness.start(watchdog_s=60)

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

ck = harness.Checker(rank)
N = 1 << 22  # 16 MiB of float32: long enough on the wire to be caught in flight
LATE_S = 2.0
DEADLINE_S = 30.0


def value_of(fut):
    """A collective's future holds the list of its tensors (torch 1.13) or the tensor."""
    v = fut.value()
    return v[0] if isinstance(v, list) else v


def poll_while_computing():
    dist.barrier()
    if rank == 0:
        time.sleep(LATE_S)
    t = torch.full((N,), float(rank + 1))
    start = time.monotonic()
    work = dist.all_reduce(t, async_op=True)
    returned_s = time.monotonic() - start
    early = work.is_completed()
    a, polls = torch.rand(128, 128), 0
    while not work.is_completed():
        a = torch.tanh(a @ a)  # Python and torch keep the calling thread busy
        polls += 1
        if time.monotonic() - start > DEADLINE_S:
            break
    done_s = time.monotonic() - start
    if not ck.check(work.is_completed(), f"not complete {DEADLINE_S} s after the call "
                    f"({polls} polls): does the collective progress only inside wait()?"):
        return
    if rank != 0:
        ck.check(returned_s < LATE_S / 2, f"all_reduce(async_op=True) returned after "
                 f"{returned_s:.2f} s while rank 0 was {LATE_S} s late: it ran on the caller")
        ck.check(not early, "complete right after the call, before rank 0 had joined")
        ck.check(done_s > LATE_S / 2, f"complete after {done_s:.2f} s, before rank 0 joined")
    # No wait(): is_completed() alone must mean the result is in place.
    ck.equal(t, torch.full((N,), size * (size + 1) / 2), "the result after is_completed()")
    if rank == min(1, size - 1):  # rank 1 (when there is one) waits for the late rank 0
        print(f"call returned in {returned_s * 1e3:.1f} ms; complete after {done_s:.2f} s, "
              f"{polls} torch ops meanwhile (rank {rank})", flush=True)


def futures():
    """then() runs its callback on the result; several calls in flight complete together."""
    t = torch.full((1021,), float(rank))
    ran = threading.Event()

    def doubled(fut):
        ran.set()
        return value_of(fut) * 2
    got = dist.all_reduce(t, async_op=True).get_future().then(doubled).wait()
    ck.check(ran.is_set(), "the then() callback never ran")
    ck.equal(got, torch.full((1021,), float(size * (size - 1))), "then() callback's value")

    ts = [torch.full((n,), float(rank + k)) for k, n in enumerate([1, 1021, 65537, 0, 7])]
    futs = [dist.all_reduce(x, async_op=True).get_future() for x in ts]
    torch.futures.wait_all(futs)
    for k, x in enumerate(ts):
        expect = float(sum(r + k for r in range(size)))
        ck.equal(x, torch.full_like(x, expect), f"call {k} of 5 in flight together")


def fire_and_forget():
    """Calls whose Work and tensor Python drops at once, then destroy_process_group (in
    finish()): the backend's thread then holds the last reference to tensors whose Python
    objects it must free, which needs the GIL, while the destroying thread holds the GIL."""
    for _ in range(64):
        dist.all_reduce(torch.ones(1 << 14), async_op=True)


poll_while_computing()
futures()
fire_and_forget()
ck.finish()
