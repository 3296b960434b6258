#!/usr/bin/env python3
"""PyTorch 2 (pip's wheel, which links the nvidia-nccl wheel's libnccl.so.2) imports with
strata's NCCL drop-in preloaded, and the drop-in says once that it serves NCCL's API.

    torch_import.py <libstrata_nccl.so>

Runs this interpreter again with LD_PRELOAD and NCCL_DEBUG=INFO, then checks that child's
output: torch and torch.distributed import, a CPU op computes, torch.cuda.is_available()
answers, torch.cuda.nccl.version() is an NCCL 2 version, the NCCL symbols resolve to the
drop-in (strataNcclDropIn) and the wheel's libnccl.so.2 is not loaded, and stderr holds exactly one "serves NCCL's API" line.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

CHILD = r"""
import ctypes
import torch
import torch.distributed as dist
x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
print("cpu op:", (x @ x.T).sum().item())
print("cuda available:", torch.cuda.is_available())
print("nccl version:", torch.cuda.nccl.version())
print("nccl available:", dist.is_nccl_available())
print("strataNcclDropIn:", ctypes.CDLL(None).strataNcclDropIn())
version = ctypes.c_int(0)
ctypes.CDLL(None).ncclGetVersion(ctypes.byref(version))
print("ncclGetVersion:", version.value)
print("torch", torch.__version__)
"""


BINDING = re.compile(r"binding file (\S+/libtorch_cuda\.so) \[\d+\] to (\S+) \[\d+\]: "
                     r"normal symbol `(p?nccl\w+)'")


def torch_bindings(dropin):
    """{NCCL function libtorch_cuda.so binds: the file it binds to}, all bound at load ({}
    when torch does not import)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, LD_PRELOAD=dropin, LD_BIND_NOW="1", LD_DEBUG="bindings",
                   LD_DEBUG_OUTPUT=os.path.join(tmp, "ld"))
        run = subprocess.run([sys.executable, "-c", "import torch"], env=env, timeout=240)
        if run.returncode != 0:
            return {}
        found = {}
        for path in glob.glob(os.path.join(tmp, "ld*")):
            with open(path, errors="replace") as f:
                for line in f:
                    if "libtorch_cuda" in line and "nccl" in line:
                        m = BINDING.search(line)
                        if m:
                            found[m.group(3)] = m.group(2)
        return found


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    env = dict(os.environ, LD_PRELOAD=sys.argv[1], NCCL_DEBUG="INFO")
    env.pop("STRATA_DEBUG", None)
    run = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                         text=True, timeout=240)
    sys.stdout.write(run.stdout)
    sys.stdout.write(run.stderr)
    failures = []
    if run.returncode != 0:
        failures.append(f"the child exited with {run.returncode}")
    out = run.stdout
    expect = {
        "cpu op": r"^cpu op: 83\.0$",
        "cuda available": r"^cuda available: (True|False)$",
        "nccl version": r"^nccl version: \(2, \d+, \d+\)$",
        "strataNcclDropIn": r"^strataNcclDropIn: 1$",
        "ncclGetVersion": r"^ncclGetVersion: 2\d{4}$",
    }
    for what, pattern in expect.items():
        if not re.search(pattern, out, re.M):
            failures.append(f"{what}: no line matching {pattern}")
    serves = re.findall(r"NCCL INFO strata .* serves NCCL's API", run.stderr)
    if len(serves) != 1:
        failures.append(f"{len(serves)} lines say that strata serves NCCL's API, not 1")
    bindings = torch_bindings(sys.argv[1])
    elsewhere = {f: lib for f, lib in bindings.items()
                 if os.path.realpath(lib) != os.path.realpath(sys.argv[1])}
    print(f"libtorch_cuda.so binds {len(bindings)} NCCL functions, "
          f"{len(bindings) - len(elsewhere)} of them to the drop-in")
    if not bindings or "ncclCommWindowDeregister" not in bindings:
        failures.append("no binding of libtorch_cuda.so's ncclCommWindowDeregister seen")
    for f, lib in sorted(elsewhere.items()):
        failures.append(f"libtorch_cuda.so binds {f} to {lib}")
    for f in failures:
        print("FAIL:", f)
    print("PASSED" if not failures else "FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
