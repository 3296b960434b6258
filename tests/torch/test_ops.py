"""Every operation of the strata backend against a local reference and against Gloo, on the
same inputs in the same job: the world group runs strata, a second group over the same ranks
runs Gloo. Every dtype strata has, sizes 0, 1, a prime and one above 64 Ki elements.

Each rank derives every rank's inputs from (rank, size, seed), so the reference is computed
locally in float64 from all of them. Inputs are small integers: sums, products, minima and
maxima are exact in every dtype whatever the order of reduction, so results are compared
element by element without tolerance (AVG, which divides, is the one exception). Where Gloo
lacks an operation or a dtype (bfloat16, reduce_scatter, _all_gather_base in torch 1.13) only
the reference is compared, and a note says so. Also gather, scatter, all_gather_coalesced, sparse
all_reduce, PREMUL_SUM, sequence numbers and receives from any source (and their timeout).

    mpiexec --oversubscribe -n 4 /usr/bin/python3 tests/torch/test_ops.py
"""
import inspect
import os
import time

import harness

rank, size = harness.start(watchdog_s=110)

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

gloo = dist.new_group(backend="gloo")
ck = harness.Checker(rank)
R = dist.ReduceOp
DTYPES = [torch.int8, torch.uint8, torch.int32, torch.int64, torch.float16, torch.bfloat16,
          torch.float32, torch.float64]
FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
SIZES = [0, 1, 1021, 65537]
# TORCH_OPS_QUICK=1: a few dtypes and sizes, for the entries that test a launch or a layout
# whose every-dtype run another entry makes.
if os.environ.get("TORCH_OPS_QUICK") == "1":
    DTYPES = [torch.int32, torch.bfloat16, torch.float32]
    SIZES = [0, 1, 1021]
OPS = {"sum": R.SUM, "product": R.PRODUCT, "min": R.MIN, "max": R.MAX}
# AVG divides by the size: compared within a few units in the last place of the dtype.
AVG_RTOL = {torch.float16: 2e-3, torch.bfloat16: 1.6e-2, torch.float32: 1e-6,
            torch.float64: 1e-14}


def inputs(r, n, dtype, seed=0, op="sum"):
    """Rank r's input: |sum| <= 40 over 4 ranks (int8-safe), products within +-16 (or 81 for
    uint8), integers that every dtype, bfloat16 included, holds exactly."""
    i = torch.arange(n, dtype=torch.int64)
    if op == "product":
        table = [1, 2, 3] if dtype == torch.uint8 else [-2, -1, 1, 2]
        v = torch.tensor(table)[(i * 3 + r + seed) % len(table)]
    else:
        v = (i * 7 + r * 13 + seed * 5 + 3) % 21
        if dtype != torch.uint8:
            v = v - 10
    return v.to(dtype)


def reduced(ranks, n, dtype, seed=0, op="sum"):
    """The reduction over `ranks` of their inputs, computed in float64 and cast to dtype."""
    x = torch.stack([inputs(r, n, dtype, seed, op).double() for r in ranks])
    if op == "sum":
        return x.sum(0).to(dtype)
    if op == "product":
        return x.prod(0).to(dtype)
    if op == "min":
        return x.min(0).values.to(dtype)
    if op == "max":
        return x.max(0).values.to(dtype)
    return (x.sum(0) / len(ranks)).to(dtype)  # avg


def lacks(label, err):
    """A note naming the operation, and the dtype where the refusal is about the dtype."""
    words, first = label.split(), str(err).splitlines()[0][:80]
    dtype = [w for w in words if w.startswith("torch.")]
    what = words[0] + (f" ({dtype[0]})" if "scalar type" in first and dtype else "")
    return f"gloo lacks {what}: {first}"


def both(label, fn, expect, rtol=0.0, gloo_too=True):
    """Runs fn(group) on the world group (strata) then on Gloo's; each result must equal
    `expect`. fn returns the tensor to compare, or None where this rank has nothing to check.
    A "not supported" error is a note on Gloo's side and a failure on strata's. gloo_too=False
    where Gloo itself cannot take the call (it crashes)."""
    groups = [(harness.BACKEND, None), ("gloo-ref", gloo)]
    if not gloo_too:  # (with STRATA_TORCH_TEST_BACKEND=gloo the world group is Gloo's too)
        groups = [] if harness.BACKEND == "gloo" else groups[:1]
    for name, group in groups:
        try:
            got = fn(group)
        except RuntimeError as e:
            if (name == "gloo-ref" or harness.BACKEND == "gloo") and harness.unsupported(e):
                ck.note(lacks(label, e))
            else:
                ck.fail(f"{name} {label}: raised {e}")
            continue
        if got is not None:
            ck.equal(got, expect, f"{name} {label}", rtol)


