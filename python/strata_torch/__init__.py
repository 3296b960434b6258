"""strata's torch.distributed backend.

``import strata_torch`` registers the backend ``"strata"``; under ``mpirun`` or ``srun``::

    import strata_torch
    strata_torch.init()                      # or dist.init_process_group("strata", ...)
    ddp = DistributedDataParallel(model)     # gradients averaged by strata
    ddp.register_comm_hook(None, strata_torch.hooks.fused_hook)   # optional

The backend takes the ranks from the MPI launcher (it initialises MPI with
MPI_THREAD_MULTIPLE if the program has not) and builds each process group's strata
communicator over the group's members. Operations are asynchronous: each returns a Work
whose future completes on the backend's own thread when strata's request completes.
"""
import atexit
import datetime
import os
import socket

import torch.distributed as dist

from . import _C
from . import hooks  # noqa: F401  (strata_torch.hooks)

__all__ = ["init", "hooks", "describe", "BACKEND"]

BACKEND = "strata"


def _create(opts, pg_options):
    """torch.distributed's creator (extended API): the members' world ranks come with opts."""
    return _C.ProcessGroupStrata(opts.group_rank, opts.group_size,
                                 list(opts.global_ranks_in_group), opts.timeout)


def _register():
    if BACKEND.upper() in getattr(dist.Backend, "_plugins", {}):
        return
    try:
        dist.Backend.register_backend(BACKEND, _create, extended_api=True)
    except TypeError:  # a PyTorch whose register_backend has no extended API
        raise RuntimeError("strata_torch needs torch.distributed's extended backend API "
                           "(PyTorch 1.13 or later)")


def _free_port():
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def init(backend=BACKEND, timeout=None, **kwargs):
    """Initialises torch.distributed from the MPI launcher (as Horovod does).

    Fills RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT (rank 0's host and a free port,
    unless already set) from the launcher and calls
    ``init_process_group(backend, rank=..., world_size=..., timeout=...)``. ``backend`` may
    be ``"gloo"`` as well, for side-by-side comparisons under the same launcher; a Gloo group
    beside a strata one is ``dist.new_group(backend="gloo")``.
    """
    rank, size = _C.world_rank(), _C.world_size()
    os.environ["RANK"], os.environ["WORLD_SIZE"] = str(rank), str(size)
    if "MASTER_ADDR" not in os.environ or "MASTER_PORT" not in os.environ:
        # Rank 0 names its host and a port it found free; every rank learns them over MPI.
        mine = f"{socket.gethostname()}:{_free_port()}" if rank == 0 else ""
        addr, port = _C.broadcast_string(mine, 0).rsplit(":", 1)
        os.environ.setdefault("MASTER_ADDR", addr)
        os.environ.setdefault("MASTER_PORT", port)
    if timeout is None:
        timeout = dist.default_pg_timeout
    if not isinstance(timeout, datetime.timedelta):
        timeout = datetime.timedelta(seconds=float(timeout))
    dist.init_process_group(backend, rank=rank, world_size=size, timeout=timeout, **kwargs)


def describe(group=None):
    """strata's description of a group's hierarchy (levels, groups, fabrics)."""
    pg = group if group is not None else dist.distributed_c10d._get_default_group()
    if not isinstance(pg, _C.ProcessGroupStrata):
        raise TypeError("strata_torch.describe: the group's backend is not strata")
    return pg.describe()


_register()
# torch.distributed does not destroy its groups at exit: free them (locally: a peer may be
# gone) and finalise MPI if this module initialised it.
atexit.register(_C.shutdown)
