#!/usr/bin/env python3
"""Checks the user documentation (README.md and docs/*.md) as a reader meets it:

- every relative Markdown link points to a file of the repository, and a `#anchor` to a heading
  of that file (GitHub's anchor rules: lowercase, punctuation dropped, spaces to hyphens);
- no text describes one particular machine or points at something a reader cannot open (a
  path on the developers' machine, "this machine", an internal issue number, the articles'
  copies under shared/);
- every path of this repository named in code (`tests/unit/decompose/test_schedule.cc`) exists
  (a stem such as `src/fabrics/nccl/nccl_lib` names its .h and .cc; a path after "nccl-tests"
  is that project's);
- a table ends at a blank line (a text line right after its last row becomes a cell of it);
- every `mpirun`/`mpiexec` command a reader may paste runs on a small machine too: it carries
  `--oversubscribe` (Open MPI refuses more ranks than cores without it) unless it names its
  hosts (`-H`, `--host`, `--hostfile`).

Usage: check_docs.py SOURCE_DIR [FILE.md ...]   (default: README.md and docs/*.md)
       check_docs.py --self-test                 (the checks find planted problems)
Exit 0 when everything holds, 1 with one line per problem (file:line: problem) otherwise.
"""
import glob
import os
import re
import sys

# Text that belongs to one machine or one development history, not to the reader's. Each entry:
# (regex, why). Kept narrow so that ordinary prose ("this rank", "the seed of a run") passes.
FORBIDDEN = [
    (r"/work/", "a path on the developers' machine"),
    (r"shared/seeds", "a private copy of an article: name the article instead"),
    (r"\bEPYC\b", "one machine's CPU: describe the setting, not the machine"),
    (r"\bthis machine\b", "'this machine' is the reader's, not ours: say which machine"),
    (r"\bdeveloped on\b", "the machine strata is developed on is not the reader's"),
    (r"\(here `?/usr/local/cuda`?\)", "one machine's CUDA path, given as 'here'"),
    (r"\b[Ii]ssue \d+", "an issue number the reader cannot look up: name what it was"),
    (r"\bthe seed'?s?\b", "'the seed' is an internal name: name the article"),
]

# An mpirun/mpiexec command with options; what a command that names its hosts carries.
LAUNCH = re.compile(r"\b(mpirun|mpiexec)\s+-")
HOSTS = re.compile(r"(^|\s)(-H|--host|--hostfile|-hostfile|--machinefile)\b")


# A path into this repository inside a code span (placeholders such as <prefix> or * skipped).
REPO_PATH = re.compile(r"`((?:src|tests|tools|scripts|docs|examples|bench|configs|include|python|"
                       r"nccl_dropin|cmake)/[^`\s]*)")


def path_problems(root, where, line):
    found = []
    for m in REPO_PATH.finditer(line):
        path = re.split(r"[:#]", m.group(1).rstrip(".,;)"))[0]
        placeholder = re.search(r"[<>*{}$]|\.\.\.", path)
        if placeholder or "nccl-tests" in line[max(0, m.start() - 40):m.start()]:
            continue
        full = os.path.join(root, path)
        if not os.path.exists(full) and not glob.glob(glob.escape(full) + ".*"):
            found.append("%s: `%s`: no such file or folder in the repository" % (where, path))
    return found


def launch_problem(where, command):
    """A problem when `command` (from mpirun/mpiexec on, continuation lines joined) would not
    start on a machine with fewer cores than ranks."""
    if "--oversubscribe" in command or HOSTS.search(command):
        return []
    if len(command.split()) <= 3:  # an option named in prose (`mpirun --map-by slot`)
        return []
    return ["%s: '%s': add --oversubscribe (a machine with fewer cores than ranks refuses it)"
            % (where, " ".join(command.split())[:60])]


# [text](target) and [text]: target; images too. Code spans and fenced blocks are skipped.
INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
REF_LINK = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)")


