"""DDP on the strata backend: a few SGD steps give the same parameters as the same steps on
Gloo (a second process group over the same ranks) and as a one-process reference that sums
every rank's gradient itself.

Why the results can be exact: the model is a sum of linear layers and the loss is linear in its
output (sum(out * y)), so every gradient is sum(y x^T) over the batch: an integer for integer
data, independent of the weights. Each rank scales its loss by the world size, so DDP's division
by the world size is exact, and every sum of gradients is exact in float32 whatever the order
of reduction. Parameters start as integers and the learning rate is a power of two.

  no hook, fused_hook      identical to Gloo and to the reference, element by element
  fp16_slow_links_hook     random (non-integer) data: updates within 1% of the largest update
                           of Gloo's run (fp16 keeps 11 bits; exact on one host)
  csc_hook                 the loss over every rank's data decreases, parameters identical on
                           every rank (sparse: no reference)

With STRATA_TORCH_TEST_BACKEND=gloo, torch's allreduce_hook, fp16_compress_hook and PowerSGD
stand in for strata's hooks.
"""
import harness

rank, size = harness.start(watchdog_s=100)

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch import nn  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

gloo = dist.new_group(backend="gloo")
ck = harness.Checker(rank)
LR = 2.0 ** -6
STEPS = 4


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(64, 32)
        self.b = nn.Linear(64, 32)
        self.c = nn.Linear(64, 32, bias=False)

    def forward(self, x):
        return self.a(x) + self.b(x) + self.c(x)


def fresh():
    """The same integer-valued parameters on every rank and for every run."""
    torch.manual_seed(1)
    m = Net()
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randint(-2, 3, p.shape))
    return m


def data(r, integer=True):
    """Rank r's batch, the same at every step (so the loss over all data must fall)."""
    g = torch.Generator().manual_seed(100 + r)
    if integer:
        return (torch.randint(-2, 3, (6, 64), generator=g).float(),
                torch.randint(-2, 3, (6, 32), generator=g).float())
    return torch.randn(6, 64, generator=g), torch.randn(6, 32, generator=g)


def loss_of(model, x, y):
    return (model(x) * y).sum()


def global_loss(model, integer=True):
    with torch.no_grad():
        return sum(loss_of(model, *data(r, integer)).item() for r in range(size))


def flat(model):
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def train_ddp(group, hook=None, state=None, integer=True, steps=STEPS):
    """Returns the module after `steps` SGD steps of DDP over `group` (None: the world)."""
    # Small buckets: several bucket allreduces per step, overlapping the backward pass.
    ddp = DDP(fresh(), process_group=group, bucket_cap_mb=0.004)
    if hook is not None:
        ddp.register_comm_hook(state, hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=LR)
    x, y = data(rank, integer)
    for _ in range(steps):
        opt.zero_grad()
        (loss_of(ddp, x, y) * size).backward()  # DDP averages: undo it exactly
        opt.step()
    return ddp.module


def train_reference(integer=True):
    """One process: the gradient of every rank's batch, summed, then the same SGD step."""
    model = fresh()
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    for _ in range(STEPS):
        opt.zero_grad()
        for r in range(size):
            loss_of(model, *data(r, integer)).backward()  # .grad accumulates over ranks
        opt.step()
    return model


def same_on_every_rank(model, what):
    mine = flat(model)
    everyone = [torch.empty_like(mine) for _ in range(size)]
    dist.all_gather(everyone, mine, group=gloo)
    for r, theirs in enumerate(everyone):
        ck.equal(theirs, mine, f"{what}: rank {r}'s parameters against rank {rank}'s")


def hooks():
    """(fused, fp16, csc) hooks with their states: strata's, or torch's stand-ins."""
    if harness.BACKEND == "strata":
        import strata_torch.hooks as h
        return ((h.fused_hook, None), (h.fp16_slow_links_hook, None),
                (h.csc_hook(density=0.25, chunk=256), None))
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks as d
    from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as p
    psgd = p.PowerSGDState(process_group=None, matrix_approximation_rank=1,
                           start_powerSGD_iter=2)
    return (d.allreduce_hook, None), (d.fp16_compress_hook, None), (p.powerSGD_hook, psgd)


(fused, fused_state), (fp16, fp16_state), (csc, csc_state) = hooks()
reference = flat(train_reference())
gloo_run = flat(train_ddp(gloo))
ck.equal(gloo_run, reference, "Gloo DDP against the one-process reference")

for name, hook, state in (("no hook", None, None), ("fused_hook", fused, fused_state)):
    model = train_ddp(None, hook, state)
    ck.equal(flat(model), gloo_run, f"{harness.BACKEND} DDP, {name}, against Gloo DDP")
    ck.equal(flat(model), reference, f"{harness.BACKEND} DDP, {name}, against the reference")
    same_on_every_rank(model, name)

start = flat(fresh())
gloo_update = flat(train_ddp(gloo, integer=False)) - start
update = flat(train_ddp(None, fp16, fp16_state, integer=False)) - start
worst, largest = (update - gloo_update).abs().max().item(), gloo_update.abs().max().item()
ck.check(worst <= 0.01 * largest, f"fp16_slow_links_hook: updates differ from Gloo's by up to "
         f"{worst:.3g}, Gloo's largest is {largest:.3g}")
if rank == 0:  # 0 on one host; fp16's rounding on the inter-host stage across hosts
    print(f"fp16_slow_links_hook: updates within {worst:.3g} of Gloo's (largest {largest:.3g})",
          flush=True)

before = global_loss(fresh())
model = train_ddp(None, csc, csc_state, steps=8)
after = global_loss(model)
ck.check(after < before, f"csc_hook: loss over all data {before} -> {after} after 8 steps")
same_on_every_rank(model, "csc_hook")
if rank == 0:
    print(f"csc_hook: loss over all data {before:.1f} -> {after:.1f}", flush=True)

if harness.BACKEND == "strata":
    # DDP rebuilds its buckets after the first iteration, so a CSC slot may see another size:
    # the slot restarts with a zero residual. 1000 then 300 ones, chunks of 100, density 0.5:
    # 2 of 3 chunks selected (equal norms: the lowest indices), each element summed.
    import strata_torch
    pg = strata_torch.backend_of()  # the group itself on 1.13; the wrapped backend on 2.x
    for n in (1000, 300):
        t = torch.ones(n)
        pg.csc_allreduce(t, 4242, 0.5, 100, "sum").wait()
        kept = 100 * -(-(n // 100) // 2)  # ceil(nchunks / 2) chunks
        want = torch.cat([torch.full((kept,), float(size)), torch.zeros(n - kept)])
        ck.equal(t, want, f"csc_allreduce on a slot whose size changed to {n}")
ck.finish()
