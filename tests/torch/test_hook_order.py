"""DDP hooks whose callbacks issue collectives and wait for them, while the ranks run at
different speeds, on the strata backend: the collectives must reach strata in the same order on
every rank (the order of the works the callbacks hang from), and nothing may hang.

- order: a hook of our own. Each bucket's callback sleeps a time that depends on the rank and
  the bucket (so that on each rank the callbacks finish in a different order relative to what
  autograd issues meanwhile), then issues an allreduce whose size and expected sum depend on
  the bucket, waits for it and checks it; the hook itself sleeps on alternate buckets, by rank.
  A collective paired with another bucket's on some rank shows as a wrong sum, a size
  mismatch or a hang. The final parameters must equal, bit for bit, those of the same steps
  under allreduce_hook (the hook averages the same gradients with the same allreduces).
- stress: PowerSGD with at least 50 buckets, 20 steps, repeated; every repetition must end
  with the same parameters on every rank, bit for bit equal to those of a run whose hook
  finishes each bucket's chain before DDP goes on (then nothing overlaps).

    mpiexec -n 2 python3 tests/torch/test_hook_order.py [order|stress|order,stress] [REPEATS]
"""
import datetime
import sys
import time

import harness

rank, size = harness.start(watchdog_s=240, timeout=datetime.timedelta(seconds=60))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch import nn  # noqa: E402
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks as d  # noqa: E402
from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as p  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

parts = sys.argv[1].split(",") if len(sys.argv) > 1 else ["order", "stress"]
REPEATS = int(sys.argv[2]) if len(sys.argv) > 2 else 20
ck = harness.Checker(rank)
gloo = dist.new_group(backend="gloo")  # only to compare parameters across ranks


class Wide(nn.Module):
    """`layers` linear layers side by side, their outputs summed: as many parameters as a deep
    stack, without its vanishing gradients (PowerSGD orthogonalises each gradient)."""

    def __init__(self, width, layers):
        super().__init__()
        self.branches = nn.ModuleList(nn.Linear(width, width) for _ in range(layers))

    def forward(self, x):
        return torch.stack([torch.tanh(b(x)) for b in self.branches]).sum(0)


def model(width, layers):
    torch.manual_seed(7)
    return Wide(width, layers)


def flat(net):
    return torch.cat([t.detach().flatten() for t in net.parameters()])


def train(width, layers, steps, hook, state, cap_mb):
    """`steps` SGD steps of a fresh model under `hook`; parameters and the buckets seen."""
    ddp = DDP(model(width, layers), bucket_cap_mb=cap_mb)
    seen = set()

    def counted(s, bucket):
        seen.add(bucket.index())
        return hook(s, bucket)

    ddp.register_comm_hook(state, counted)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    for step in range(steps):
        g = torch.Generator().manual_seed(100 * step + rank)
        x, y = torch.randn(4, width, generator=g), torch.randn(4, width, generator=g)
        opt.zero_grad()
        ((ddp(x) - y) ** 2).mean().backward()
        opt.step()
    return flat(ddp.module), len(seen)


def same_everywhere(t, what):
    everyone = [torch.empty_like(t) for _ in range(size)]
    dist.all_gather(everyone, t, group=gloo)
    for r, other in enumerate(everyone):
        ck.equal(other, t, f"{what}: rank {r}'s parameters against rank {rank}'s")


def order_hook(state, bucket):
    b = bucket.index()
    if (b + rank) % 2 == 0:
        time.sleep(0.003)  # the hook itself: autograd goes on later on some ranks
    grads = bucket.buffer()
    fut = dist.all_reduce(grads, async_op=True).get_future()

    def nested(f):
        # Callbacks finish at different times on each rank.
        time.sleep(0.001 * ((b * 3 + rank * 5) % 4))
        probe = torch.full((b + 1,), float(rank + 1) * (b + 1))
        got = dist.all_reduce(probe, async_op=True).get_future().wait()[0]
        want = float(size * (size + 1) // 2) * (b + 1)
        if not torch.equal(got, torch.full((b + 1,), want)):
            ck.fail(f"bucket {b}: nested allreduce gave {got[:3].tolist()}..., expected {want}")
        return f.value()[0].div_(size)

    return fut.then(nested)


if "order" in parts:
    # 64 KiB buckets after DDP's first (1 MiB, 16 weights): 12 buckets a step.
    ours, buckets = train(128, 27, 6, order_hook, None, 0.0625)
    theirs, _ = train(128, 27, 6, d.allreduce_hook, None, 0.0625)
    ck.check(buckets >= 8, f"order: only {buckets} buckets")
    ck.equal(ours, theirs, "order: parameters against allreduce_hook's")
    same_everywhere(ours, "order")
    if rank == 0:
        print(f"order: {buckets} buckets, parameters equal allreduce_hook's", flush=True)


def sequential(hook):
    """`hook`, but each bucket's whole chain ends before DDP goes on: nothing overlaps."""
    def run(state, bucket):
        fut = hook(state, bucket)
        fut.wait()
        return fut
    return run


def powersgd_state():
    return p.PowerSGDState(process_group=None, matrix_approximation_rank=2,
                           start_powerSGD_iter=2, min_compression_rate=0.5)


if "stress" in parts:
    # 16 KiB buckets after the first (1 MiB, 64 weights of 64x64): 51 buckets a step.
    WIDTH, LAYERS, STEPS, CAP = 64, 114, 20, 16 / 1024
    start = time.monotonic()
    reference, buckets = train(WIDTH, LAYERS, STEPS, sequential(p.powerSGD_hook),
                               powersgd_state(), CAP)
    ck.check(buckets >= 50, f"stress: only {buckets} buckets")
    for rep in range(REPEATS):
        ours, _ = train(WIDTH, LAYERS, STEPS, p.powerSGD_hook, powersgd_state(), CAP)
        ck.equal(ours, reference, f"stress repetition {rep}: parameters against the "
                 "sequential run's")
        same_everywhere(ours, f"stress repetition {rep}")
    if rank == 0:
        print(f"stress: {buckets} buckets, {STEPS} steps, {REPEATS} repetitions equal the "
              f"sequential run in {time.monotonic() - start:.0f} s", flush=True)
ck.finish()