def github_anchor(heading):
    """The anchor GitHub gives a heading: markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)  # keeps letters, digits, _, - and spaces
    return text.replace(" ", "-")


def anchors_of(path, cache={}):
    if path not in cache:
        found, counts, fenced = set(), {}, False
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.lstrip().startswith("```"):
                    fenced = not fenced
                m = None if fenced else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
                if m:
                    a = github_anchor(m.group(1))
                    n = counts.get(a, 0)
                    counts[a] = n + 1
                    found.add(a if n == 0 else "%s-%d" % (a, n))
        cache[path] = found
    return cache[path]


def check_file(root, rel, problems):
    path = os.path.join(root, rel)
    fenced = False
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for no, line in enumerate(lines, 1):
        where = "%s:%d" % (rel, no)
        for m in LAUNCH.finditer(line):
            # To the end of its code span, else of the line and its continuation lines.
            command, more = line[m.start():].split("`")[0], no
            while command.rstrip().endswith("\\") and more < len(lines):
                command, more = command.rstrip()[:-1] + " " + lines[more], more + 1
            problems.extend(launch_problem(where, command))
        for pattern, why in FORBIDDEN:
            if re.search(pattern, line):
                problems.append("%s: '%s': %s" % (where, re.search(pattern, line).group(0), why))
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        problems.extend(path_problems(root, where, line))
        if (line.startswith("|") and no < len(lines) and lines[no].strip()
                and not lines[no].startswith("|")):
            problems.append("%s: the table's last row is followed by text, which Markdown puts in "
                            "the table: leave a blank line after it" % where)
        prose = re.sub(r"`[^`]*`", "", line)  # links inside code spans are not links
        targets = [m.group(1) for m in INLINE_LINK.finditer(prose)]
        m = REF_LINK.match(prose)
        if m:
            targets.append(m.group(1))
        for target in targets:
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) \
                if file_part else path
            if not os.path.realpath(dest).startswith(os.path.realpath(root) + os.sep):
                problems.append("%s: link %s leaves the repository" % (where, target))
            elif not os.path.exists(dest):
                problems.append("%s: link %s: no file %s" % (where, target,
                                                             os.path.relpath(dest, root)))
            elif anchor and dest.endswith(".md") and anchor not in anchors_of(dest):
                problems.append("%s: link %s: %s has no heading with anchor #%s" %
                                (where, target, os.path.relpath(dest, root), anchor))


def self_test():
    """Plants one problem of each kind in a scratch tree and requires each to be reported, and a
    clean page to pass: a checker that cannot fail proves nothing."""
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))
        with open(os.path.join(root, "docs", "good.md"), "w") as f:
            f.write("# Good page\n\n## A `code` heading (with parens)\n\nBack to the "
                    "[README](../README.md#start) and [here](#a-code-heading-with-parens).\n"
                    "```sh\n[not a link](nowhere.md)\n```\n")
        with open(os.path.join(root, "README.md"), "w") as f:
            f.write("# Start\n\nSee [gone](docs/gone.md), [anchor](docs/good.md#no-such), "
                    "[ok](docs/good.md#good-page), [out](../../etc/passwd).\n"
                    "Built on this machine (here `/usr/local/cuda`), as issue 5 says.\n"
                    "Run `mpiexec -n 4 build/x` or `mpirun --oversubscribe -n 4 build/x`;\n"
                    "`mpirun --map-by slot` places ranks in order.\n"
                    "As `tests/unit/test_gone.cc` and `docs/good.md` show (`src/<layer>/x.cc`).\n"
                    "| a | b |\n|---|---|\n| 1 | 2 |\nswallowed text\n\n"
                    "```sh\nmpirun -np 16 -H a:8,b:8 ./train\nmpirun -n 8 \\\n"
                    "  --map-by slot ./train\nmpirun -n 2 \\\n  --oversubscribe ./x\n```\n")
        problems = []
        check_file(root, "docs/good.md", problems)
        if problems:
            print("self-test: a clean page was reported:", problems)
            return 1
        check_file(root, "README.md", problems)
        expected = ["no file docs/gone.md", "no heading with anchor #no-such",
                    "leaves the repository", "'this machine'", "(here `/usr/local/cuda`)",
                    "'issue 5'", "'mpiexec -n 4 build/x': add --oversubscribe",
                    "'mpirun -n 8 ", "`tests/unit/test_gone.cc`: no such file",
                    "leave a blank line after it"]
        missing = [e for e in expected if not any(e in p for p in problems)]
        if missing or len(problems) != len(expected):
            print("self-test: expected %s\n got %s" % (expected, problems))
            return 1
    print("self-test: %d planted problems found, the clean page passed" % len(expected))
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1])
    files = argv[2:] or ["README.md"] + sorted(
        os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))
    problems = []
    for rel in files:
        check_file(root, rel, problems)
    for p in problems:
        print(p)
    print("checked %d files: %s" % (len(files), "%d problems" % len(problems) if problems
                                     else "every link resolves, no machine-specific text"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
