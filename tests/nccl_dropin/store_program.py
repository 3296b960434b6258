"""An NCCL program in Python that passes the unique id through PyTorch's TCPStore, as PyTorch's
ProcessGroupNCCL does: rank 0 calls ncclGetUniqueId and sets it in the store, the others get it,
and every rank calls ncclCommInitRank, then an allreduce and a broadcast on host buffers, each
result checked. NCCL's C API is called through ctypes on the library NCCL_LIB names (strata's
drop-in in the tests). Started like torchrun's workers: RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT (tools/strata-run sets them). Exits 0 when every check passed on this rank.
"""
import ctypes
import datetime
import os
import sys

import torch.distributed as dist

NCCL_FLOAT32, NCCL_INT64, NCCL_SUM = 7, 4, 0


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_char * 128)]


def main():
    lib = ctypes.CDLL(os.environ["NCCL_LIB"])
    lib.ncclGetErrorString.restype = ctypes.c_char_p
    lib.ncclGetLastError.restype = ctypes.c_char_p
    rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])

    def ok(rc, call):
        if rc != 0:
            sys.exit(f"rank {rank}: {call} failed: {lib.ncclGetErrorString(rc).decode()} "
                     f"({lib.ncclGetLastError(None).decode()})")

    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), size,
                          rank == 0, timeout=datetime.timedelta(seconds=60))
    uid = UniqueId()
    if rank == 0:
        ok(lib.ncclGetUniqueId(ctypes.byref(uid)), "ncclGetUniqueId")
        store.set("ncclUniqueId", ctypes.string_at(ctypes.byref(uid), 128))
    else:
        raw = store.get("ncclUniqueId")
        ctypes.memmove(ctypes.byref(uid), raw, 128)
    comm = ctypes.c_void_p()
    ok(lib.ncclCommInitRank(ctypes.byref(comm), size, uid, rank), "ncclCommInitRank")

    failures = 0
    n = 100003
    buf = (ctypes.c_float * n)(*[float((rank + 1) * (i % 7)) for i in range(n)])
    ok(lib.ncclAllReduce(buf, buf, ctypes.c_size_t(n), NCCL_FLOAT32, NCCL_SUM, comm, None),
       "ncclAllReduce")
    total = size * (size + 1) // 2
    wrong = sum(1 for i in range(n) if buf[i] != float(total * (i % 7)))
    if wrong:
        print(f"FAIL rank {rank}: allreduce: {wrong} of {n} wrong")
        failures += 1
    b = (ctypes.c_int64 * 1000)(*([rank * 1000 + 7] * 1000))
    ok(lib.ncclBroadcast(b, b, ctypes.c_size_t(1000), NCCL_INT64, size - 1, comm, None),
       "ncclBroadcast")
    if any(v != (size - 1) * 1000 + 7 for v in b):
        print(f"FAIL rank {rank}: broadcast from rank {size - 1}")
        failures += 1
    ok(lib.ncclCommDestroy(comm), "ncclCommDestroy")
    print(f"store_program rank {rank}: {2 - failures} passed, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