def filler(n, dtype):
    """What an output holds before the call: a value no result here can be."""
    return torch.full((n,), 99, dtype=dtype)


def test_all_reduce(dt, n):
    for name, op in OPS.items():
        def fn(g, name=name, op=op):
            t = inputs(rank, n, dt, op=name)
            dist.all_reduce(t, op=op, group=g)
            return t
        both(f"all_reduce {name} {dt} n={n}", fn, reduced(range(size), n, dt, op=name))
    if dt in FLOATS:
        def avg(g):
            t = inputs(rank, n, dt)
            dist.all_reduce(t, op=R.AVG, group=g)
            return t
        both(f"all_reduce avg {dt} n={n}", avg, reduced(range(size), n, dt, op="avg"),
             AVG_RTOL[dt])


def test_rooted(dt, n):
    for root in range(size):
        def bcast(g, root=root):
            t = inputs(rank, n, dt, seed=1)  # differs per rank: only the root's may survive
            dist.broadcast(t, src=root, group=g)
            return t
        both(f"broadcast root={root} {dt} n={n}", bcast, inputs(root, n, dt, seed=1))
        # Every op from the last root, sum from every root; only the root's buffer is defined.
        for name in OPS if root == size - 1 else ["sum"]:
            def red(g, root=root, name=name):
                t = inputs(rank, n, dt, op=name)
                dist.reduce(t, dst=root, op=OPS[name], group=g)
                return t if rank == root else None
            both(f"reduce {name} root={root} {dt} n={n}", red,
                 reduced(range(size), n, dt, op=name))


def test_gathers(dt, n):
    # Gloo 1.13 dies of SIGFPE (a division by the element count) gathering 0 elements.
    gloo_too = n > 0
    if not gloo_too:
        ck.note("gloo-ref skipped for gathers of 0 elements (Gloo 1.13 dies of SIGFPE)")
    everyone = torch.cat([inputs(r, n, dt) for r in range(size)])

    def gather(g):
        out = [filler(n, dt) for _ in range(size)]
        dist.all_gather(out, inputs(rank, n, dt), group=g)
        return torch.cat(out)
    both(f"all_gather {dt} n={n}", gather, everyone, gloo_too=gloo_too)

    def gather_base(g):
        out = filler(size * n, dt)
        dist._all_gather_base(out, inputs(rank, n, dt), group=g)
        return out
    both(f"_all_gather_base {dt} n={n}", gather_base, everyone, gloo_too=gloo_too)

    # Rank j's share is block j of every rank's input; block j of rank r is inputs(r, seed=j).
    for name in ["sum", "max"]:
        mine = reduced(range(size), n, dt, seed=rank, op=name)

        def scatter(g, name=name):
            out = filler(n, dt)
            dist.reduce_scatter(out, [inputs(rank, n, dt, seed=j, op=name) for j in range(size)],
                                op=OPS[name], group=g)
            return out
        both(f"reduce_scatter {name} {dt} n={n}", scatter, mine, gloo_too=gloo_too)

        def scatter_base(g, name=name):
            out = filler(n, dt)
            inp = torch.cat([inputs(rank, n, dt, seed=j, op=name) for j in range(size)])
            dist._reduce_scatter_base(out, inp, op=OPS[name], group=g)
            return out
        both(f"_reduce_scatter_base {name} {dt} n={n}", scatter_base, mine,
             gloo_too=gloo_too)
    if dt in FLOATS:  # FSDP's gradient reduce-scatter with AVG
        def scatter_avg(g):
            out = filler(n, dt)
            inp = torch.cat([inputs(rank, n, dt, seed=j) for j in range(size)])
            dist._reduce_scatter_base(out, inp, op=R.AVG, group=g)
            return out
        both(f"_reduce_scatter_base avg {dt} n={n}", scatter_avg,
             reduced(range(size), n, dt, seed=rank, op="avg"), AVG_RTOL[dt], gloo_too=gloo_too)


