#!/usr/bin/python3
"""Every Python module a tracked test, example, benchmark or tool imports comes from somewhere a
fresh Debian 12 machine has after scripts/install-deps.sh: Python's standard library, this
repository, or a Debian package that the install step names.

    check_python_deps.py REPO              checks; exit 1 naming each import that is not covered
    check_python_deps.py --self-test REPO  also requires the check to fail once a package is
                                           taken out of a copy of the install step

The files: every tracked *.py and every tracked file whose first line runs python, plus the
Python that shell scripts feed to python3 in here-documents (<<'PY' ... PY). An import that the
tests and examples need must come from install-deps.sh's default list; bench/ files, and imports
marked "# strata-deps: bench", may come from its --bench list. Imports inside try/except
ImportError, or marked "# strata-deps: optional", are optional and not checked.

MODULES maps each third-party module to its Debian package: the one place to add a new one.
STRATA_INSTALL_DEPS names another install script to read (the self-test's modified copy).
"""
import ast
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Third-party module -> the Debian package that provides it for /usr/bin/python3.
MODULES = {
    "torch": "python3-torch",
    "sklearn": "python3-sklearn",
    "torchvision": "python3-torchvision",
    "matplotlib": "python3-matplotlib",
    "yaml": "python3-yaml",
    "numpy": "python3-numpy",
}
HEREDOC = re.compile(r"python[^\n]*<<-?\s*['\"]?(\w+)['\"]?")
IMPORT_LINE = re.compile(r"^\s*(?:import\s+([\w.]+(?:\s*,\s*[\w.]+)*)|from\s+(\w[\w.]*)\s+import)")


def source_files(repo):
    """The tracked files; without git (a tarball, a machine without it), every file outside
    build trees and caches."""
    try:
        out = subprocess.run(["git", "-C", repo, "ls-files", "-z"], check=True,
                             capture_output=True).stdout.decode()
        return [f for f in out.split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        pass
    skip = re.compile(r"^(build.*|\..*|__pycache__|Testing|fresh-check-logs)$")
    files = []
    for d, dirs, names in os.walk(repo):
        dirs[:] = [x for x in dirs if not skip.match(x)]
        files += [os.path.relpath(os.path.join(d, n), repo) for n in names]
    return sorted(files)


def tracked_sources(repo):
    """(path, source) for each tracked Python file and each here-document fed to python."""
    for rel in source_files(repo):
        path = os.path.join(repo, rel)
        if not os.path.isfile(path) or os.path.islink(path):
            continue
        with open(path, "rb") as f:
            head = f.read(200)
        if b"\0" in head:
            continue
        first = head.split(b"\n", 1)[0]
        if rel.endswith(".py") or (first.startswith(b"#!") and b"python" in first):
            yield rel, open(path, encoding="utf-8", errors="replace").read()
        elif (first.startswith(b"#!") and b"sh" in first) or rel.endswith(".sh"):
            lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
            i = 0
            while i < len(lines):
                m = HEREDOC.search(lines[i])
                i += 1
                if not m:
                    continue
                body = []
                while i < len(lines) and lines[i].strip() != m.group(1):
                    body.append(lines[i])
                    i += 1
                # Named "FILE:N" with N the line before the body, so N + a body line is the
                # file's line.
                yield "%s:%d" % (rel, i - len(body)), "\n".join(body)


def guarded(tree):
    """Line numbers of imports inside `try: ... except ImportError` (optional imports)."""
    lines = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try):
            continue
        names = [h.type for h in node.handlers]
        if any(isinstance(t, ast.Name) and t.id in ("ImportError", "ModuleNotFoundError")
               for t in names):
            for stmt in node.body:
                for sub in ast.walk(stmt):
                    if isinstance(sub, (ast.Import, ast.ImportFrom)):
                        lines.add(sub.lineno)
    return lines


