"""CUDA tensors on the strata backend: collectives against a CPU reference, the stream
semantics of async_op=True and wait(), and two DDP steps against a one-process reference.
Skipped (77) where torch.cuda.is_available() is false.

Every rank may share one GPU (device 0): strata then stages through host memory (docs/gpu.md,
"Several ranks on one GPU"). With more GPUs, rank r uses device local_rank % device_count; the
backend pins that device itself at the first CUDA tensor (LOCAL_RANK or the launcher's local
rank), which this test checks.

Inputs are small integers, so sums are exact in float16 and bfloat16 as in float32 whatever the
order of reduction; AVG, which divides, is compared within a dtype-sized tolerance.

Two ranks on one GPU take turns on it (no MPS), and every collective holds the user's stream with
a spinning kernel while the host runs it, so each call costs context switches: the sizes are kept
small (one float32 allreduce of a million elements) to finish within a minute on one H200. Each
rank prints a line per section with the time since start, so a run cut short shows where each
rank was; the watchdog (90 s, every thread's stack) fires before ctest's TIMEOUT (120 s), and
the group's timeout (60 s) makes a collective that waits for ever fail with strata's message.

    mpiexec -n 2 python3 tests/torch/test_cuda.py
"""
import time

import harness

harness.require_torch()
import torch  # noqa: E402

if not torch.cuda.is_available():
    harness.skip("torch.cuda.is_available() is false (no GPU, or a PyTorch without CUDA)")
if harness.BACKEND != "strata":
    harness.skip("test_cuda.py tests the strata backend's CUDA path (Gloo lacks reduce_scatter)")

T0 = time.monotonic()
rank, size = harness.start(watchdog_s=90)


def section(name):
    """One line per rank and section: where a run that was cut short had got to."""
    print(f"[rank {rank} +{time.monotonic() - T0:.1f}s] {name}", flush=True)


section("group initialised")

import torch.distributed as dist  # noqa: E402
from torch import nn  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

ck = harness.Checker(rank)
R = dist.ReduceOp
DTYPES = [torch.float32, torch.float16, torch.bfloat16]
SIZES = [0, 1, 1021, (1 << 16) + 3]
AVG_RTOL = {torch.float16: 2e-3, torch.bfloat16: 1.6e-2, torch.float32: 1e-6}

local = harness.local_rank()
ndev = torch.cuda.device_count()
dev = torch.device("cuda", max(local, 0) % ndev)
if rank == 0:
    print(f"{size} ranks, {ndev} GPU(s): {torch.cuda.get_device_name(0)}; torch "
          f"{torch.__version__}, backend {harness.BACKEND}", flush=True)


def inputs(r, n, dtype, seed=0):
    """Rank r's input: integers in [-10, 10], exact in every dtype here."""
    i = torch.arange(n, dtype=torch.int64)
    return ((i * 7 + r * 13 + seed * 5 + 3) % 21 - 10).to(dtype)


def total(n, dtype, seed=0):
    return torch.stack([inputs(r, n, dtype, seed).double() for r in range(size)]).sum(0)


def on_dev(t):
    return t.to(dev)


# The first CUDA collective pins the device from the local rank when the user left it at 0.
section("first CUDA collective (device state, staged fabrics)")
x = on_dev(inputs(rank, 4, torch.float32))
dist.all_reduce(x)
want_dev = local if 0 <= local < ndev else 0
ck.check(torch.cuda.current_device() == want_dev,
         f"current device after the first CUDA collective: {torch.cuda.current_device()}, "
         f"expected {want_dev} (local rank {local}, {ndev} GPUs)")
ck.equal(x.cpu(), total(4, torch.float32).float(), "first allreduce")

for dtype in DTYPES:
    section(f"collectives of {dtype}, sizes {SIZES}")
    for n in SIZES:
        what = f"{dtype} n={n}"
        # allreduce: sum, and avg where the dtype is floating (all here).
        t = on_dev(inputs(rank, n, dtype, 1))
        dist.all_reduce(t, op=R.SUM)
        ck.equal(t.cpu(), total(n, dtype, 1).to(dtype), f"allreduce sum {what}")
        if hasattr(R, "AVG"):
            t = on_dev(inputs(rank, n, dtype, 2))
            dist.all_reduce(t, op=R.AVG)
            ck.equal(t.cpu(), (total(n, dtype, 2) / size).to(dtype), f"allreduce avg {what}",
                     rtol=AVG_RTOL[dtype])
        # broadcast from the last rank.
        root = size - 1
        t = on_dev(inputs(rank, n, dtype, 3))
        dist.broadcast(t, src=root)
        ck.equal(t.cpu(), inputs(root, n, dtype, 3), f"broadcast {what}")
        # allgather into a list, and into one tensor where torch has it.
        outs = [torch.full((n,), -99, dtype=dtype, device=dev) for _ in range(size)]
        dist.all_gather(outs, on_dev(inputs(rank, n, dtype, 4)))
        for r in range(size):
            ck.equal(outs[r].cpu(), inputs(r, n, dtype, 4), f"all_gather [{r}] {what}")
        gather_tensor = getattr(dist, "all_gather_into_tensor", None) or \
            getattr(dist, "_all_gather_base", None)
        if gather_tensor is not None:
            flat = torch.empty(n * size, dtype=dtype, device=dev)
            gather_tensor(flat, on_dev(inputs(rank, n, dtype, 5)))
            ck.equal(flat.cpu(), torch.cat([inputs(r, n, dtype, 5) for r in range(size)]),
                     f"all_gather_into_tensor {what}")
        # reduce_scatter from a list, and from one tensor where torch has it: block r of the
        # reduction of every rank's (size * n) input.
        full = torch.stack([inputs(r, n * size, dtype, 6).double() for r in range(size)]).sum(0)
        mine = full[rank * n:(rank + 1) * n].to(dtype)
        src = inputs(rank, n * size, dtype, 6)
        out = torch.empty(n, dtype=dtype, device=dev)
        dist.reduce_scatter(out, [on_dev(c) for c in src.split(n)] if n else
                            [on_dev(src)] * size)
        ck.equal(out.cpu(), mine, f"reduce_scatter {what}")
        scatter_tensor = getattr(dist, "reduce_scatter_tensor", None) or \
            getattr(dist, "_reduce_scatter_base", None)
        if scatter_tensor is not None:
            out = torch.empty(n, dtype=dtype, device=dev)
            scatter_tensor(out, on_dev(src))
            ck.equal(out.cpu(), mine, f"reduce_scatter_tensor {what}")

