"""A correct program's teardown is silent: DDP training on the strata backend, then the end of
the program in one of the orders PyTorch users write (the argument):

  exit           README's snippet as is: no destroy_process_group; the interpreter's exit
                 (strata_torch's atexit) frees the groups
  destroy        destroy_process_group() while the DDP model and its optimizer still exist
                 (they hold the group); then, under a PyTorch 2 whose destroy_process_group
                 shuts the backend down, one more DDP step must raise a clear error
  del-destroy    del model and optimizer, then destroy_process_group()

Each rank checks its parameters against a one-process reference (exact: the model is linear,
the loss linear in its output, integer data and parameters, a power-of-two learning rate, as
in test_ddp.py) and prints "teardown <order>: PASSED". What the test exists for is checked by
ctest on the whole job's output, every rank's stdout and stderr, since the lines it must not
contain come after Python's last statement: no "WARN" (strata's warnings, the flight
recorder's dumps among them) and no Traceback.
"""
import faulthandler
import sys

import harness

ORDERS = ("exit", "destroy", "del-destroy")
order = sys.argv[1] if len(sys.argv) > 1 else ""
if order not in ORDERS:
    raise SystemExit(f"test_teardown.py: expected one of {', '.join(ORDERS)}, got '{order}'")

rank, size = harness.start(watchdog_s=90)

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch import nn  # noqa: E402
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402

LR = 2.0 ** -6
STEPS = 3
ck = harness.Checker(rank)


def fresh():
    """The same integer-valued parameters on every rank."""
    torch.manual_seed(1)
    m = nn.Sequential(nn.Linear(16, 8), nn.Linear(8, 4))
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randint(-2, 3, p.shape))
    return m


def data(r):
    g = torch.Generator().manual_seed(100 + r)
    return (torch.randint(-2, 3, (4, 16), generator=g).float(),
            torch.randint(-2, 3, (4, 4), generator=g).float())


def step(net, opt, x, y, scale):
    opt.zero_grad()
    # Scaled by the world size: DDP's division by it is then exact.
    (net(x) * y).sum().mul(scale).backward()
    opt.step()


def reference():
    """The same steps in one process, on the sum of every rank's gradient."""
    m = fresh()
    opt = torch.optim.SGD(m.parameters(), lr=LR)
    for _ in range(STEPS):
        opt.zero_grad()
        for r in range(size):
            x, y = data(r)
            (m(x) * y).sum().backward()  # accumulates: the sum over ranks
        opt.step()
    return [p.detach().clone() for p in m.parameters()]


model = fresh()
net = DDP(model)
opt = torch.optim.SGD(net.parameters(), lr=LR)
x, y = data(rank)
for _ in range(STEPS):
    step(net, opt, x, y, float(size))
for i, (got, want) in enumerate(zip(model.parameters(), reference())):
    ck.equal(got.detach(), want, f"parameter {i} after {STEPS} DDP steps")

# The teardown has its own watchdog (still armed at exit, so it covers strata_torch's atexit
# too): a hang there prints every thread's stack and fails.
faulthandler.dump_traceback_later(30, exit=True)
if order == "destroy":
    dist.destroy_process_group()
    if hasattr(dist.ProcessGroup, "shutdown"):
        # A PyTorch whose destroy_process_group shuts the group's backends down (2.11 and
        # 2.15 do, 1.13 does not): strata released the group's communicators there, while the
        # DDP model still holds the group. Its next allreduce must raise, saying so, not crash
        # or hang.
        try:
            step(net, opt, x, y, float(size))
        except RuntimeError as e:
            ck.check("shut down" in str(e), f"a DDP step after destroy_process_group: "
                     f"unclear error: {str(e)[:300]}")
        else:
            ck.fail("a DDP step after destroy_process_group: no error")
elif order == "del-destroy":
    del net, opt, model
    dist.destroy_process_group()

print(f"rank {rank}: {ck.checks} checks, {ck.failures} failures (backend {harness.BACKEND})",
      flush=True)
if ck.failures == 0:
    print(f"teardown {order}: PASSED", flush=True)
sys.exit(1 if ck.failures else 0)
