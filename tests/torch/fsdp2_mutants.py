"""test_fsdp2.py with one reduction corrupted, to show that the test can fail (run by hand, not
by ctest; each mutant must make the test exit non-zero):

    mpiexec --oversubscribe -n 2 -x MUTANT=avg PYTHON tests/torch/fsdp2_mutants.py \\
        tests/torch/test_fsdp2.py

MUTANT=avg        reduce_scatter_tensor with AVG on a strata group: rank 0's output + 1e-3
MUTANT=premul     reduce_scatter_tensor with PREMUL_SUM on a strata group: output x (1 + 2^-10)
MUTANT=allgather  all_gather_into_tensor on a strata group: rank 1 negates the last element

The wrappers replace torch.distributed's functions, which FSDP2 calls through the module
(dist.reduce_scatter_tensor in _fsdp_collectives.py), and corrupt the output once the work is
done (at wait() for async calls). DTensor's functional collectives go round them.
"""
import os
import runpy
import sys

import torch.distributed as dist

MUTANT = os.environ["MUTANT"]
real_reduce_scatter, real_all_gather = dist.reduce_scatter_tensor, dist.all_gather_into_tensor


def on_strata(group):
    return dist.get_backend(group) == "strata"


class After:
    """A Work whose wait() runs `after` once the real work is done."""

    def __init__(self, work, after):
        self.work, self.after = work, after

    def wait(self, *args):
        result = self.work.wait(*args)
        self.after()
        return result

    def __getattr__(self, name):
        return getattr(self.work, name)


def finish(work, async_op, after):
    if async_op:
        return After(work, after)
    after()
    return work


def reduce_scatter_tensor(output, input, op=dist.ReduceOp.SUM, group=None, async_op=False):
    work = real_reduce_scatter(output, input, op=op, group=group, async_op=async_op)
    kind = getattr(op, "op", op)

    def after():
        if not on_strata(group):
            return
        if MUTANT == "avg" and kind == dist.ReduceOp.AVG and dist.get_rank() == 0:
            output.add_(1e-3)
        if MUTANT == "premul" and kind == dist.ReduceOp.PREMUL_SUM:
            output.mul_(1 + 2 ** -10)
    return finish(work, async_op, after)


def all_gather_into_tensor(output, input, group=None, async_op=False):
    work = real_all_gather(output, input, group=group, async_op=async_op)

    def after():
        if MUTANT == "allgather" and on_strata(group) and dist.get_rank() == 1:
            output[-1].neg_()
    return finish(work, async_op, after)


dist.reduce_scatter_tensor = reduce_scatter_tensor
dist.all_gather_into_tensor = all_gather_into_tensor
script = sys.argv[1]
sys.argv = [script]
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
runpy.run_path(script, run_name="__main__")
