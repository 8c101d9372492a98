#!/usr/bin/env python3
"""The size check: no C++ source or header of the repository over 400 lines, no function over 60.

Usage: sizes.py SOURCE_DIR. Exit 0 when every file and function is within its limit, 1 naming each one
that is not (file, function, length), 2 when universal-ctags is missing or fails.

What it counts:
- files: every .c, .cc, .cpp, .h and .hpp file (and the .h.in / .cpp.in templates the build configures)
  under SOURCE_DIR, tests and examples included; build trees (a folder holding CMakeCache.txt), hidden
  folders and the fuzz corpora and regressions (inputs, not code) are left out. A file's length is its
  number of lines.
- functions: what universal-ctags tags as a function definition (free functions, member functions
  defined in or out of their class, templates), from its first line to its last, both included. A
  lambda is not a function of its own here: its lines count only as part of the function around it.
"""

import json
import os
import re
import shutil
import subprocess
import sys

MAX_FILE_LINES = 400
MAX_FUNCTION_LINES = 60
SUFFIXES = (".c", ".cc", ".cpp", ".h", ".hpp", ".h.in", ".cpp.in")
SKIPPED = ("fuzz/corpus", "fuzz/regressions")  # fuzz inputs and crash files, bytes and not code


def sources(root):
    """The repository's C and C++ files, as paths relative to `root`, sorted."""
    found = []
    for folder, subfolders, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        subfolders[:] = [
            s for s in subfolders
            if not s.startswith(".")
            and not os.path.exists(os.path.join(folder, s, "CMakeCache.txt"))
            and os.path.normpath(os.path.join(rel, s)) not in SKIPPED
        ]
        found += [os.path.normpath(os.path.join(rel, f)) for f in files if f.endswith(SUFFIXES)]
    return sorted(found)


def functions(root, paths):
    """(path, name, first line, last line) of every function definition ctags finds, lambdas aside."""
    ctags = shutil.which("ctags")
    if not ctags:
        sys.exit("sizes.py: ctags not found; install universal-ctags (.ci/setup does)")
    command = [ctags, "--fields=+ne", "--output-format=json", "--map-C++=+.in", "-L", "-", "-o", "-"]
    result = subprocess.run(command, cwd=root, input="\n".join(paths), capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit("sizes.py: ctags failed (universal-ctags is needed for --output-format=json):\n" + result.stderr)
    found = []
    for line in result.stdout.splitlines():
        tag = json.loads(line)
        if tag.get("kind") != "function" or "end" not in tag or tag["name"].startswith("__anon"):
            continue  # ctags names a lambda __anon...: it counts within its enclosing function
        scope = re.sub(r"__anon\w+", "(anonymous)", tag.get("scope", ""))
        name = scope + "::" + tag["name"] if scope else tag["name"]
        found.append((tag["path"], name, tag["line"], tag["end"]))
    return found


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: sizes.py SOURCE_DIR")
    root = sys.argv[1]
    paths = sources(root)
    problems = []
    for path in paths:
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            lines = len(f.read().splitlines())
        if lines > MAX_FILE_LINES:
            problems.append(f"{path}: {lines} lines (at most {MAX_FILE_LINES})")
    for path, name, first, last in functions(root, paths):
        length = last - first + 1
        if length > MAX_FUNCTION_LINES:
            problems.append(f"{path}:{first}: function {name} is {length} lines (at most {MAX_FUNCTION_LINES})")
    for p in problems:
        print(p)
    print(f"sizes.py: {len(paths)} files checked, {len(problems)} over the limits")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
