"""PyTorch's distributed test class, set up for one backend (imported by run_suite.py).

The pattern of PyTorch's test/distributed/test_distributed_spawn.py and torch-ucc's
test/torch_tests.py: a third-party backend joins DistTestCases' feature sets before the suite is
imported (its skip decorators read them at import), and the suite's _DistTestBase is mixed into
TestDistBackend, a MultiProcessTestCase that starts WORLD_SIZE ranks per test. Spawned ranks
import this module again (the test class is pickled by reference), forked ones inherit it; each
initialises the backend through file:// and runs the one test.

The environment decides everything, so that the ranks see what the driver saw: BACKEND,
WORLD_SIZE, TEMP_DIR and INIT_METHOD (read by the suite at import) and PYTORCH_SUITE_START,
set by run_suite.py.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

try:
    import expecttest  # noqa: F401
except ImportError:  # not packaged by Debian 12; common_utils needs two names of it
    sys.path.insert(0, os.path.join(HERE, "compat"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.testing._internal.common_distributed import DistTestCases  # noqa: E402

BACKEND = os.environ["BACKEND"]
BUILTIN = ("gloo", "nccl", "mpi", "ucc")

if BACKEND not in BUILTIN:
    # A plugin claims what Gloo claims (common_distributed.py: gpu, cuda, ddp, subgroup), so
    # that every test Gloo runs here runs for it too; what it lacks shows as a failure in the
    # expected list, never as a silent skip. skip_collective is left alone for the same reason.
    # ("gpu" gates many CPU tests as well; "cuda" tests still skip without a GPU.)
    for feature in ("plugin", "gpu", "cuda", "ddp", "subgroup"):
        DistTestCases.backend_feature[feature].add(BACKEND)
    if BACKEND == "strata":
        import strata_torch  # noqa: E402,F401  registers the backend "strata"

from torch.testing._internal.distributed.distributed_test import (  # noqa: E402
    DistributedTest,
    TestDistBackend,
)


class TestDistBackendWithSpawn(TestDistBackend, DistributedTest._DistTestBase):
    """As test_distributed_spawn.py's class: each test spawns WORLD_SIZE ranks."""

    def setUp(self):
        super().setUp()
        if os.environ.get("PYTORCH_SUITE_START", "spawn") == "fork":
            # The same harness with forked ranks (older PyTorch had _fork_processes for it):
            # they skip the 2.5 s import of torch and the suite that each spawned rank pays.
            # The driver's process never creates a group (nor a thread), so the ranks inherit
            # no backend state.
            self._start_processes(torch.multiprocessing.get_context("fork").Process)
        else:
            self._spawn_processes()
        torch.backends.cudnn.flags(enabled=True, allow_tf32=False).__enter__()


def test_names():
    """Every test method of the suite, sorted."""
    return sorted(n for n in dir(TestDistBackendWithSpawn) if n.startswith("test_"))


def skip_reason(name):
    """The reason PyTorch's decorators skip the test for this backend at collection (they set
    __unittest_skip__ at import), or None when the test runs."""
    fn = getattr(TestDistBackendWithSpawn, name)
    if getattr(fn, "__unittest_skip__", False):
        return getattr(fn, "__unittest_skip_why__", "skipped")
    return None


def unrestrict(name):
    """Runs a test that PyTorch skips for this backend at collection (for example one it
    restricts to Gloo): a copy of the method without the skip mark. Only the driver's process
    reads the mark; the spawned ranks call the method directly."""
    fn = getattr(TestDistBackendWithSpawn, name)
    copy = type(fn)(fn.__code__, fn.__globals__, name, fn.__defaults__, fn.__closure__)
    copy.__dict__.update(fn.__dict__)
    copy.__unittest_skip__ = False
    copy.__qualname__ = fn.__qualname__
    setattr(TestDistBackendWithSpawn, name, copy)


def versions():
    return {"torch": torch.__version__, "python": sys.version.split()[0],
            "gloo": dist.is_gloo_available()}