# One large call: several staging chunks (4 MiB slots) with the stream held all along.
section("allreduce of (1 << 20) + 3 float32")
n = (1 << 20) + 3
t = on_dev(inputs(rank, n, torch.float32, 9))
dist.all_reduce(t)
ck.equal(t.cpu(), total(n, torch.float32, 9).float(), f"allreduce sum float32 n={n}")

# A non-contiguous tensor: worked on through a copy, copied back on the stream.
section("non-contiguous tensor, stream order, side stream, future")
m = on_dev(inputs(rank, 6 * 7, torch.float32, 7).view(6, 7)).t()
dist.all_reduce(m)
ck.equal(m.cpu(), total(6 * 7, torch.float32, 7).float().view(6, 7).t(), "allreduce transposed")

# Stream order: the collective starts after the kernels queued before it on the current stream
# (a 50 ms sleep, then the write it must see), and async_op=True + wait() orders the current
# stream after it without the host waiting.
n = 1 << 18
t = torch.ones(n, device=dev)
torch.cuda._sleep(100_000_000)
t.mul_(rank + 1)
work = dist.all_reduce(t, async_op=True)
work.wait()
y = t * 2  # queued on the current stream after wait(): sees the sum
ck.equal(y.cpu(), torch.full((n,), 2.0 * sum(r + 1 for r in range(size))),
         "async allreduce after a sleep, then wait()")
torch.cuda.synchronize()
ck.check(work.is_completed(), "is_completed() after torch.cuda.synchronize()")

# The collective on a side stream; wait() on the default stream orders it after the side's.
side = torch.cuda.Stream(device=dev)
t = torch.full((n,), float(rank + 1), device=dev)
side.wait_stream(torch.cuda.current_stream(dev))
with torch.cuda.stream(side):
    torch.cuda._sleep(50_000_000)
    work = dist.all_reduce(t, async_op=True)
work.wait()  # the default stream now waits for the side stream's collective
z = t + 0
ck.equal(z.cpu(), torch.full((n,), float(sum(r + 1 for r in range(size)))),
         "async allreduce on a side stream, wait() on the default stream")
work.synchronize()  # host waits for the event; must not raise
ck.check(work.is_completed(), "is_completed() after synchronize()")

# The future: its value holds the result, usable on the current stream after fut.wait().
t = on_dev(inputs(rank, 1021, torch.float32, 8))
fut = dist.all_reduce(t, async_op=True).get_future()
got = fut.wait()[0]
ck.equal(got.cpu(), total(1021, torch.float32, 8).float(), "future value")

# What CUDA tensors do not get: a clear refusal, never a wrong result.
section("send/recv refused")
if size > 1:
    try:
        if rank == 0:
            dist.send(torch.ones(4, device=dev), 1)
        else:
            dist.recv(torch.ones(4, device=dev), 0)
        ck.fail("send/recv of a CUDA tensor did not raise")
    except RuntimeError as e:
        ck.check("CUDA" in str(e), f"send/recv refusal names CUDA: {e}")


# DDP: two SGD steps give the parameters of a one-process reference that averages every
# rank's gradient itself.
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(32, 16)
        self.b = nn.Linear(16, 4)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


def batch(r, step):
    g = torch.Generator().manual_seed(1000 * step + r)
    return torch.randn(8, 32, generator=g), torch.randn(8, 4, generator=g)


section("DDP: two steps")
torch.manual_seed(5)
ref = Net()
model = Net().to(dev)
model.load_state_dict(ref.state_dict())
ddp = DDP(model, device_ids=[dev.index])
opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
for step in range(2):
    x, y = batch(rank, step)
    opt.zero_grad()
    nn.functional.mse_loss(ddp(x.to(dev)), y.to(dev)).backward()
    opt.step()
    grads = [torch.zeros_like(p) for p in ref.parameters()]
    for r in range(size):
        ref.zero_grad()
        xr, yr = batch(r, step)
        nn.functional.mse_loss(ref(xr), yr).backward()
        for g, p in zip(grads, ref.parameters()):
            g += p.grad / size
    for g, p in zip(grads, ref.parameters()):
        p.grad = g
    ref_opt.step()
for (name, p), q in zip(model.named_parameters(), ref.parameters()):
    ck.check(torch.allclose(p.detach().cpu(), q.detach(), rtol=1e-4, atol=1e-5),
             f"DDP parameter {name} after 2 steps: max difference "
             f"{(p.detach().cpu() - q.detach()).abs().max().item()}")

torch.cuda.synchronize()
section("teardown")
ck.finish()
