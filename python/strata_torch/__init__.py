"""strata's torch.distributed backend.

``import strata_torch`` registers the backend ``"strata"``; then, under any launcher
(torchrun-style environments, ``mpirun``, ``srun``)::

    import strata_torch
    dist.init_process_group("strata")        # env://, tcp://, file://; or strata_torch.init()
    ddp = DistributedDataParallel(model)     # gradients averaged by strata
    ddp.register_comm_hook(None, strata_torch.hooks.fused_hook)   # optional

Each process group's rank 0 makes a strata unique id and passes it through the group's
c10d store, and every member builds the group's strata communicator from it (no MPI needed);
strata_torch.init() also reads the ranks from an MPI launcher. Operations are asynchronous: each returns a Work
whose future completes on the backend's own thread when strata's request completes.
"""
import atexit
import datetime
import inspect
import os
import socket

import torch
import torch.distributed as dist

from . import _C
from . import hooks  # noqa: F401  (strata_torch.hooks)

__all__ = ["init", "hooks", "describe", "backend_of", "lost_ranks", "shrink_group", "BACKEND"]

BACKEND = "strata"


_ID_KEY = "strata_unique_id"


def _create(opts, pg_options):
    """torch.distributed's creator (extended API). As ProcessGroupNCCL does, the group's rank 0
    makes a unique id and passes it through the group's own store (a prefix of the one
    init_process_group made: env://, tcp://, file:// or the user's), and every member builds
    the group's strata communicator from it. No MPI is needed, whatever started the ranks."""
    store = opts.store
    if opts.group_rank == 0:
        store.set(_ID_KEY, _C.unique_id())
    uid = store.get(_ID_KEY)  # waits (the store's timeout) until rank 0 has set it
    return _C.ProcessGroupStrata(opts.group_rank, opts.group_size, uid, opts.timeout)


def _register():
    if BACKEND.upper() in getattr(dist.Backend, "_plugins", {}):
        return
    kwargs = {"extended_api": True}
    # PyTorch 2.x: register_backend(name, func, extended_api=False, devices=None) and one
    # backend object per device type; a backend registered for several devices under one name
    # is created once and registered for all of them (distributed_c10d's
    # _new_process_group_helper). Without devices= 2.x warns and assumes cpu and cuda.
    if "devices" in inspect.signature(dist.Backend.register_backend).parameters:
        kwargs["devices"] = ["cpu", "cuda"]
    try:
        dist.Backend.register_backend(BACKEND, _create, **kwargs)
    except TypeError:  # a PyTorch whose register_backend has no extended API
        raise RuntimeError("strata_torch needs torch.distributed's extended backend API "
                           "(PyTorch 1.13 or later)")


def backend_of(group=None):
    """The strata backend object of a process group (``None``: the default group), or None
    when the group's backend is not strata. PyTorch 1.13's groups are the backend itself;
    from 2.0 a ProcessGroup wraps one backend per device type (``_get_backend``)."""
    pg = group if group is not None else dist.distributed_c10d._get_default_group()
    if isinstance(pg, _C.ProcessGroupStrata):
        return pg
    get = getattr(pg, "_get_backend", None)
    if get is None:
        return None
    try:
        backend = get(torch.device("cpu"))
    except RuntimeError:  # no backend for the CPU in this group
        return None
    return backend if isinstance(backend, _C.ProcessGroupStrata) else None


def _free_port():
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _ipv4_addresses():
    """This host's IPv4 addresses, loopback last (Linux: SIOCGIFADDR per interface)."""
    import fcntl
    import struct
    found = []
    for _, name in socket.if_nameindex():
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                req = struct.pack("256s", name.encode()[:15])
                addr = socket.inet_ntoa(fcntl.ioctl(s.fileno(), 0x8915, req)[20:24])
            except OSError:  # no IPv4 address on this interface
                continue
        found.append(addr)
    return sorted(found, key=lambda a: a.startswith("127."))


def _master_addr(announced):
    """Rank 0's address as this rank can reach it: its host name when that resolves here,
    else its first non-loopback address (hosts whose names are not in DNS)."""
    name, addrs = announced.split("|", 1)
    try:
        socket.getaddrinfo(name, None)
        return name
    except OSError:
        return addrs.split(",")[0] if addrs else name


