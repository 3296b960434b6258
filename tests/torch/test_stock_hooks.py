"""DDP with every stock communication hook of the installed PyTorch on the strata backend,
against the same training on Gloo (a second group over the same ranks): 10 steps, with buckets
small enough that every step has at least 8 (the test counts them), so that the callbacks of
several buckets are in flight at once.

The hooks run on strata as DDP runs them: a bucket's chain of callbacks goes on while autograd
issues the next buckets' allreduces. PowerSGD's callbacks issue an allreduce and wait for it
inside DDP's callback, twice per bucket (the quantization hooks do the same with all_gather,
but they need CUDA). The
backend must complete those futures on another thread (it once hung) and hand the nested
collectives to strata in the same order on every rank whatever order the works complete in (it
once paired one rank's PowerSGD allreduce of P with another's of the next bucket's gradients).

The Gloo reference runs each hook to the end before DDP goes on (the hook waits for its own
future): with overlapping chains, Gloo's two worker threads both block in PowerSGD's callbacks
and hang, and its nested collectives take their tags in whatever order the threads issue them.

Parameters must match Gloo's within each hook's tolerance, relative to the largest update: 1e-4
for PowerSGD (its orthogonalisation amplifies the last bits of sums done in another order),
2^-10 for fp16 compression (any order of summation other than Gloo's rounds each sum
differently, by up to an ulp of float16), 2^-6 for bf16 (Gloo has no bfloat16: its reference
rounds to bfloat16 and sums in float32, a few bfloat16 ulps from summing in bfloat16), exactly
for allreduce on up to 2 ranks (a sum of two is the same in either order) and 1e-6 otherwise,
each plus 4 float32 ulps of the largest parameter. Every rank must end with the same parameters, but for noop_hook (no
communication) and post_localSGD_hook (after its start, each pair of ranks averages alone).
"""
import datetime

import harness

rank, size = harness.start(watchdog_s=170, timeout=datetime.timedelta(seconds=60))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch import nn  # noqa: E402
from torch.distributed.algorithms.ddp_comm_hooks import debugging_hooks as dbg  # noqa: E402
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks as d  # noqa: E402
from torch.distributed.algorithms.ddp_comm_hooks import post_localSGD_hook as local  # noqa: E402
from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as p  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

gloo = dist.new_group(backend="gloo")
# Pairs of consecutive ranks, for post-local SGD's local averaging (a rank alone at the end).
pairs = [list(range(i, min(i + 2, size))) for i in range(0, size, 2)]


def my_pair(backend):
    """This rank's pair as a group (new_group is collective: every rank makes every pair)."""
    mine = None
    for ranks in pairs:
        g = dist.new_group(ranks=ranks, backend=backend)
        if rank in ranks:
            mine = g
    return mine


strata_pair, gloo_pair = my_pair(None), my_pair("gloo")
ck = harness.Checker(rank)
STEPS = 10
MIN_BUCKETS = 8


WIDTH, LAYERS = 128, 26  # 64 KiB weights: DDP's first bucket takes 16 (1 MiB), 10 follow


def fresh():
    torch.manual_seed(3)
    layers = []
    for _ in range(LAYERS):
        layers += [nn.Linear(WIDTH, WIDTH), nn.Tanh()]
    return nn.Sequential(*layers)


def batch(step):
    g = torch.Generator().manual_seed(1000 * step + rank)
    return torch.randn(8, WIDTH, generator=g), torch.randn(8, WIDTH, generator=g)


def flat(model):
    return torch.cat([t.detach().flatten() for t in model.parameters()])


def train(group, hook, make_state, sequential):
    """10 SGD steps under `hook`; returns the parameters and the most buckets in a step."""
    if group is gloo and hook is d.bf16_compress_hook:
        hook = bf16_through_float32
    # 64 KiB buckets after DDP's first (1 MiB): one weight each, 11 buckets in all.
    ddp = DDP(fresh(), process_group=group, bucket_cap_mb=0.0625)
    seen = set()

    def counted(state, bucket):
        seen.add(bucket.index())
        fut = hook(state, bucket)
        if sequential:
            fut.wait()  # the Gloo reference: this bucket's chain ends before the next starts
        return fut

    ddp.register_comm_hook(make_state(group), counted)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
    for step in range(STEPS):
        x, y = batch(step)
        opt.zero_grad()
        ((ddp(x) - y) ** 2).mean().backward()
        opt.step()
    return flat(ddp.module), len(seen)


def bf16_through_float32(group, bucket):
    """bf16_compress_hook's rounding with a float32 allreduce: Gloo has no bfloat16."""
    rounded = bucket.buffer().to(torch.bfloat16).to(torch.float32).div_(size)
    return dist.all_reduce(rounded, group=group, async_op=True).get_future().then(
        lambda fut: bucket.buffer().copy_(fut.value()[0]))


def powersgd_state(group, rank_=2):
    return p.PowerSGDState(process_group=group, matrix_approximation_rank=rank_,
                           start_powerSGD_iter=2, min_compression_rate=0.5)


def local_sgd_state(group):
    sub = gloo_pair if group is gloo else strata_pair
    return local.PostLocalSGDState(process_group=group, subgroup=sub, start_localSGD_iter=4)