def test_coalesced(dt):
    shapes = [1021, 1, 0, 7]

    def fn(g):
        ts = [inputs(rank, n, dt, seed=k) for k, n in enumerate(shapes)]
        dist.all_reduce_coalesced(ts, op=R.SUM, group=g)
        return torch.cat(ts)
    both(f"all_reduce_coalesced {dt}", fn,
         torch.cat([reduced(range(size), n, dt, seed=k) for k, n in enumerate(shapes)]))


def test_coalescing_manager(dt):
    """PyTorch 2's _coalescing_manager: the all_gather_into_tensor, reduce_scatter_tensor and
    all_reduce calls made in its block reach the backend together at its end, as one
    allgather_into_tensor_coalesced, reduce_scatter_tensor_coalesced or allreduce_coalesced
    (what FSDP and DTensor's redistribution issue). PyTorch 1.13's manager is NCCL's alone."""
    cm = getattr(dist, "_coalescing_manager", None)
    if cm is None or "async_ops" not in inspect.signature(cm).parameters:
        return
    shapes = [1021, 1, 7]

    def gather(g):
        outs = [filler(n * size, dt) for n in shapes]
        with cm(group=g):
            for k, n in enumerate(shapes):
                dist.all_gather_into_tensor(outs[k], inputs(rank, n, dt, seed=k), group=g)
        return torch.cat(outs)
    both(f"_coalescing_manager all_gather_into_tensor {dt}", gather,
         torch.cat([inputs(r, n, dt, seed=k) for k, n in enumerate(shapes) for r in range(size)]))

    def scatter(g):
        outs = [filler(n, dt) for n in shapes]
        with cm(group=g):
            for k, n in enumerate(shapes):  # chunk j of each input goes to rank j
                full = torch.cat([inputs(rank, n, dt, seed=10 * k + j) for j in range(size)])
                dist.reduce_scatter_tensor(outs[k], full, group=g)
        return torch.cat(outs)
    both(f"_coalescing_manager reduce_scatter_tensor {dt}", scatter,
         torch.cat([reduced(range(size), n, dt, seed=10 * k + rank)
                    for k, n in enumerate(shapes)]))

    def reduce_async(g):
        ts = [inputs(rank, n, dt, seed=k) for k, n in enumerate(shapes)]
        with cm(group=g, async_ops=True) as handle:
            for t in ts:
                dist.all_reduce(t, group=g)
        handle.wait()
        return torch.cat(ts)
    both(f"_coalescing_manager all_reduce (async_ops) {dt}", reduce_async,
         torch.cat([reduced(range(size), n, dt, seed=k) for k, n in enumerate(shapes)]))


def test_alltoall(dt, n):
    """Block j of rank r's input goes to rank j: rank r receives inputs(j, seed=r) from j.
    Either correct, or refused with "not supported" (the issue allows it)."""
    expect = torch.cat([inputs(j, n, dt, seed=rank) for j in range(size)])
    for name, group in ((harness.BACKEND, None), ("gloo-ref", gloo)):
        for variant in ["all_to_all_single", "all_to_all"]:
            blocks = [inputs(rank, n, dt, seed=j) for j in range(size)]
            try:
                if variant == "all_to_all_single":
                    out = filler(size * n, dt)
                    dist.all_to_all_single(out, torch.cat(blocks), group=group)
                else:
                    outs = [filler(n, dt) for _ in range(size)]
                    dist.all_to_all(outs, blocks, group=group)
                    out = torch.cat(outs)
            except RuntimeError as e:
                ck.check(harness.unsupported(e), f"{name} {variant}: unclear error: {e}")
                ck.note(f"{name} refuses {variant}" + (f" ({dt})" if "scalar type" in str(e) else "")
                        + f": {str(e).splitlines()[0][:80]}")
                continue
            ck.equal(out, expect, f"{name} {variant} {dt} n={n}")


