"""Hooks that block, on the strata backend (group timeout 5 s): every rank ends with an error
that names what it waited for, within the timeout and a margin, and exits cleanly.

- gate: a future's callback waits for something the same rank does only after its next
  collective. Collectives wait (the gate) for the callbacks of earlier ones whose futures
  Python asked for, so the next collective must raise within the timeout, naming the work
  whose callbacks it waited for; once the callback is let go, the group still works.
- nested: DDP's hook on rank 0 issues an allreduce inside its callback and waits for it; the
  other ranks never issue it. Rank 0's backward must raise strata's timeout for that
  allreduce; the others' next collective must fail too. The group is then broken and left
  without destroy_process_group (strata aborts it at exit).
"""
import datetime
import threading
import time

import harness

TIMEOUT_S = 5
MARGIN_S = 20  # 2 busy cores, 4 ranks
rank, size = harness.start(watchdog_s=100, timeout=datetime.timedelta(seconds=TIMEOUT_S))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch import nn  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

ck = harness.Checker(rank)


def raises_within(what, call, words):
    """call() must raise RuntimeError naming `words` within TIMEOUT_S + MARGIN_S."""
    start = time.monotonic()
    try:
        call()
    except RuntimeError as e:
        took = time.monotonic() - start
        ck.check(took < TIMEOUT_S + MARGIN_S, f"{what}: raised after {took:.1f} s")
        for w in words:
            ck.check(w in str(e), f"{what}: the error does not name '{w}': {str(e)[:300]}")
        print(f"rank {rank}: {what} raised after {took:.1f} s: {str(e)[:160]}", flush=True)
        return True
    ck.fail(f"{what}: no error")
    return False


def gate():
    let_go = threading.Event()
    ran_inline = []
    # 64 MiB ahead in the queue (nobody asks for its future: no gate), so that the next one is
    # not complete before its callback is attached, which would run it here, on this thread.
    dist.all_reduce(torch.ones(16 << 20), async_op=True)
    t = torch.ones(8)
    fut = dist.all_reduce(t, async_op=True).get_future()

    def waits(f):
        if threading.current_thread() is threading.main_thread():
            ran_inline.append(True)  # waiting here would wait for ever
        else:
            let_go.wait(60)  # until the main thread has issued its next collective: never
        return f.value()

    chained = fut.then(waits)
    if ran_inline:
        ck.fail("gate: the allreduce completed before its callback was attached (a test setup "
                "too fast for its premise)")
        return
    raises_within("gate", lambda: dist.all_reduce(torch.ones(4)),
                  ["waited", "callbacks of allreduce", "Timed out"])
    let_go.set()
    chained.wait()
    ck.equal(chained.value()[0], torch.full((8,), float(size)), "gate: the held allreduce's "
             "result")
    after = torch.full((3,), float(rank))
    dist.all_reduce(after)
    ck.equal(after, torch.full((3,), float(size * (size - 1) // 2)), "gate: all_reduce after")


def nested():
    torch.manual_seed(1)
    ddp = DDP(nn.Linear(16, 16))

    def hook(state, bucket):
        fut = dist.all_reduce(bucket.buffer(), async_op=True).get_future()

        def then(f):
            if rank == 0:  # the others never issue it
                dist.all_reduce(torch.ones(5), async_op=True).get_future().wait()
            return f.value()[0]
        return fut.then(then)

    ddp.register_comm_hook(None, hook)
    x = torch.randn(4, 16)
    if rank == 0:
        raises_within("nested", lambda: ddp(x).sum().backward(), ["allreduce", "Timed out"])
    else:
        ddp(x).sum().backward()  # its own collectives complete; rank 0's nested one is left
        time.sleep(TIMEOUT_S + 3)  # issue nothing meanwhile: rank 0's allreduce times out
        raises_within("nested (the next collective)", lambda: dist.all_reduce(torch.ones(5)),
                      ["strata"])


gate()
if size > 1:
    nested()
ck.finish(destroy=size == 1)