def _under_mpi_launcher():
    """Whether an MPI launcher started this process (Open MPI, MPICH/Hydra, PMIx/Slurm --mpi)."""
    return any(v in os.environ for v in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"))


def init(backend=BACKEND, timeout=None, **kwargs):
    """Initialises torch.distributed from the launcher.

    Under mpirun or srun (as Horovod does): fills RANK, WORLD_SIZE, LOCAL_RANK,
    LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT (rank 0's host name, or its address where the
    name does not resolve, and a free port) from the launcher where they are not set, and
    refuses a RANK or WORLD_SIZE that disagrees with it. Without an MPI launcher it takes
    RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT from the environment (torchrun-style) and
    never touches MPI. Then calls
    ``init_process_group(backend, rank=..., world_size=..., timeout=...)``. ``backend`` may
    be ``"gloo"`` as well, for side-by-side comparisons under the same launcher; a Gloo group
    beside a strata one is ``dist.new_group(backend="gloo")``.
    """
    if timeout is None:
        timeout = dist.default_pg_timeout
    if not isinstance(timeout, datetime.timedelta):
        timeout = datetime.timedelta(seconds=float(timeout))
    if not _under_mpi_launcher():
        # torchrun-style: the launcher set RANK and WORLD_SIZE (and MASTER_ADDR/PORT); never
        # ask MPI, whose singleton world (rank 0 of 1) would make every worker train alone.
        missing = [v for v in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
                   if v not in os.environ]
        if missing:
            raise RuntimeError(
                "strata_torch.init: no MPI launcher started this process (no "
                "OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK) and " + ", ".join(missing) +
                " not set: start it with mpirun/srun, or with a launcher that sets RANK, "
                "WORLD_SIZE, MASTER_ADDR and MASTER_PORT (torchrun, tools/strata-run)")
        dist.init_process_group(backend, rank=int(os.environ["RANK"]),
                                world_size=int(os.environ["WORLD_SIZE"]), timeout=timeout,
                                **kwargs)
        return
    rank, size = _C.world_rank(), _C.world_size()
    for var, mpi in (("RANK", rank), ("WORLD_SIZE", size)):
        if var in os.environ and os.environ[var] != str(mpi):
            raise RuntimeError(
                f"strata_torch.init: {var}={os.environ[var]} in the environment, but the MPI "
                f"launcher started this process as rank {rank} of {size}: launch with one of "
                "them (mpirun/srun alone, or torchrun-style variables without mpirun)")
    os.environ.setdefault("RANK", str(rank))
    os.environ.setdefault("WORLD_SIZE", str(size))
    for var, names in (("LOCAL_RANK", ("OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID",
                                       "MPI_LOCALRANKID")),
                       ("LOCAL_WORLD_SIZE", ("OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"))):
        for name in names:
            if name in os.environ:
                os.environ.setdefault(var, os.environ[name])
                break
    if "MASTER_ADDR" not in os.environ or "MASTER_PORT" not in os.environ:
        # Rank 0 names its host, its addresses and a port it found free; every rank learns
        # them over MPI and picks the name if it resolves, else an address.
        mine = ""
        if rank == 0:
            mine = f"{_free_port()}|{socket.gethostname()}|{','.join(_ipv4_addresses())}"
        port, announced = _C.broadcast_string(mine, 0).split("|", 1)
        os.environ.setdefault("MASTER_ADDR", _master_addr(announced))
        os.environ.setdefault("MASTER_PORT", port)
    dist.init_process_group(backend, rank=rank, world_size=size, timeout=timeout, **kwargs)


def describe(group=None):
    """strata's description of a group's hierarchy (levels, groups, fabrics)."""
    backend = backend_of(group)
    if backend is None:
        raise TypeError("strata_torch.describe: the group's backend is not strata")
    return backend.describe()


def lost_ranks(group=None):
    """The ranks of a group (``None``: the default group), in the group's numbering, that
    strata knows lost (their process is gone), ascending; empty while it knows of none.

    After an operation failed because a rank died (its error names the rank; every survivor
    gets it within about a second), these are the ranks to exclude (shrink_group below). Ask
    before shrinking: a shrink revokes the group's communicators, which then report no error.
    Local (no communication).
    """
    backend = backend_of(group)
    if backend is None:
        raise TypeError("strata_torch.lost_ranks: the group's backend is not strata")
    return backend.lost_ranks()


def shrink_group(ranks_to_exclude=None, group=None, shrink_flags=None, pg_options=None):
    """Recovery from a lost rank (docs/recovery.md): PyTorch 2's
    ``torch.distributed.shrink_group`` on a strata group, and the new group registered as a
    strata group. Collective over the remaining ranks (the excluded ones must not call it).

    ``ranks_to_exclude``: ``None`` (the default) takes ``lost_ranks(group)``.
    ``shrink_flags``: ``None`` (the default) is ``SHRINK_ABORT``, which ends the group's
    operations in flight first (what a survivor wants after an error); ``SHRINK_DEFAULT`` waits
    for them (excluding ranks that are alive). Returns the new group; when ``group`` is the
    default group (``None``), the new group becomes the default group, renumbered
    (``dist.get_rank()`` changes), and every other group is destroyed, as torch's
    shrink_group does::

        try:
            train_step()
        except RuntimeError:
            strata_torch.shrink_group()
            model = DistributedDataParallel(model.module)   # rank 0's parameters again

    Why not torch's own shrink_group alone: it registers the new backend as Gloo's
    (``BackendType.GLOO`` on the CPU), and DDP's logger then treats strata's backend as
    ProcessGroupGloo (PyTorch 2.11 crashes in ``c10d::Logger::set_env_variables``). This
    registers it again as the custom backend it is, as ``init_process_group`` did.
    """
    c10d = dist.distributed_c10d
    if not hasattr(c10d, "shrink_group"):
        raise RuntimeError(f"strata_torch.shrink_group needs PyTorch 2's "
                           f"torch.distributed.shrink_group (this is {torch.__version__})")
    if ranks_to_exclude is None:
        ranks_to_exclude = lost_ranks(group)
        if not ranks_to_exclude:
            raise RuntimeError("strata_torch.shrink_group: strata knows of no lost rank in the "
                               "group; name the ranks to exclude")
    if shrink_flags is None:
        shrink_flags = c10d.SHRINK_ABORT
    new = c10d.shrink_group(list(ranks_to_exclude), group=group, shrink_flags=shrink_flags,
                            pg_options=pg_options)
    backend = new._get_backend(torch.device("cpu"))
    if isinstance(backend, _C.ProcessGroupStrata):
        custom = dist.ProcessGroup.BackendType.CUSTOM
        for device in ("cpu", "cuda"):
            new._register_backend(torch.device(device), custom, backend)
        new._set_default_backend(custom)
    return new


_register()
# torch.distributed does not destroy its groups at exit: free them (locally: a peer may be
# gone) and finalise MPI if this module initialised it.
atexit.register(_C.shutdown)
