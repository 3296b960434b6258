#!/usr/bin/env python3
"""Every example a strata program prints in its --help runs, as a user types it.

  help_examples.py SOURCE_DIR BUILD_DIR TOOL    run TOOL's examples (ctest tools.help_examples.TOOL)
  help_examples.py --list                       each program and how its examples run, for ctest
  help_examples.py SOURCE_DIR BUILD_DIR --inventory
      every program a user meets (build/tools, build/examples, the scripts in tools/) is in
      TOOLS or NO_EXAMPLES below, every subcommand its --help lists is asked for its own help,
      and every line of CANNOT_RUN is still printed by some help

Examples are the lines under a heading "Examples:" / "Example:" (any case, with or without a
parenthesis before the colon): a line indented by exactly two spaces starts a command, a
trailing backslash continues it, a deeper-indented line describes it, and a blank or unindented
line ends the list (tools/lib/tool_cli.h says the same to tool authors). Each command runs with
bash in a fresh directory that holds build/ (the build folder) and the source tree's tools/,
tests/, configs/, bench/ and examples/, with the build's tools/ and examples/ first on PATH, as
docs/tools.md tells users to set it up (an installed prefix has them all in bin/). Commands run
in the order printed, so one may use what an earlier one wrote (strata-tune's plan file,
strata-perf's JSON). A command must exit 0, and each file it names with --json, --png, --save,
--output (or -o for tools/plot and strata-trace merge) must exist afterwards. Exit status: 0
when every example ran, 1 on a failure, 77 (skipped) where the tool needs what this machine
lacks (netlab: network namespaces), never for an example left out silently.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

# Each program: how its examples must run (unit: alone; mpi: they start mpirun, so the entry
# runs serially as tests/mpi's do; netlab: they need root and network namespaces) and its --help
# invocations, its subcommands' too, relative to the scratch directory (a bare name is found on
# PATH). ctest makes one entry per program from this table (help_examples.py --list).
TOOLS = {
    "strata-info": ("unit", [["strata-info"]]),
    "strata-kernels": ("unit", [["strata-kernels"]]),
    "strata-perf": ("mpi", [["strata-perf"]]),
    "strata-plan": ("mpi", [["strata-plan"], ["strata-plan", "show"], ["strata-plan", "simulate"],
                            ["strata-plan", "validate"]]),
    "strata-topo": ("mpi", [["strata-topo"]]),
    "strata-tune": ("mpi", [["strata-tune"]]),
    "strata-train": ("mpi", [["strata-train"]]),
    "strata-run": ("unit", [["tools/strata-run"]]),
    "strata-trace": ("unit", [["tools/strata-trace"], ["tools/strata-trace", "merge"],
                              ["tools/strata-trace", "summary"], ["tools/strata-trace", "hang"]]),
    "netlab": ("netlab", [["tools/netlab"]]),
    "plot": ("mpi", [["tools/plot"]]),
    "strata-uid-demo": ("unit", [["strata-uid-demo"]]),
    "strata-allreduce-demo": ("mpi", [["strata-allreduce-demo"]]),
}

# Programs with no examples to run, and why.
NO_EXAMPLES = {
    "netlab-agent": "Open MPI's remote-shell agent for `tools/netlab run`, never typed by people",
    "strata-nccl-port": "the program of docs/api.md's \"Porting from NCCL\", run by ctest "
                        "(examples.nccl_port.*); takes no arguments and is not installed",
}

# Examples that cannot run everywhere: the command as printed -> (the program it needs, why).
# The example runs where that program is on PATH; elsewhere it is reported as not run.
CANNOT_RUN = {
    "nvidia-smi topo -m > topo.txt; strata-topo --input topo.txt":
        ("nvidia-smi", "needs an NVIDIA driver (nvidia-smi)"),
}

EXAMPLE_TIMEOUT_S = 240  # the slowest takes about 20 s on 2 loaded cores
HEADING = re.compile(r"^examples?( \(.*\))?:$", re.IGNORECASE)


def extract(help_text):
    """The example commands of one --help text, in order."""
    out, lines, i = [], help_text.splitlines(), 0
    while i < len(lines):
        if not HEADING.match(lines[i].strip()) or lines[i].startswith(" "):
            i += 1
            continue
        i += 1
        while i < len(lines) and lines[i].startswith(" ") and lines[i].strip():
            line = lines[i]
            i += 1
            if not line.startswith("  ") or line.startswith("   "):
                continue  # a description of the command above
            command = line.strip()
            while command.endswith("\\") and i < len(lines):
                command = command[:-1].rstrip() + " " + lines[i].strip()
                i += 1
            out.append(command)
    return out


def scratch_tree(src, build):
    work = tempfile.mkdtemp(prefix="help-examples.")
    os.symlink(build, os.path.join(work, "build"))
    for name in ("tools", "tests", "configs", "bench", "examples"):
        os.symlink(os.path.join(src, name), os.path.join(work, name))
    return work


def user_env(build):
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([os.path.join(build, "tools"), os.path.join(build, "examples"),
                                   env.get("PATH", "")])
    return env


def help_of(argv, work, env):
    first = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=env["PATH"])
    if first is None:
        return None, f"{argv[0]}: not found on PATH"
    r = subprocess.run([first] + argv[1:] + ["--help"], cwd=work, env=env, text=True,
                       capture_output=True, timeout=60, check=False)
    if r.returncode != 0:
        return None, f"{' '.join(argv)} --help exited {r.returncode}: {r.stderr.strip()}"
    return r.stdout + r.stderr, None


def files_named(command):
    """Files an example says it writes: --json F, --png F, --save F, --output F, and -o F where
    -o means the output (tools/plot, strata-trace merge; elsewhere -o is a reduction op)."""
    words = shlex.split(command, comments=True)
    names = []
    for i, w in enumerate(words[:-1]):
        if w in ("--json", "--png", "--save", "--output"):
            names.append(words[i + 1])
        elif w == "-o" and ("tools/plot" in words or "merge" in words):
            names.append(words[i + 1])
    return names


def run_examples(tool, src, build):
    env = user_env(build)
    work = scratch_tree(src, build)
    try:
        examples = []
        for argv in TOOLS[tool][1]:
            text, problem = help_of(argv, work, env)
            if problem:
                print(f"FAIL: {problem}")
                return 1
            examples += extract(text)
        if not examples:
            print(f"FAIL: {tool}'s --help prints no example (an 'Examples:' list)")
            return 1
        status, ran, not_run = 0, 0, 0
        for command in examples:
            if command in CANNOT_RUN:
                needs, why = CANNOT_RUN[command]
                if shutil.which(needs, path=env["PATH"]) is None:
                    print(f"NOT RUN ({why}): {command}")
                    not_run += 1
                    continue
            outputs = {f: mtime(os.path.join(work, f)) for f in files_named(command)}
            print(f"$ {command}", flush=True)
            start = time.monotonic()
            try:
                r = subprocess.run(["bash", "-c", command], cwd=work, env=env, text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   timeout=EXAMPLE_TIMEOUT_S, check=False)
                rc, text = r.returncode, r.stdout
            except subprocess.TimeoutExpired as e:
                rc, text = f"timeout after {EXAMPLE_TIMEOUT_S} s", e.stdout or ""
                text = text.decode(errors="replace") if isinstance(text, bytes) else text
            ran += 1
            print(f"  ({time.monotonic() - start:.1f} s)", flush=True)
            missing = [f for f, before in outputs.items()
                       if mtime(os.path.join(work, f)) in (None, before)]
            if rc != 0 or missing:
                why = f"exit status {rc}" if rc != 0 else f"did not write {', '.join(missing)}"
                print(f"FAIL ({why}): {command}\n--- output (last 4000 characters):\n"
                      f"{text[-4000:]}")
                status = 1
        print(f"{tool}: {ran} examples ran, {not_run} not run (listed in CANNOT_RUN), "
              f"{'all passed' if status == 0 else 'FAILED'}")
        return status
    finally:
        shutil.rmtree(work, ignore_errors=True)


def mtime(path):
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def subcommands(text):
    """The subcommands a --help lists: CLI11's SUBCOMMANDS: block, argparse's {a,b,c}."""
    names = []
    block = re.search(r"^SUBCOMMANDS:\n((?:  \S.*\n?)+)", text, re.MULTILINE)
    if block:
        names += [line.split()[0] for line in block.group(1).splitlines()]
    usage = re.search(r"^usage: \S+ \{([a-z,]+)\}", text, re.MULTILINE)
    if usage:
        names += usage.group(1).split(",")
    return names


def inventory(src, build):
    env = user_env(build)
    work = scratch_tree(src, build)
    try:
        problems = []
        programs = set()
        for folder in (os.path.join(build, "tools"), os.path.join(build, "examples")):
            programs |= {n for n in os.listdir(folder)
                         if os.path.isfile(os.path.join(folder, n))
                         and os.access(os.path.join(folder, n), os.X_OK)}
        tools_dir = os.path.join(src, "tools")
        programs |= {n for n in os.listdir(tools_dir)
                     if os.path.isfile(os.path.join(tools_dir, n))
                     and os.access(os.path.join(tools_dir, n), os.X_OK)}
        for name in sorted(programs - set(TOOLS) - set(NO_EXAMPLES)):
            problems.append(f"{name}: a program users meet, in neither TOOLS nor NO_EXAMPLES")
        for name in sorted((set(TOOLS) | set(NO_EXAMPLES)) - programs):
            problems.append(f"{name}: listed here, but no such program in the build or tools/")
        printed = set()
        for tool, (kind, helps) in TOOLS.items():
            if tool not in programs:
                continue
            asked = {tuple(argv[1:]) for argv in helps}
            for argv in helps:
                text, problem = help_of(argv, work, env)
                if problem:
                    problems.append(problem)
                    continue
                printed |= set(extract(text))
                if kind == "unit" and any(re.search(r"\bmpi(run|exec)\b", c)
                                          for c in extract(text)):
                    problems.append(f"{tool}: an example starts mpirun; its kind must be mpi")
                for sub in subcommands(text):
                    if tuple(argv[1:]) + (sub,) not in asked:
                        problems.append(f"{' '.join(argv)} lists subcommand {sub}, whose --help "
                                        "TOOLS does not ask for")
        for command in sorted(set(CANNOT_RUN) - printed):
            problems.append(f"CANNOT_RUN holds a line no help prints any more: {command}")
        for p in problems:
            print(f"FAIL: {p}")
        print(f"inventory: {len(programs)} programs, {len(TOOLS)} with examples, "
              f"{len(NO_EXAMPLES)} without ({', '.join(sorted(NO_EXAMPLES))}), "
              f"{len(CANNOT_RUN)} example(s) that need something not everywhere: "
              f"{'OK' if not problems else 'FAILED'}")
        return 1 if problems else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


def netlab_usable():
    """None when this machine can make network namespaces and veth links, else why not."""
    if os.geteuid() != 0:
        return "needs root (network namespaces)"
    if shutil.which("ip") is None:
        return "no 'ip' command (iproute2)"
    probe = f"hxprobe{os.getpid()}"
    r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        return f"cannot create network namespaces here: {r.stderr.strip()}"
    try:
        r = subprocess.run(["ip", "-n", probe, "link", "add", "pa", "type", "veth", "peer", "name",
                            "pb"], capture_output=True, text=True, check=False)
        if r.returncode != 0:
            return f"cannot create veth links here: {r.stderr.strip()}"
    finally:
        subprocess.run(["ip", "netns", "del", probe], capture_output=True, check=False)
    # The examples use the default lab, "netlab": never reconfigure or remove someone's own.
    names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                           check=False).stdout
    if re.search(r"^netlab-(sw|h\d+)\b", names, re.MULTILINE):
        return "a lab named netlab exists on this machine; its examples would change it"
    return None


def main(argv):
    if argv[1:] == ["--list"]:
        for tool, (kind, _) in TOOLS.items():
            print(tool, kind)
        return 0
    if len(argv) != 4:
        sys.exit(__doc__)
    src, build, what = os.path.abspath(argv[1]), os.path.abspath(argv[2]), argv[3]
    if what == "--inventory":
        return inventory(src, build)
    if what not in TOOLS:
        print(f"unknown tool {what}; known: {', '.join(sorted(TOOLS))}")
        return 2
    if what == "netlab":
        why = netlab_usable()
        if why:
            print(f"SKIPPED (netlab): {why}")
            return 77
        try:
            return run_examples(what, src, build)
        finally:
            # A failed example may have left the lab up: take it down (it was not there before).
            subprocess.run([os.path.join(src, "tools", "netlab"), "down"], capture_output=True,
                           check=False)
    return run_examples(what, src, build)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
