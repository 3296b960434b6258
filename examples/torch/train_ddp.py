#!/usr/bin/python3
"""Data-parallel training with torch DDP on strata or Gloo, timing what communication costs.

Run under an MPI launcher, one process per rank (Debian's interpreter, which has torch):

  PYTHONPATH=build/python mpiexec --oversubscribe -n 4 /usr/bin/python3 examples/torch/train_ddp.py \
      --backend strata --model resnet18 --hook fused --json out.json

Models (examples/torch/ddp_data.py): `digits` (scikit-learn's handwritten digits, a small MLP:
latency-bound) and `resnet18` (torchvision's ResNet-18, 11.2 M parameters, on synthetic 3x32x32
images: bandwidth-bound; it needs python3-torchvision: bash scripts/install-deps.sh --bench).
Every rank builds the same model and data from --seed; an epoch deals
one seeded permutation of the samples round-robin to the ranks, so runs with the same seed and
world size see the same batches whatever the backend.

What the timings mean (all wall-clock, time.perf_counter, on the CPU):
  iteration   zero_grad + forward + loss + backward + optimizer step of one batch. Under DDP the
              backward includes the gradient allreduces: DDP launches them bucket by bucket while
              autograd still runs, and backward() returns only once every bucket's future is
              complete, so whatever communication the backward could not hide is inside it.
  compute     the same iteration without communication: before DDP starts, each rank times
              --calib iterations of a private copy of the model with no DDP (all ranks at once,
              so the cores are as shared as in training). Their median is the compute time.
  waiting     iteration - compute: the time an iteration spends on communication that overlap
              did not hide (BlueConnect's synchronisation overhead, measured in one run).
  --no-comm   trains the bare model on each rank's shard, no DDP (no gradient exchange; the
              process group is used only outside the timed region, for the epoch's loss and
              the timing summary). bench/torch compares whole runs with and without it.
Times are medians over the timed iterations (the first --warmup iterations excluded: DDP
rebuilds its buckets after the first one) of each rank, then the maximum over ranks (the slowest
rank paces a synchronous job). Components (forward, backward, step) are medians each, so they
need not add up to the iteration's median exactly. The loss of an epoch is the mean over all
ranks' batches of the training loss.

Loss curves: ResNet-18 training here is chaotic: a one-ulp change of the gradients (--nudge)
moves an epoch's loss by percents within a few dozen steps, so two backends that sum in different
orders give curves that agree at first and then drift by that much; digits' curves agree to
the printed digits.

--json FILE (rank 0): the arguments, world size, ranks per host, parameter count, one record per
epoch (loss, iteration/forward/backward/step ms) and the summary (iter_ms, compute_ms, wait_ms,
final_loss, and for digits the test accuracy of rank 0's model).
"""
import argparse
import copy
import json
import os
import statistics
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ddp_data  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--backend", choices=["strata", "gloo"], default="strata")
    p.add_argument("--hook", choices=["none", "fused", "fp16", "csc"], default="none",
                   help="DDP communication hook from strata_torch.hooks (strata only)")
    p.add_argument("--density", type=float, default=0.1, help="csc: fraction of chunks sent")
    p.add_argument("--model", choices=["digits", "resnet18"], default="digits")
    p.add_argument("--epochs", type=int, default=None, help="default: digits 20, resnet18 3")
    p.add_argument("--iters", type=int, default=None,
                   help="iterations per epoch (digits: at most one pass; resnet18: default 10)")
    p.add_argument("--batch", type=int, default=None, help="per rank; digits 32, resnet18 8")
    p.add_argument("--lr", type=float, default=None, help="SGD, momentum 0.9; digits 0.05, "
                   "resnet18 0.02")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-comm", action="store_true", help="train locally, no DDP (see above)")
    p.add_argument("--calib", type=int, default=10, help="compute-time iterations before DDP")
    p.add_argument("--warmup", type=int, default=2, help="untimed iterations at the start")
    p.add_argument("--threads", type=int, default=1, help="torch threads per rank")
    p.add_argument("--timeout", type=float, default=300, help="process group timeout, seconds")
    p.add_argument("--json", metavar="FILE", help="rank 0 writes the results here")
    p.add_argument("--nudge", action="store_true",
                   help="scale gradients by 1+2^-23 before each step: a run whose only change "
                   "is rounding, to show how far rounding alone moves the loss curve")
    a = p.parse_args()
    big = a.model == "resnet18"
    a.epochs = a.epochs or (3 if big else 20)
    a.batch = a.batch or (8 if big else 32)
    a.lr = a.lr or (0.02 if big else 0.05)
    if big and a.iters is None:
        a.iters = 10
    if a.hook != "none" and a.backend != "strata":
        p.error("--hook %s uses strata_torch.hooks: it needs --backend strata" % a.hook)
    return a