# (name, hook, state, relative tolerance or None for exact, same parameters on every rank)
cases = [
    ("allreduce_hook", d.allreduce_hook, lambda g: g, None if size <= 2 else 1e-6, True),
    ("fp16_compress_hook", d.fp16_compress_hook, lambda g: g, 2.0 ** -10, True),
    ("bf16_compress_hook", d.bf16_compress_hook, lambda g: g, 2.0 ** -6, True),
    ("powerSGD_hook", p.powerSGD_hook, powersgd_state, 1e-4, True),
    ("post_localSGD_hook", local.post_localSGD_hook, local_sgd_state, 1e-6, size <= 2),
    ("noop_hook", dbg.noop_hook, lambda g: None, None, False),
]
# PyTorch's batched_powerSGD_hook hands _orthogonalize the 2-D matrix it makes for a bucket,
# and _orthogonalize asserts a 3-D batch: the hook fails its own assertion on Gloo alone (seen
# in 1.13, 2.11 and 2.15). It runs here wherever PyTorch's _orthogonalize takes that matrix.
def batched_hook_works():
    try:
        p._orthogonalize(torch.randn(4, 1))
        return True
    except AssertionError:
        return False


if batched_hook_works():
    cases.append(("batched_powerSGD_hook", p.batched_powerSGD_hook,
                  lambda g: powersgd_state(g, 1), 1e-4, True))
elif rank == 0:
    print(f"batched_powerSGD_hook: not run (PyTorch {torch.__version__}'s own hook fails its "
          "assertion on Gloo too: _orthogonalize refuses the 2-D matrix the hook makes)",
          flush=True)
try:  # the optimizer run inside the hook's last callback (PyTorch's optimizer-in-backward)
    from torch.distributed.algorithms.ddp_comm_hooks import optimizer_overlap_hooks as oo
    from torch.distributed.optim.functional_sgd import _FunctionalSGD
except ImportError:
    oo = None
if rank == 0:
    # PyTorch's own check refuses both on every backend but NCCL and HCCL, Gloo included.
    print("hook_with_zero_step(_interleaved) (DDP with ZeRO): not run (PyTorch allows them on "
          "NCCL and HCCL only)", flush=True)
    print("quantization_pertensor_hook, quantization_perchannel_hook: not run (they move the "
          "bucket to CUDA; torch.cuda.np2 has no DDP hook yet)", flush=True)

start = flat(fresh())
for name, hook, make_state, tolerance, same_everywhere in cases:
    ours, buckets = train(None, hook, make_state, sequential=False)
    theirs, _ = train(gloo, hook, make_state, sequential=True)
    ck.check(buckets >= MIN_BUCKETS, f"{name}: only {buckets} buckets in a step")
    largest = (theirs - start).abs().max().item()
    worst = (ours - theirs).abs().max().item()
    # Plus 4 float32 ulps of the largest parameter: sums in another order round differently.
    ulps = 4 * torch.finfo(torch.float32).eps * theirs.abs().max().item()
    bound = 0.0 if tolerance is None else tolerance * max(largest, 1e-6) + ulps
    ck.check(worst <= bound, f"{name}: parameters differ from Gloo's by up to {worst:.3g} "
             f"(largest update {largest:.3g}, bound {bound:.3g})")
    everyone = [torch.empty_like(ours) for _ in range(size)]
    dist.all_gather(everyone, ours, group=gloo)
    if same_everywhere:
        for r, other in enumerate(everyone):
            ck.equal(other, ours, f"{name}: rank {r}'s parameters against rank {rank}'s")
    if rank == 0:
        print(f"{name}: {buckets} buckets, within {worst:.3g} of Gloo (largest update "
              f"{largest:.3g})", flush=True)

if oo is not None:
    # The SGD step runs in the hook's last callback; there is no other optimizer.
    results = []
    for group, sequential in ((None, False), (gloo, True)):
        ddp = DDP(fresh(), process_group=group, bucket_cap_mb=0.0625)
        hook = oo._hook_then_optimizer(d.allreduce_hook, oo._OptimizerHookState(
            _FunctionalSGD(list(ddp.module.parameters()), lr=0.05)))

        def run(state, bucket, hook=hook, sequential=sequential):
            fut = hook(state, bucket)
            if sequential:
                fut.wait()
            return fut

        ddp.register_comm_hook(group, run)
        for step in range(STEPS):
            x, y = batch(step)
            ddp.zero_grad()
            ((ddp(x) - y) ** 2).mean().backward()
        results.append(flat(ddp.module))
    worst = (results[0] - results[1]).abs().max().item()
    largest = (results[1] - start).abs().max().item()
    ulps = 4 * torch.finfo(torch.float32).eps * results[1].abs().max().item()
    ck.check(worst <= (0.0 if size <= 2 else 1e-6 * largest + ulps),
             f"optimizer in the hook: parameters differ from Gloo's by up to {worst:.3g}")
    ck.check(largest > 0, "optimizer in the hook: the parameters did not change")
    if rank == 0:
        print(f"optimizer in the hook (_hook_then_optimizer): within {worst:.3g} of Gloo "
              f"(largest update {largest:.3g})", flush=True)
ck.finish()