def test_send_recv(dt, n):
    """A ring: rank r sends to r+1 and receives from r-1. Even ranks send first, odd ranks
    receive first (blocking), then the same with isend/irecv posted together."""
    if size == 1:
        return
    nxt, prv = (rank + 1) % size, (rank - 1) % size
    for name, group in ((harness.BACKEND, None), ("gloo-ref", gloo)):
        got = filler(n, dt)
        mine = inputs(rank, n, dt, seed=3)
        if rank % 2 == 0:
            dist.send(mine, nxt, group=group)
            dist.recv(got, prv, group=group)
        else:
            dist.recv(got, prv, group=group)
            dist.send(mine, nxt, group=group)
        ck.equal(got, inputs(prv, n, dt, seed=3), f"{name} send/recv ring {dt} n={n}")
        got = filler(n, dt)
        works = [dist.irecv(got, prv, group=group), dist.isend(mine, nxt, group=group)]
        for w in works:
            w.wait()
        ck.equal(got, inputs(prv, n, dt, seed=3), f"{name} isend/irecv ring {dt} n={n}")


def test_gather_scatter(dt, n):
    """gather to and scatter from every root: block r of the root's list is rank r's."""
    gloo_too = n > 0  # Gloo 1.13's SIGFPE on 0 elements (above)
    for root in range(size):
        def gather(g, root=root):
            out = [filler(n, dt) for _ in range(size)] if rank == root else None
            dist.gather(inputs(rank, n, dt, seed=root), out, dst=root, group=g)
            return torch.cat(out) if rank == root else None
        both(f"gather root={root} {dt} n={n}", gather,
             torch.cat([inputs(r, n, dt, seed=root) for r in range(size)]), gloo_too=gloo_too)

        def scatter(g, root=root):
            out = filler(n, dt)
            parts = [inputs(j, n, dt, seed=7) for j in range(size)] if rank == root else None
            dist.scatter(out, parts, src=root, group=g)
            return out
        both(f"scatter root={root} {dt} n={n}", scatter, inputs(rank, n, dt, seed=7),
             gloo_too=gloo_too)


def test_all_gather_coalesced(dt):
    shapes = [(3, 5), (1,), (0,), (7,)]

    def fn(g):
        mine = [inputs(rank, int(torch.Size(s).numel()), dt, seed=k).view(s)
                for k, s in enumerate(shapes)]
        outs = [[torch.full(s, 99, dtype=dt) for s in shapes] for _ in range(size)]
        dist.all_gather_coalesced(outs, mine, group=g)
        return torch.cat([t.reshape(-1) for lst in outs for t in lst])
    expect = torch.cat([inputs(r, int(torch.Size(s).numel()), dt, seed=k)
                        for r in range(size) for k, s in enumerate(shapes)])
    both(f"all_gather_coalesced {dt}", fn, expect)


def test_sparse_all_reduce():
    """A sparse COO sum: every rank holds entries at rank-dependent rows, some shared."""
    def mine(r):
        idx = torch.tensor([[r % 3, 4, 5 + r], [0, 1, 2]])
        return torch.sparse_coo_tensor(idx, torch.tensor([1.0 + r, 2.0, 3.0 * r]), (5 + size, 3))
    expect = sum(mine(r).to_dense() for r in range(size))

    def fn(g):
        t = mine(rank)
        dist.all_reduce(t, group=g)
        return t.to_dense()
    both("all_reduce sparse", fn, expect)
    try:
        dist.all_reduce(mine(rank), op=R.MAX)
        ck.fail("sparse all_reduce with MAX was not refused")
    except RuntimeError as e:
        ck.check("SUM" in str(e), f"sparse all_reduce MAX: unclear error: {e}")


def test_premul_sum(dt):
    """PREMUL_SUM (FSDP's pre-division): the inputs times the factor, summed; inputs unchanged
    where they are not outputs. Not in Gloo: the reference only."""
    if harness.BACKEND == "gloo":
        return
    op = dist._make_nccl_premul_sum(0.5)
    half = (torch.stack([inputs(r, 1021, dt).double() for r in range(size)]) * 0.5).sum(0)
    t = inputs(rank, 1021, dt)
    dist.all_reduce(t, op=op)
    ck.equal(t, half.to(dt), f"all_reduce premul_sum {dt}")
    ts = [inputs(rank, 1021, dt), inputs(rank, 7, dt)]
    dist.all_reduce_coalesced(ts, op=op)
    ck.equal(ts[1], half[:7].to(dt), f"all_reduce_coalesced premul_sum {dt}")
    t = inputs(rank, 1021, dt)
    dist.reduce(t, dst=size - 1, op=op)
    ck.equal(t, half.to(dt) if rank == size - 1 else inputs(rank, 1021, dt),
             f"reduce premul_sum {dt} (the root's result, the others' input)")
    inp = torch.cat([inputs(rank, 1021, dt, seed=j) for j in range(size)])
    keep = inp.clone()
    out = filler(1021, dt)
    dist._reduce_scatter_base(out, inp, op=op)
    want = (torch.stack([inputs(r, 1021, dt, seed=rank).double() for r in range(size)]) * 0.5)
    ck.equal(out, want.sum(0).to(dt), f"_reduce_scatter_base premul_sum {dt}")
    ck.equal(inp, keep, f"_reduce_scatter_base premul_sum {dt} left its input as it was")


