"""DDP with PyTorch's stock communication hooks on the strata backend, each against the same
training on Gloo (a second group over the same ranks): allreduce_hook, fp16_compress_hook,
noop_hook, powerSGD_hook (from the third step, so both its phases run) and, from PyTorch 2,
batched_powerSGD_hook. PowerSGD's callback issues an allreduce and waits on its future inside
DDP's callback: the backend must complete that future on another thread (it once hung here
for ever). Every Work is bounded by the group's timeout, so a hang fails within it.

Parameters must match Gloo's run within a relative 1e-4 of the largest update (PowerSGD's
orthogonalisation amplifies the last bits of sums done in another order), within 2^-10 of it for
fp16_compress_hook (it sums float16 values: any order other than Gloo's rounds each sum
differently, by up to one float16 ulp, 2^-11 relative, either way), exactly for allreduce_hook on
2 ranks, and be the same on every rank (but for noop_hook, which communicates nothing).
"""
import datetime

import harness

rank, size = harness.start(watchdog_s=150, timeout=datetime.timedelta(seconds=60))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch import nn  # noqa: E402
from torch.distributed.algorithms.ddp_comm_hooks import debugging_hooks as dbg  # noqa: E402
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks as d  # noqa: E402
from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as p  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

gloo = dist.new_group(backend="gloo")
ck = harness.Checker(rank)
STEPS = 5


def fresh():
    torch.manual_seed(3)
    return nn.Sequential(nn.Linear(48, 64), nn.ReLU(), nn.Linear(64, 16))


def batch():
    g = torch.Generator().manual_seed(200 + rank)
    return torch.randn(8, 48, generator=g), torch.randn(8, 16, generator=g)


def flat(model):
    return torch.cat([q.detach().flatten() for q in model.parameters()])


def train(group, hook, make_state):
    ddp = DDP(fresh(), process_group=group, bucket_cap_mb=0.01)
    ddp.register_comm_hook(make_state(group), hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    x, y = batch()
    for _ in range(STEPS):
        opt.zero_grad()
        ((ddp(x) - y) ** 2).mean().backward()
        opt.step()
    return flat(ddp.module)


def powersgd_state(group, rank_=2):
    return p.PowerSGDState(process_group=group, matrix_approximation_rank=rank_,
                           start_powerSGD_iter=2, min_compression_rate=0.5)


cases = [
    ("allreduce_hook", d.allreduce_hook, lambda g: g),
    ("fp16_compress_hook", d.fp16_compress_hook, lambda g: g),
    ("powerSGD_hook", p.powerSGD_hook, powersgd_state),
    ("noop_hook", dbg.noop_hook, lambda g: None),
]
# PyTorch 1.13's batched_powerSGD_hook fails its own assertion on Gloo alone (_orthogonalize
# is handed a 2-D matrix); it runs from PyTorch 2 on.
if int(torch.__version__.split(".")[0]) >= 2:
    cases.append(("batched_powerSGD_hook", p.batched_powerSGD_hook,
                  lambda g: powersgd_state(g, 1)))
elif rank == 0:
    print(f"batched_powerSGD_hook: not run (PyTorch {torch.__version__}'s own hook fails on "
          "Gloo too)", flush=True)
start = flat(fresh())
for name, hook, make_state in cases:
    ours = train(None, hook, make_state)
    theirs = train(gloo, hook, make_state)
    largest = (theirs - start).abs().max().item()
    worst = (ours - theirs).abs().max().item()
    exact = name == "allreduce_hook" and size <= 2
    relative = 2.0 ** -10 if name == "fp16_compress_hook" else 1e-4
    ck.check(worst <= (0.0 if exact else relative * max(largest, 1e-6)),
             f"{name}: parameters differ from Gloo's by up to {worst:.3g} (largest update "
             f"{largest:.3g})")
    everyone = [torch.empty_like(ours) for _ in range(size)]
    dist.all_gather(everyone, ours, group=gloo)
    for r, other in enumerate(everyone):
        if name != "noop_hook":  # no communication: every rank keeps its own gradients
            ck.equal(other, ours, f"{name}: rank {r}'s parameters against rank {rank}'s")
    if rank == 0:
        print(f"{name}: within {worst:.3g} of Gloo (largest update {largest:.3g})", flush=True)
ck.finish()
