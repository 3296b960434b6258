"""Recovery from a lost rank in DDP training (docs/recovery.md): one rank kills itself
(SIGKILL) in the middle of training, and the survivors go on with PyTorch 2's shrink_group,
which the strata backend serves (strataCommRevoke, strataCommShrink).

Launched without MPI (tools/strata-run --survive-loss, env://; the victim must not be rank 0,
whose process holds the TCPStore). Every rank trains a linear regression on its shard of one
data set with DDP on CPU tensors. At step KILL_AT the victim starts a timer that kills its own
process a few milliseconds later, inside that step, after writing the time of the kill
(time.monotonic, CLOCK_MONOTONIC, shared by the processes of one machine). The survivors:
  - get an exception from the step within MAX_DETECT_S of the kill (printed: "detected after
    X ms"); strata_torch.lost_ranks() names the victim;
  - call strata_torch.shrink_group([victim]) (torch.distributed.shrink_group with
    SHRINK_ABORT, the new group registered as strata's): the new default group has the
    survivors, renumbered in order; an exact all_reduce on it;
  - rebuild DDP on the same module (its constructor broadcasts the new rank 0's parameters, so
    a step that completed on some survivors and not others is undone) and train on, resharded
    over the survivors;
  - the loss over the whole data set keeps falling: after recovery it is no higher than before
    the kill (within 1%), and after the remaining steps below half of it; the parameters are
    identical on every survivor.
Exits 77 under a PyTorch without shrink_group (1.13).
"""
import os
import signal
import threading
import time

import harness

VICTIM = int(os.environ.get("TORCH_RECOVERY_VICTIM", "2"))
KILL_AT = 12
STEPS_AFTER = 40
MAX_DETECT_S = float(os.environ.get("TORCH_RECOVERY_MAX_DETECT_S", "1.5"))

harness.require_torch()
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch import nn  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

c10d = dist.distributed_c10d
if not hasattr(c10d, "shrink_group"):
    harness.skip(f"PyTorch {torch.__version__} has no torch.distributed shrink_group")

import datetime  # noqa: E402

rank, size = harness.start(watchdog_s=60, timeout=datetime.timedelta(seconds=30))
import strata_torch  # noqa: E402

ck = harness.Checker(rank)
if size < 3 or not 0 < VICTIM < size:
    harness.skip(f"needs 3 or more ranks and a victim other than rank 0 (size {size})")
stamp = os.environ["TORCH_TEST_STORE"] + ".killed"
if rank == 0 and os.path.exists(stamp):
    os.unlink(stamp)  # an earlier run's; the victim writes its own long after the init
dist.barrier()

# One data set, the same on every rank; each rank trains on its shard.
g = torch.Generator().manual_seed(7)
X = torch.randn(2048, 16, generator=g)
W = torch.randn(16, 1, generator=g)
Y = X @ W + 0.01 * torch.randn(2048, 1, generator=g)
torch.manual_seed(0)
module = nn.Linear(16, 1)
LR = 0.05


def full_loss():
    with torch.no_grad():
        return float(nn.functional.mse_loss(module(X), Y))


def step(model, opt, r, n, i):
    xs, ys = X[r::n], Y[r::n]
    lo = (i * 32) % (len(xs) - 32)
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(xs[lo:lo + 32]), ys[lo:lo + 32])
    loss.backward()
    opt.step()


def kill_soon():
    def die():
        with open(stamp + ".tmp", "w") as f:
            f.write(f"{time.monotonic():.9f}\n")
        os.rename(stamp + ".tmp", stamp)
        os.kill(os.getpid(), signal.SIGKILL)
    threading.Timer(0.003, die).start()


def kill_time():
    for _ in range(500):
        try:
            with open(stamp) as f:
                return float(f.read())
        except (OSError, ValueError):
            time.sleep(0.01)
    return None


model = DDP(module)
opt = torch.optim.SGD(module.parameters(), lr=LR)
start_loss = full_loss()
before_kill = None
failed_at = None
for i in range(10 * KILL_AT):
    if rank == VICTIM and i == KILL_AT:
        kill_soon()
    try:
        before = full_loss()
        step(model, opt, rank, size, i)
    except RuntimeError as e:
        failed_at = time.monotonic()
        print(f"rank {rank}: step {i} failed: {str(e).splitlines()[0]}", flush=True)
        before_kill = before
        break
    if rank == VICTIM and i >= KILL_AT:
        time.sleep(0.01)  # the kill is on its way
ck.check(failed_at is not None, "no step failed after the victim's kill")
killed = kill_time()
ck.check(killed is not None, f"no kill time in {stamp}")
if failed_at is None or killed is None:
    ck.finish(destroy=False)
detect = failed_at - killed
print(f"rank {rank}: detected after {detect * 1e3:.0f} ms", flush=True)
ck.check(detect < MAX_DETECT_S, f"the error came {detect:.3f} s after the kill "
         f"({MAX_DETECT_S} s allowed)")

lost = strata_torch.lost_ranks()
ck.check(lost == [VICTIM], f"strata_torch.lost_ranks() is {lost}, expected [{VICTIM}]")
t0 = time.monotonic()
group = strata_torch.shrink_group([VICTIM])  # SHRINK_ABORT
print(f"rank {rank}: shrink_group took {(time.monotonic() - t0) * 1e3:.0f} ms", flush=True)
new_rank, new_size = dist.get_rank(), dist.get_world_size()
ck.check(group.size() == size - 1 and new_size == size - 1,
         f"the shrunk group has {group.size()} ranks (world {new_size}), expected {size - 1}")
ck.check(new_rank == rank - (rank > VICTIM), f"rank {rank} is rank {new_rank} after the shrink")
t = torch.full((1000,), float(new_rank + 1))
dist.all_reduce(t)
ck.equal(t, torch.full((1000,), float(new_size * (new_size + 1) // 2)),
         "all_reduce on the shrunk group")

# Training goes on over the survivors: DDP again on the same module (its constructor
# broadcasts rank 0's parameters), the data resharded.
model = DDP(module)
opt = torch.optim.SGD(module.parameters(), lr=LR)
after_recovery = full_loss()
for i in range(STEPS_AFTER):
    step(model, opt, new_rank, new_size, i)
end_loss = full_loss()
print(f"rank {rank}: loss {start_loss:.4f} at the start, {before_kill:.4f} before the kill, "
      f"{after_recovery:.4f} after recovery, {end_loss:.4f} after {STEPS_AFTER} more steps",
      flush=True)
ck.check(after_recovery <= before_kill * 1.01,
         f"the loss after recovery ({after_recovery}) is above the loss before the kill "
         f"({before_kill})")
ck.check(end_loss < 0.5 * after_recovery,
         f"the loss did not fall after recovery: {after_recovery} -> {end_loss}")
flat = torch.cat([p.detach().flatten() for p in module.parameters()])
gathered = [torch.empty_like(flat) for _ in range(new_size)]
dist.all_gather(gathered, flat)
for r, other in enumerate(gathered):
    ck.equal(other, flat, f"parameters of survivor {r}")
if rank == 0:
    os.unlink(stamp)
ck.finish()