def wrapper_sequence(pg, method):
    """PyTorch 2's ProcessGroup wrapper's sequence-number method `method`: its value, or None
    where PyTorch refuses custom backends' numbers (2.11: "ProcessGroup custom does not yet
    support sequence numbers.") or has no such method (2.15 dropped the setter)."""
    call = getattr(pg, method, None)
    if call is None:
        return None
    try:
        return call()
    except RuntimeError as e:
        ck.check("does not yet support sequence numbers" in str(e),
                 f"PyTorch 2's ProcessGroup.{method} failed otherwise: {e}")
        return None


def test_sequence():
    if harness.BACKEND == "gloo":
        return
    pg = dist.distributed_c10d._get_default_group()
    wrapper = None
    if hasattr(pg, "_get_backend"):
        # PyTorch 2: the strata backend object under the ProcessGroup numbers its operations;
        # what the wrapper does with them depends on the version (wrapper_sequence).
        import strata_torch
        wrapper = pg
        pg = strata_torch.backend_of(wrapper)
        ck.check(pg is not None, "no strata backend under the default group")
        wrapper_sequence(wrapper, "_set_sequence_number_for_group")
    pg._set_sequence_number_for_group()
    before = pg._get_sequence_number_for_group()
    dist.all_reduce(torch.ones(3))
    dist.barrier()
    after = pg._get_sequence_number_for_group()
    ck.check(before == 0 and after == 2, f"sequence numbers: {before} then {after}, not 0 and 2")
    if wrapper is not None:
        seen = wrapper_sequence(wrapper, "_get_sequence_number_for_group")
        ck.check(seen in (None, after), f"the ProcessGroup says {seen}, its strata backend {after}")
    seqs = [None] * size
    dist.all_gather_object(seqs, after, group=gloo)
    ck.check(len(set(seqs)) == 1, f"sequence numbers differ between ranks: {seqs}")


def test_any_source(dst, name, group):
    """Every other rank sends `dst` two messages, [r]*5 then [r + 100]*5; `dst` receives them
    all without naming a source, with recv and with irecv, and checks each sender, value and
    per-sender order. Then one large message (past the transports' eager limits) from any
    source, and a receive by source."""
    if size == 1:
        return
    def mine(r, k):
        return torch.full((100003 if k == 2 else 5,), float(r + 100 * k))
    if rank == dst:
        taken = {r: 0 for r in range(size) if r != dst}
        for m in range(2 * (size - 1)):
            out = torch.full((5,), -1.0)
            if m % 2 == 0:
                src = dist.recv(out, group=group)
            else:
                work = dist.irecv(out, group=group)
                work.wait()
                src = work._source_rank()
            if taken.get(src, 2) >= 2:
                ck.fail(f"{name}: recv from any source at {dst} named rank {src}")
                return
            ck.equal(out, mine(src, taken[src]), f"{name}: message {taken[src]} of rank {src}")
            taken[src] += 1
    else:
        for k in range(2):
            dist.send(mine(rank, k), dst, group=group)
    dist.barrier(group=group)
    big = (dst + 1) % size
    if rank == big:
        dist.send(mine(rank, 2), dst, group=group)
    if rank == dst:
        out = torch.full((100003,), -1.0)
        src = dist.recv(out, group=group)
        ck.check(src == big, f"{name}: the large message named rank {src}, not {big}")
        ck.equal(out, mine(big, 2), f"{name}: the large message from any source")
        if big != dst:
            dist.send(torch.full((3,), 7.0), big, group=group)
    if rank == big:
        out = torch.zeros(3)
        dist.recv(out, src=dst, group=group)
        ck.equal(out, torch.full((3,), 7.0), f"{name}: recv by source after any source")


