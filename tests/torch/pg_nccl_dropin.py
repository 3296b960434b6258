"""PyTorch's own NCCL backend (ProcessGroupNCCL) on strata's NCCL drop-in: the GPU proof's
ptnccl phase (scripts/gpu-check.sh). Run by tools/strata-run with LD_PRELOAD=libstrata_nccl.so,
so every NCCL call PyTorch makes lands in strata; ProcessGroupNCCL passes ncclGetUniqueId's id
through its TCPStore, which only a store-safe drop-in survives.

Each worker (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT from the launcher) uses GPU
LOCAL_RANK % device_count (several ranks may share one GPU: strata's device fabrics allow it,
NCCL itself would not), runs all_reduce, broadcast, all_gather_into_tensor and
reduce_scatter_tensor on CUDA tensors with exact expected values, then one DDP step whose
parameters must equal a reference step computed locally on every rank's batch. Prints one
verdict line per rank and exits 0 only when every check passed.
"""
import os
import sys

import torch
import torch.distributed as dist


def main():
    rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    if not torch.cuda.is_available():
        print(f"pg_nccl_dropin rank {rank}: no GPU visible: skipped")
        sys.exit(77)
    dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count())
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", init_method="env://", rank=rank, world_size=size,
                            device_id=dev)
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    n = 1 << 20
    x = torch.full((n,), float(rank + 1), device=dev)
    dist.all_reduce(x)
    check(bool((x == size * (size + 1) / 2).all()), "all_reduce sum")
    b = torch.full((n + 3,), float(rank), device=dev)
    dist.broadcast(b, src=size - 1)
    check(bool((b == size - 1).all()), "broadcast")
    g = torch.empty(size * 1000, device=dev)
    dist.all_gather_into_tensor(g, torch.full((1000,), float(rank), device=dev))
    check(bool((g.view(size, 1000) == torch.arange(size, device=dev).view(size, 1)).all()),
          "all_gather_into_tensor")
    rs = torch.empty(1000, device=dev)
    dist.reduce_scatter_tensor(rs, torch.arange(size * 1000, device=dev, dtype=torch.float32))
    want = torch.arange(rank * 1000, (rank + 1) * 1000, device=dev, dtype=torch.float32) * size
    check(bool((rs == want).all()), "reduce_scatter_tensor")

    # One DDP step against the same step computed alone on the concatenated batch.
    torch.manual_seed(0)
    model = torch.nn.Linear(32, 8).to(dev)
    reference = torch.nn.Linear(32, 8).to(dev)
    reference.load_state_dict(model.state_dict())
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[dev.index])
    batches = [torch.randn(16, 32, generator=torch.Generator().manual_seed(100 + r)).to(dev)
               for r in range(size)]
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    ddp(batches[rank]).square().mean().backward()
    opt.step()
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    (sum(reference(bt).square().mean() for bt in batches) / size).backward()
    ref_opt.step()
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        check(torch.allclose(p, q, rtol=1e-5, atol=1e-6), f"DDP step: parameter {name}")
    torch.cuda.synchronize()
    dist.destroy_process_group()
    verdict = "PASSED" if not failures else "FAILED: " + "; ".join(failures)
    print(f"pg_nccl_dropin rank {rank}: {verdict}")
    sys.exit(0 if not failures else 1)


if __name__ == "__main__":
    main()