def fallback_gloo_init(timeout):
    """FALLBACK, Gloo on ONE HOST ONLY: for machines where strata_torch is not built. Takes rank
    and size from Open MPI's environment and meets at 127.0.0.1 (or $MASTER_ADDR if set), on a
    port derived from the job id so that concurrent jobs do not collide. strata_torch.init() is
    the real path: it takes the address of rank 0's host from MPI, so it works across hosts."""
    try:
        rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
        size = int(os.environ["OMPI_COMM_WORLD_SIZE"])
    except KeyError:
        sys.exit("train_ddp.py: no OMPI_COMM_WORLD_RANK/SIZE: run it under Open MPI's mpiexec")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    job = os.environ.get("PMIX_NAMESPACE", os.environ.get("OMPI_MCA_ess_base_jobid", "0"))
    digits = "".join(c for c in job if c.isdigit()) or "0"
    os.environ.setdefault("MASTER_PORT", str(20000 + int(digits[-9:]) % 20000))
    dist.init_process_group("gloo", rank=rank, world_size=size, timeout=timeout)


def init_distributed(backend, timeout):
    try:
        import strata_torch
    except ImportError as e:
        if backend == "strata":
            sys.exit("train_ddp.py: cannot import strata_torch (%s); build it and set "
                     "PYTHONPATH to the build's python folder" % e)
        strata_torch = None
    if strata_torch is not None and hasattr(strata_torch, "init"):
        strata_torch.init(backend=backend, timeout=timeout)
    elif backend == "gloo":
        fallback_gloo_init(timeout)
    else:
        sys.exit("train_ddp.py: this strata_torch has no init()")


def make_hook(args):
    import strata_torch.hooks as hooks

    if args.hook == "fused":
        return hooks.fused_hook
    if args.hook == "fp16":
        return hooks.fp16_slow_links_hook
    return hooks.csc_hook(density=args.density)


def train_step(net, opt, xb, yb, nudge=False):
    """One iteration: (loss, forward s, backward s, step s). DDP's allreduces end inside
    backward(), which waits for every bucket. nudge: scale every gradient by 1 + 2^-23 (one
    float32 ulp, the same on every rank, untimed) before the step."""
    t0 = time.perf_counter()
    opt.zero_grad(set_to_none=True)
    loss = F.cross_entropy(net(xb), yb)
    t1 = time.perf_counter()
    loss.backward()
    t2 = time.perf_counter()
    if nudge:
        with torch.no_grad():
            for p in net.parameters():
                p.grad.mul_(1.0 + 2.0 ** -23)
        t2 = time.perf_counter()
    opt.step()
    t3 = time.perf_counter()
    return loss.item(), t1 - t0, t2 - t1, t3 - t2