def imports(name, source):
    """(top-level module, line number, line text) for each absolute import of `source`."""
    text = source.split("\n")
    try:
        tree = ast.parse(source, filename=name)
    except SyntaxError as e:
        if ":" not in name:  # a Python file that does not parse is an error of its own
            raise SystemExit("check_python_deps: %s does not parse: %s" % (name, e))
        # A here-document the shell expands first: its import lines, read as text.
        for lineno, line in enumerate(text, 1):
            m = IMPORT_LINE.match(line)
            if m and "strata-deps: optional" not in line:
                for mod in (m.group(1) or m.group(2)).split(","):
                    yield mod.strip().split(".")[0], lineno, line
        return
    optional = guarded(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            mods = [node.module]
        else:
            continue
        line = text[node.lineno - 1]
        if node.lineno in optional or "strata-deps: optional" in line:
            continue
        for mod in mods:
            yield mod.split(".")[0], node.lineno, line


def local(repo, rel, mod):
    """True when `mod` is this repository's: beside the file, or the package under python/."""
    here = os.path.dirname(os.path.join(repo, rel.split(":")[0]))
    for d in (here, os.path.join(repo, "python")):
        if os.path.exists(os.path.join(d, mod + ".py")) or os.path.isdir(os.path.join(d, mod)):
            return True
    return False


def install_lists(repo):
    """(default packages, --bench packages) as the install step prints them."""
    script = os.environ.get("STRATA_INSTALL_DEPS") or os.path.join(repo, "scripts",
                                                                   "install-deps.sh")
    env = dict(os.environ, STRATA_EXTRA_PACKAGES="")

    def run(*args):
        out = subprocess.run(["bash", script, "--print", *args], env=env, check=True,
                             capture_output=True, text=True).stdout
        return set(out.split())
    return run(), run("--bench"), script


@functools.lru_cache(maxsize=None)
def provider(mod):
    """The Debian package of the module as /usr/bin/python3 finds it here, or None."""
    import importlib.util
    spec = importlib.util.find_spec(mod)
    if spec is None or not spec.origin or not shutil.which("dpkg-query"):
        return None
    out = subprocess.run(["dpkg-query", "-S", os.path.realpath(spec.origin)],
                         capture_output=True, text=True).stdout
    return out.split(":")[0] if out else None


def check(repo):
    default, bench, script = install_lists(repo)
    stdlib = set(sys.stdlib_module_names)
    problems, seen = [], 0
    for rel, source in tracked_sources(repo):
        for mod, lineno, line in imports(rel, source):
            seen += 1
            if mod in stdlib or mod == "__future__" or local(repo, rel, mod):
                continue
            if ":" in rel:
                path, start = rel.rsplit(":", 1)
                where = "%s:%d" % (path, int(start) + lineno)
            else:
                where = "%s:%d" % (rel, lineno)
            pkg = MODULES.get(mod)
            if pkg is None:
                problems.append("%s imports '%s', which is neither the standard library, this "
                                "repository nor in check_python_deps.py's MODULES (add it with "
                                "its Debian package)" % (where, mod))
                continue
            found = provider(mod)
            if found is not None and found != pkg:
                problems.append("%s imports '%s', which MODULES says comes from %s; here it "
                                "comes from %s" % (where, mod, pkg, found))
            for_bench = rel.startswith("bench/") or "strata-deps: bench" in line
            if pkg in default or (for_bench and pkg in bench):
                continue
            wanted = "its --bench list" if for_bench else "its default list"
            problems.append("%s imports '%s' (Debian package %s), which %s does not install "
                            "(add it to %s)" % (where, mod, pkg, os.path.relpath(script, repo)
                                                if script.startswith(repo) else script, wanted))
    return problems, seen


def self_test(repo):
    """A copy of install-deps.sh without python3-sklearn must make the check fail."""
    problems, _ = check(repo)
    if problems:
        print("self-test: the real install step already fails the check")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "install-deps.sh")
        shutil.copy(os.path.join(repo, "scripts", "install-deps.sh"), copy)
        text = open(copy).read()
        cut = re.sub(r"\bpython3-sklearn\b", "", text)
        if cut == text:
            print("self-test: python3-sklearn is not in scripts/install-deps.sh")
            return 1
        open(copy, "w").write(cut)
        os.environ["STRATA_INSTALL_DEPS"] = copy
        problems, _ = check(repo)
    if not any("'sklearn'" in p for p in problems):
        print("self-test: without python3-sklearn the check still passed")
        return 1
    print("self-test: without python3-sklearn the check fails, as it must:")
    print("\n".join("  " + p for p in problems))
    return 0


def main(argv):
    args = [a for a in argv if a != "--self-test"]
    repo = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), "../.."))
    if "--self-test" in argv:
        return self_test(repo)
    problems, seen = check(repo)
    for p in problems:
        print("FAIL: " + p)
    if problems:
        return 1
    print("check_python_deps: %d imports, each from the standard library, this repository or a "
          "package scripts/install-deps.sh installs" % seen)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
