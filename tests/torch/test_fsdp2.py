"""strata under FSDP2 (torch.distributed.fsdp.fully_shard) and DTensor, on CPU tensors, on a
device mesh whose groups are strata's.

1. The collectives as FSDP2 issues them, against exact references built on every rank from
   every rank's data: reduce_scatter_tensor of FSDP2's reduce-scatter buffer (each gradient's
   dim 0 padded to a multiple of the world size, then chunk r of every gradient, in order, goes
   to rank r) with the op FSDP2 picks (_get_gradient_divide_factors: AVG without a divide
   factor, AVG for a factor equal to the group's size, PREMUL_SUM(1/factor) otherwise), and
   all_gather_into_tensor in place (the input is rank r's slice of the output, as
   torch.ops.fsdp.all_gather_copy_in makes it), async as FSDP2 issues it; float32 and
   bfloat16. Inputs are small integers and factors powers of two, so the results are exact; a
   factor of 3 (inputs scaled by 1/3 in the dtype, as NCCL's PREMUL_SUM scales them) within an
   ulp of the dtype per addition.
2. Training: a small MLP whose dims (10, 7, 3) do not divide by the world size, each Linear and
   the root under fully_shard, 4 SGD steps. The same steps run on a Gloo mesh in the same
   processes; every step's loss and the final parameters must match Gloo's (float32 to 1e-5,
   bfloat16 mixed precision to 2e-2) and a one-process reference (float32). Variants: float32
   (reduce-scatter AVG), bfloat16 parameters and reductions, a divide factor of 2 x world size
   (PREMUL_SUM on strata; Gloo has no PREMUL_SUM, so its run sums and divides after:
   set_force_sum_reduction_for_comms) and, from 4 ranks, HSDP on a 2-D mesh (replicate x
   shard, both dims strata groups) against Gloo's 1-D run.
3. DTensor on the strata mesh: distribute_tensor (scatter from rank 0) of an uneven tensor,
   Shard -> Replicate (all-gather), Partial -> Shard and Partial(avg) -> Shard
   (reduce-scatter), Partial -> Replicate (all-reduce), a Shard(1) @ Shard(0) matmul; exact.

Under a PyTorch without FSDP2 (before 2.6: Debian's 1.13) the test exits 77 (skipped) with the
reason; from 2.6 a missing fully_shard or DTensor is a failure, never a skip.
fsdp2_mutants.py runs it with one reduction corrupted (AVG, PREMUL_SUM or the all-gather);
each mutant makes it fail. STRATA_TORCH_TEST_BACKEND=gloo runs it with Gloo as the world group (the test of the test; the
PREMUL_SUM variant then sums, as Gloo's reference does).
"""
import re
import sys

import harness

harness.require_torch()
import torch  # noqa: E402

RELEASE = tuple(int(x) for x in re.match(r"(\d+)\.(\d+)", torch.__version__).groups())
try:
    from torch.distributed.device_mesh import DeviceMesh, init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    from torch.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
except ImportError as e:
    if RELEASE >= (2, 6):
        print(f"FAIL: PyTorch {torch.__version__} has no FSDP2 or DTensor ({e}); every "
              "release from 2.6 has torch.distributed.fsdp.fully_shard", flush=True)
        sys.exit(1)
    harness.skip(f"PyTorch {torch.__version__} has no FSDP2 (torch.distributed.fsdp."
                 f"fully_shard, public from 2.6) or DTensor: {e}")

rank, size = harness.start(watchdog_s=100)

import torch.distributed as dist  # noqa: E402
from torch import nn  # noqa: E402

ck = harness.Checker(rank)
gloo = dist.new_group(backend="gloo")
mesh = init_device_mesh("cpu", (size,))
gloo_mesh = DeviceMesh.from_group(gloo, "cpu")
ck.check(dist.get_backend(mesh.get_group()) == harness.BACKEND,
         f"init_device_mesh's group has backend {dist.get_backend(mesh.get_group())}")
