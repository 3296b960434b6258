"""What every part of strata-trace shares: its failures and warnings on stderr, ranks in words,
and the check that a directory argument is one."""

import os
import sys


def die(msg):
    """Every failure ends here: one line on stderr, exit 1 (2 is argparse's usage error)."""
    print(f"strata-trace: error: {msg}", file=sys.stderr)
    sys.exit(1)


def warn(msg):
    print(f"strata-trace: warning: {msg}", file=sys.stderr)


def ranks_text(ranks):
    """[0, 1, 3] -> "ranks 0-1,3": ranks grouped as people read them, not one by one."""
    ranks = sorted(ranks)
    parts, i = [], 0
    while i < len(ranks):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] == ranks[j] + 1:
            j += 1
        parts.append(str(ranks[i]) if i == j else f"{ranks[i]}-{ranks[j]}")
        i = j + 1
    return ("rank " if len(ranks) == 1 else "ranks ") + ",".join(parts)


def need_dir(path):
    if not os.path.exists(path):
        die(f"{path}: no such directory")
    if not os.path.isdir(path):
        die(f"{path}: not a directory")
