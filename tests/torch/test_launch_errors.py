"""strata_torch.init() refuses a launch it cannot trust instead of training ranks alone:
  no-launcher  no MPI launcher and no RANK/WORLD_SIZE/MASTER_*: a RuntimeError that says how
               to launch (never MPI's singleton world, rank 0 of 1)
  disagree     under mpirun with RANK set to a value the launcher contradicts: a RuntimeError
               naming both
Exits 0 when the expected error came, with the expected words; 1 otherwise.
"""
import os
import sys

import harness


def main():
    mode = sys.argv[1]
    harness.require_torch()
    import strata_torch
    if mode == "no-launcher":
        for v in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "OMPI_COMM_WORLD_SIZE",
                  "PMI_SIZE", "PMIX_RANK"):
            os.environ.pop(v, None)
        want = ["no MPI launcher", "RANK", "torchrun"]
    elif mode == "disagree":
        os.environ["RANK"] = "5"
        want = ["RANK=5 in the environment", "the MPI launcher started this process as rank"]
    else:
        raise SystemExit(f"unknown mode {mode}")
    try:
        strata_torch.init(timeout=20)
    except RuntimeError as e:
        missing = [w for w in want if w not in str(e)]
        if missing:
            print(f"FAIL: the error lacks {missing}: {e}")
            sys.exit(1)
        print(f"PASSED: {e}")
        sys.exit(0)
    print("FAIL: strata_torch.init() accepted the launch")
    sys.exit(1)


if __name__ == "__main__":
    main()