hsdp_mesh = None
if size >= 4 and size % 2 == 0:
    hsdp_mesh = init_device_mesh("cpu", (2, size // 2), mesh_dim_names=("replicate", "shard"))
    for d in ("replicate", "shard"):
        b = dist.get_backend(hsdp_mesh.get_group(d))
        ck.check(b == harness.BACKEND, f"2-D mesh dim {d}: backend {b}")

# --- 1. The collectives as FSDP2 issues them ---------------------------------------------------

SHAPES = [(10, 12), (10,), (7, 10), (7,), (3, 7), (3,), (1,)]  # the MLP's, and a 1-element one
DTYPES = [torch.float32, torch.bfloat16]


def grads_of(r, dtype):
    """Rank r's unsharded gradients: integers in [-8, 8], exact in bfloat16 and in any sum."""
    g = torch.Generator().manual_seed(1000 + r)
    return [torch.randint(-8, 9, s, generator=g).to(dtype) for s in SHAPES]


def padded(t):
    """t with dim 0 padded with zeros to a multiple of the world size (FSDP2's
    _get_dim0_padded_size)."""
    rows = -(-t.shape[0] // size) * size
    out = t.new_zeros((rows,) + tuple(t.shape[1:]))
    out[: t.shape[0]] = t
    return out


def reduce_scatter_input(grads):
    """FSDP2's reduce-scatter buffer: per rank r, chunk r of every padded gradient, in order
    (foreach_reduce_scatter_copy_in)."""
    chunks = [padded(t).reshape(size, -1) for t in grads]
    return torch.cat([torch.cat([c[r] for c in chunks]) for r in range(size)])


def fsdp_op(dtype, factor):
    """The reduce-scatter op FSDP2 issues for this dtype and divide factor, and the scale the
    reference applies to the sum."""
    try:
        from torch.distributed.fsdp._fully_shard._fsdp_collectives import (
            _get_gradient_divide_factors)
    except ImportError:
        ck.note("FSDP2's _get_gradient_divide_factors not found: the op is the test's guess")
        _get_gradient_divide_factors = None
    if _get_gradient_divide_factors is not None:
        pre, post, op, _ = _get_gradient_divide_factors(dist.group.WORLD, None, dtype, "cpu",
                                                         factor)
        ck.check(pre is None and post is None,
                 f"{dtype} factor {factor}: FSDP2 divides outside the collective ({pre}, {post})")
    elif factor is None or factor == size:
        op = dist.ReduceOp.AVG
    else:
        op = dist._make_nccl_premul_sum(1.0 / factor)
    return op, 1.0 / (factor or size)


def check_fsdp_collectives():
    from_fsdp = None
    try:
        from torch.distributed.fsdp._fully_shard._fsdp_collectives import (
            foreach_reduce_scatter_copy_in as from_fsdp)
    except ImportError:
        ck.note("FSDP2's foreach_reduce_scatter_copy_in not found: layout not cross-checked")
    for dtype in DTYPES:
        mine = grads_of(rank, dtype)
        buf = reduce_scatter_input(mine)
        if from_fsdp is not None:
            theirs = torch.empty_like(buf)
            from_fsdp([t.clone() for t in mine], theirs, size)
            ck.equal(buf, theirs, f"{dtype}: the test's reduce-scatter layout against FSDP2's")
        total = sum(reduce_scatter_input(grads_of(r, dtype)).double() for r in range(size))
        n = buf.numel() // size
        for factor in (None, size, 2 * size, 3):
            op, scale = fsdp_op(dtype, factor)
            kind = getattr(op, "op", op)  # a RedOpType (PREMUL_SUM comes as a ReduceOp)
            expected_kind = "AVG" if factor in (None, size) else "PREMUL_SUM"
            ck.check(kind == getattr(dist.ReduceOp, expected_kind),
                     f"{dtype} factor {factor}: FSDP2 issues {kind}, expected {expected_kind}")
            if harness.BACKEND == "gloo" and expected_kind == "PREMUL_SUM":
                continue  # "Cannot use ReduceOp.PREMUL_SUM with Gloo"
            out = torch.full((n,), float("nan"), dtype=dtype)
            work = dist.reduce_scatter_tensor(out, buf, op=op, group=mesh.get_group(),
                                              async_op=True)
            work.wait()
            what = f"reduce_scatter_tensor {dtype} {expected_kind} factor {factor}"
            mine_slice = slice(rank * n, (rank + 1) * n)
            if factor != 3:
                ck.equal(out, (total[mine_slice] * scale).to(dtype), what)
            else:
                # PREMUL_SUM's terms are each input times 1/3 in the dtype (as NCCL scales
                # them), then summed: each addition rounds, by at most an ulp of the sum.
                terms = [(reduce_scatter_input(grads_of(r, dtype))[mine_slice] * scale).double()
                         for r in range(size)]
                bound = size * torch.finfo(dtype).eps * sum(t.abs() for t in terms)
                close(what, out, sum(terms), 0.0, bound)
            ck.equal(buf, reduce_scatter_input(mine), f"reduce_scatter_tensor {dtype} "
                     f"{expected_kind}: the input changed")

        # All-gather, in place: the input is this rank's slice of the output.
        shards = [padded(t).reshape(size, -1)[rank] for t in mine]
        numel = sum(s.numel() for s in shards)
        output = torch.full((numel * size,), float("nan"), dtype=dtype)
        if hasattr(torch.ops, "fsdp") and hasattr(torch.ops.fsdp, "all_gather_copy_in"):
            inp, output = torch.ops.fsdp.all_gather_copy_in(
                shards, output, [s.numel() for s in shards], numel, rank)
        else:
            ck.note("torch.ops.fsdp.all_gather_copy_in not found: the test copies in itself")
            inp = output.narrow(0, numel * rank, numel)
            inp.copy_(torch.cat(shards))
        dist.all_gather_into_tensor(output, inp, group=mesh.get_group(), async_op=True).wait()
        ref = torch.cat([torch.cat([padded(t).reshape(size, -1)[r] for t in grads_of(r, dtype)])
                         for r in range(size)])
        ck.equal(output, ref, f"all_gather_into_tensor {dtype}, in place")


# --- 2. Training under fully_shard -------------------------------------------------------------

STEPS = 4
LR = 0.05


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2, self.l3 = nn.Linear(12, 10), nn.Linear(10, 7), nn.Linear(7, 3)

    def forward(self, x):
        return self.l3(torch.relu(self.l2(torch.relu(self.l1(x)))))


def fresh():
    torch.manual_seed(7)
    return Net()


def batch(r, step):
    g = torch.Generator().manual_seed(100 * step + r)
    return torch.randn(5, 12, generator=g), torch.randn(5, 3, generator=g)


def loss_fn(out, y):
    return ((out.float() - y) ** 2).mean()


def train_fsdp(m, dtype=None, factor=None, force_sum=False):
    """STEPS steps of FSDP2 over the mesh m; returns (losses, full parameters)."""
    model = fresh()
    kw = {"mesh": m}
    if dtype is not None:
        kw["mp_policy"] = MixedPrecisionPolicy(param_dtype=dtype, reduce_dtype=dtype)
    for layer in (model.l1, model.l2, model.l3):
        fully_shard(layer, **kw)
    fully_shard(model, **kw)
    for mod in model.modules():
        if factor is not None and hasattr(mod, "set_gradient_divide_factor"):
            mod.set_gradient_divide_factor(factor)
        if force_sum and hasattr(mod, "set_force_sum_reduction_for_comms"):
            mod.set_force_sum_reduction_for_comms(True)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    losses = []
    for step in range(STEPS):
        x, y = batch(rank, step)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    params = [p.full_tensor().detach().clone() for p in model.parameters()]
    return torch.tensor(losses), params


def train_reference(scale=1.0):
    """One process: the gradient of the mean over ranks of each rank's loss, times scale
    (FSDP2 averages; a divide factor f gives sum / f = mean * size / f)."""
    model = fresh()
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    losses = []
    for step in range(STEPS):
        per_rank = [loss_fn(model(x), y) for x, y in (batch(r, step) for r in range(size))]
        (sum(per_rank) / size * scale).backward()
        opt.step()
        opt.zero_grad()
        losses.append(per_rank[rank].item())
    return torch.tensor(losses), [p.detach().clone() for p in model.parameters()]


def close(what, a, b, rtol, atol):
    """a and b (losses, or lists of parameters) within rtol * |b| + atol."""
    pairs = [(a, b)] if isinstance(a, torch.Tensor) else list(zip(a, b))
    for i, (x, y) in enumerate(pairs):
        x, y = x.double(), y.double()
        ok = x.shape == y.shape and bool(((x - y).abs() <= rtol * y.abs() + atol).all())
        if not ck.check(ok, f"{what}[{i}]: max difference "
                            f"{(x - y).abs().max().item() if x.shape == y.shape else 'shape'}"):
            return


def check_training():
    for name, dtype, factor, tol in (("float32", None, None, 1e-5),
                                     ("bfloat16", torch.bfloat16, None, 2e-2),
                                     ("premul", None, 2.0 * size, 1e-5)):
        premul = factor is not None
        # Gloo has no PREMUL_SUM: its run sums and divides after the reduce-scatter.
        losses, params = train_fsdp(mesh, dtype, factor,
                                    force_sum=premul and harness.BACKEND == "gloo")
        g_losses, g_params = train_fsdp(gloo_mesh, dtype, factor, force_sum=premul)
        close(f"{name}: losses against Gloo's", losses, g_losses, tol, 0.0)
        close(f"{name}: parameters against Gloo's", params, g_params, tol, tol)
        if dtype is None:
            r_losses, r_params = train_reference(size / factor if premul else 1.0)
            close(f"{name}: losses against the reference", losses, r_losses, 1e-5, 0.0)
            close(f"{name}: parameters against the reference", params, r_params, 1e-5, 1e-6)
        if name == "float32":
            fp32_gloo = (g_losses, g_params)
        if rank == 0:
            print(f"fsdp2 {name}: losses {[round(v, 5) for v in losses.tolist()]}", flush=True)
    if hsdp_mesh is not None:
        losses, params = train_fsdp(hsdp_mesh)
        close("hsdp: losses against Gloo's 1-D run", losses, fp32_gloo[0], 1e-5, 0.0)
        close("hsdp: parameters against Gloo's 1-D run", params, fp32_gloo[1], 1e-5, 1e-6)
        if rank == 0:
            print(f"fsdp2 hsdp 2x{size // 2}: losses {[round(v, 5) for v in losses.tolist()]}",
                  flush=True)


# --- 3. DTensor ----------------------------------------------------------------------------

def check_dtensor():
    rows = 3 * size + 1  # uneven shards
    full = torch.arange(rows * 5, dtype=torch.float32).reshape(rows, 5) - 20
    # Only rank 0's copy is right: distribute_tensor scatters from rank 0 (src_data_rank=0).
    src = full if rank == 0 else torch.zeros_like(full)
    dt = distribute_tensor(src, mesh, [Shard(0)])
    chunks = list(torch.chunk(full, size))  # Shard(0)'s split: ceil(rows / size) a rank
    ck.equal(dt.to_local(), chunks[rank] if rank < len(chunks) else full[:0],
             "distribute_tensor Shard(0): this rank's shard")
    ck.equal(dt.redistribute(mesh, [Replicate()]).to_local(), full,
             "Shard(0) -> Replicate (all-gather)")
    ck.equal(dt.full_tensor(), full, "full_tensor")

    contrib = (full + rank).contiguous()  # rank r adds r everywhere
    total = full * size + sum(range(size))
    part = DTensor.from_local(contrib, mesh, [Partial()])
    ck.equal(part.redistribute(mesh, [Shard(0)]).full_tensor(), total,
             "Partial(sum) -> Shard(0) (reduce-scatter)")
    ck.equal(part.redistribute(mesh, [Replicate()]).to_local(), total,
             "Partial(sum) -> Replicate (all-reduce)")
    avg = DTensor.from_local(contrib * size, mesh, [Partial("avg")])
    ck.equal(avg.redistribute(mesh, [Shard(0)]).full_tensor(), total,
             "Partial(avg) -> Shard(0) (reduce-scatter AVG)")

    a = torch.arange(4 * 8, dtype=torch.float32).reshape(4, 8) % 5 - 2
    b = torch.arange(8 * 6, dtype=torch.float32).reshape(8, 6) % 7 - 3
    da = distribute_tensor(a, mesh, [Shard(1)])
    db = distribute_tensor(b, mesh, [Shard(0)])
    ck.equal((da @ db).full_tensor(), a @ b, "Shard(1) @ Shard(0) matmul")


check_fsdp_collectives()
check_training()
check_dtensor()
if rank == 0:
    print(f"fsdp2: torch {torch.__version__}, {size} ranks, mesh backend "
          f"{dist.get_backend(mesh.get_group())}", flush=True)
ck.finish()