def test_any_source_timeout():
    """Nobody sends: a receive from any source fails within the group's timeout with "Timed out",
    and the group still works."""
    if size == 1 or harness.BACKEND == "gloo":
        return
    import datetime
    group = dist.new_group(backend=harness.BACKEND, timeout=datetime.timedelta(seconds=2))
    if rank == 0:
        started = time.monotonic()
        try:
            dist.recv(torch.zeros(2), group=group)
            ck.fail("recv from any source with no sender returned")
        except RuntimeError as e:
            took = time.monotonic() - started
            ck.check("Timed out" in str(e), f"recv from any source: error without 'Timed out': {e}")
            ck.check(1.5 < took < 10, f"recv from any source timed out after {took:.1f} s, not ~2 s")
    dist.barrier(group=gloo)  # the others wait for rank 0 here, not on the group's 2 s deadline
    t = torch.ones(3)
    dist.all_reduce(t, group=group)
    ck.equal(t, torch.full((3,), float(size)), "the group after a receive from any source timed out")


def test_barrier():
    """Rank 0 arrives 0.5 s late: nobody may leave the barrier before it arrives."""
    for name, group in ((harness.BACKEND, None), ("gloo-ref", gloo)):
        dist.barrier(group=group)
        start = time.monotonic()
        if rank == 0:
            time.sleep(0.5)
        dist.barrier(group=group)
        waited = time.monotonic() - start
        # The first barrier may release ranks a little apart; 0.3 s leaves room for that.
        ck.check(rank == 0 or waited > 0.3,
                 f"{name} barrier: rank {rank} left after {waited:.3f} s, rank 0 slept 0.5 s")


def test_non_contiguous():
    """A transposed view: either the right result in the view (so in its base), or an error
    that says the tensor must be contiguous."""
    dt = torch.float32
    for name, group in ((harness.BACKEND, None), ("gloo-ref", gloo)):
        cases = {
            "all_reduce": (lambda v: dist.all_reduce(v, group=group),
                           reduced(range(size), 24, dt).reshape(4, 6).t()),
            "broadcast": (lambda v: dist.broadcast(v, src=size - 1, group=group),
                          inputs(size - 1, 24, dt).reshape(4, 6).t()),
        }
        for op, (call, expect) in cases.items():
            view = inputs(rank, 24, dt).reshape(4, 6).t()
            try:
                call(view)
            except RuntimeError as e:
                ck.check("contiguous" in str(e).lower(),
                         f"{name} {op} on a transposed view: unclear error: {e}")
                ck.note(f"{name} refuses non-contiguous {op}: {str(e).splitlines()[0][:80]}")
                continue
            ck.equal(view.contiguous(), expect.contiguous(), f"{name} {op} on a transposed view")


def test_subgroup():
    """A group of ranks 1..size-1 (default backend, so strata): collectives use group ranks,
    src is a global rank. Every rank calls new_group; only members call the collectives."""
    if size < 2:
        return
    members = list(range(1, size))
    sub = dist.new_group(ranks=members)
    if rank not in members:
        return
    t = inputs(rank, 1021, torch.float32)
    dist.all_reduce(t, group=sub)
    ck.equal(t, reduced(members, 1021, torch.float32), "all_reduce on ranks 1..size-1")
    t = inputs(rank, 1021, torch.int32, seed=1)
    dist.broadcast(t, src=size - 1, group=sub)
    ck.equal(t, inputs(size - 1, 1021, torch.int32, seed=1), "broadcast on ranks 1..size-1")


started = time.monotonic()
for dt in DTYPES:
    for n in SIZES:
        test_all_reduce(dt, n)
        test_rooted(dt, n)
        test_gathers(dt, n)
        test_send_recv(dt, n)
    for n in SIZES[:3]:
        test_gather_scatter(dt, n)
    test_coalesced(dt)
    test_all_gather_coalesced(dt)
    test_coalescing_manager(dt)
    test_alltoall(dt, 1021)
for dt in FLOATS:
    test_premul_sum(dt)
test_alltoall(torch.float32, 0)
test_sparse_all_reduce()
test_sequence()
for dst in (0, size - 1):
    test_any_source(dst, harness.BACKEND, None)
    test_any_source(dst, "gloo-ref", gloo)
test_any_source_timeout()
test_barrier()
test_non_contiguous()
test_subgroup()
if rank == 0:
    print(f"{size} ranks: {time.monotonic() - started:.1f} s", flush=True)
ck.finish()