def batches(args, n, epoch, rank, world):
    idx = ddp_data.shard(n, epoch, args.seed, rank, world)
    # Every rank must run the same number of iterations (DDP's allreduces pair up), so count
    # with the smallest shard: n // world.
    iters = (n // world) // args.batch
    if args.iters is not None:
        iters = min(iters, args.iters)
    return [idx[i * args.batch:(i + 1) * args.batch] for i in range(iters)]


def calibrate(model, args, x, y, rank, world):
    """Median seconds of one iteration of a private, communication-free copy of the model."""
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    bs = batches(args, len(y), 0, rank, world)
    times = []
    dist.barrier()  # all ranks compute at once, as in training
    for i in range(args.calib + 1):  # +1: the first iteration allocates
        b = bs[i % len(bs)]
        _, f, bw, s = train_step(model, opt, x[b], y[b])
        if i > 0:
            times.append(f + bw + s)
    return statistics.median(times)


def max_over_ranks(values):
    t = torch.tensor(values, dtype=torch.float32)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.tolist()


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    init_distributed(args.backend, timedelta(seconds=args.timeout))
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.model == "digits":
        model, x, y, tx, ty = ddp_data.digits(args.seed)
    else:
        model, x, y, tx, ty = ddp_data.resnet18(args.seed, world * args.batch * args.iters)
    nparams = sum(p.numel() for p in model.parameters())

    compute_s = None
    if not args.no_comm and args.calib > 0:
        compute_s = max_over_ranks([calibrate(copy.deepcopy(model), args, x, y, rank, world)])[0]
    net = model
    if not args.no_comm:
        net = DDP(model)
        if args.hook != "none":
            net.register_comm_hook(None, make_hook(args))
    opt = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=0.9)

    say = print if rank == 0 else (lambda *a, **k: None)
    mode = "no communication" if args.no_comm else "%s, hook %s" % (args.backend, args.hook)
    say("train_ddp: %s, %d ranks, %s: %.2f M parameters, batch %d per rank"
        % (args.model, world, mode, nparams / 1e6, args.batch), flush=True)
    if compute_s is not None:
        say("compute (no communication, %d iterations): %.1f ms" % (args.calib, 1e3 * compute_s))

    dist.barrier()
    epochs, all_times, seen = [], [], 0
    for epoch in range(1, args.epochs + 1):
        loss_sum, times = 0.0, []
        bs = batches(args, len(y), epoch, rank, world)
        for b in bs:
            loss, f, bw, s = train_step(net, opt, x[b], y[b], args.nudge)
            loss_sum += loss
            seen += 1
            if seen > args.warmup:
                times.append((f + bw + s, f, bw, s))
        all_times += times
        # Outside the timed region: the epoch's mean loss over all ranks, and its timings.
        t = torch.tensor([loss_sum, len(bs)], dtype=torch.float32)
        dist.all_reduce(t)
        med = [1e3 * statistics.median(c) for c in zip(*times)] if times else [0.0] * 4
        it, f, bw, s = max_over_ranks(med)
        rec = {"epoch": epoch, "loss": t[0].item() / t[1].item(), "iter_ms": it,
               "forward_ms": f, "backward_ms": bw, "step_ms": s}
        epochs.append(rec)
        split = ""
        if compute_s is not None:
            split = " = compute %.1f + waiting %.1f" % (1e3 * compute_s, it - 1e3 * compute_s)
        say("epoch %d/%d  loss %.4f  iteration %.1f ms%s  (forward %.1f, backward %.1f, step %.1f)"
            % (epoch, args.epochs, rec["loss"], it, split, f, bw, s), flush=True)

    iter_ms = max_over_ranks([1e3 * statistics.median(t[0] for t in all_times)])[0]
    compute_ms = iter_ms if args.no_comm else (1e3 * compute_s if compute_s else None)
    summary = {"iter_ms": iter_ms, "compute_ms": compute_ms,
               "wait_ms": None if compute_ms is None else iter_ms - compute_ms,
               "final_loss": epochs[-1]["loss"]}
    if tx is not None:
        with torch.no_grad():
            summary["test_accuracy"] = (model(tx).argmax(1) == ty).float().mean().item()
    say("summary: " + ", ".join("%s %.4g" % (k, v) for k, v in summary.items() if v is not None))
    if rank == 0 and args.json:
        out = {"script": "examples/torch/train_ddp.py", "args": vars(args), "world_size": world,
               "ranks_per_host": int(os.environ.get("OMPI_COMM_WORLD_LOCAL_SIZE",
                                                    os.environ.get("LOCAL_WORLD_SIZE", world))),
               "launcher": "mpirun" if "OMPI_COMM_WORLD_SIZE" in os.environ else "torchrun-style",
               "params": nparams, "epochs": epochs, **summary}
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)
    # Any order works, with the DDP model alive or not, and so does no destroy at all: a
    # healthy strata group's teardown is silent (docs/torch.md, "Teardown").
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
