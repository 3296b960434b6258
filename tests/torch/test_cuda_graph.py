"""CUDA graphs on the strata backend: dist.all_reduce captured in torch.cuda.graph and replayed,
as PyTorch allows with NCCL (docs/gpu.md, "CUDA graphs"). Skipped (77) where
torch.cuda.is_available() is false.

Every rank computes on device local_rank % device_count. Where every rank has a GPU of its own
on one host (or there is one rank), every stage of the call is stream-ordered: the captured
all_reduce (sum, and an average, whose division is a kernel of strata's) is replayed 100 times
on fresh inputs, each replay checked. Where ranks share a GPU, strata stages through host memory
and capture is refused: the call must raise (naming the host stage) instead of hanging or
corrupting the graph, and the group must keep working outside the capture.

    mpiexec -n 1 python3 tests/torch/test_cuda_graph.py
"""
import harness

harness.require_torch()
import torch  # noqa: E402

if not torch.cuda.is_available():
    harness.skip("torch.cuda.is_available() is false (no GPU, or a PyTorch without CUDA)")
if harness.BACKEND != "strata":
    harness.skip("test_cuda_graph.py tests the strata backend")

rank, size = harness.start(watchdog_s=90)
import torch.distributed as dist  # noqa: E402

ck = harness.Checker(rank)
local = harness.local_rank()
ndev = torch.cuda.device_count()
dev = torch.device("cuda", max(local, 0) % ndev)
torch.cuda.set_device(dev)
own_gpus = size <= ndev  # one host: every rank on a GPU of its own
N = 1021
REPLAYS = 100


def inputs(r, k):
    """Rank r's input of round k: small integers, exact in float32."""
    i = torch.arange(N, dtype=torch.float32)
    return (i % 7 + r + k % 5).to(dev)


def expected_sum(k):
    return sum(inputs(r, k) for r in range(size))


static = inputs(rank, 0)
averaged = inputs(rank, 0)
# Warm-up on a side stream, as PyTorch's CUDA graph docs ask: the first call of each shape sets
# strata up (sub-communicators, NCCL), which a capture cannot hold.
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    dist.all_reduce(static)
    dist.all_reduce(averaged, op=dist.ReduceOp.AVG)
torch.cuda.current_stream().wait_stream(side)
ck.equal(static.cpu(), expected_sum(0).cpu(), "warm-up allreduce")

graph = torch.cuda.CUDAGraph()
refused = None
try:
    with torch.cuda.graph(graph):
        dist.all_reduce(static)
        averaged.copy_(static)
        dist.all_reduce(averaged, op=dist.ReduceOp.AVG)
except RuntimeError as e:
    refused = str(e)

if own_gpus:
    ck.check(refused is None, f"capture on {size} rank(s) with a GPU each: {refused}")
    if refused is None:
        for k in range(1, REPLAYS + 1):
            static.copy_(inputs(rank, k))
            graph.replay()
            if k <= 2 or k % 10 == 0:
                want = expected_sum(k)
                ck.equal(static.cpu(), want.cpu(), f"replay {k}: allreduce sum")
                ck.equal(averaged.cpu(), (want / size).cpu(), f"replay {k}: allreduce avg",
                         rtol=1e-6)
        torch.cuda.synchronize()
else:
    ck.check(refused is not None and "captures a CUDA graph" in refused and "fabric" in refused,
             f"capture with ranks sharing a GPU must be refused, naming the stage: {refused}")

# The group still works outside any capture.
t = inputs(rank, 3)
dist.all_reduce(t)
ck.equal(t.cpu(), expected_sum(3).cpu(), "allreduce after the capture")
ck.finish()
