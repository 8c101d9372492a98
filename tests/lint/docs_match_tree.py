#!/usr/bin/env python3
"""Checks that comments and docs name only files, links and sections the tree has.

(a) Every repository path named in a C++/CMake/shell/python comment or in the Markdown docs exists, and so does
every relative Markdown link with its #heading; (b) every section a doc is cited by ("docs/numerics.md §3", a
doc's own bare "§3", a link "[§3](numerics.md#3-the-bound)") is a numbered heading of that doc.
Usage: docs_match_tree.py ROOT; prints each stale mention, exits 1 if any."""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))

# Placeholders a path may use for "any": each component matching one stands for any existing entry.
PLACEHOLDERS = {
    "KIND": "a kind of cmake/kinds.cmake",
    "NAME": "a name the sentence defines (a kind, a mutant, a target)",
    "<kind>": "a kind, as in file names the tools write",
    "<impl>": "an implementation name",
    "<property>": "a property name",
    "<hash>": "a trace's content hash",
    "<target>": "a suite target",
    "*": "a glob",
}
# Files the build writes, which a fresh tree lacks: name -> why they are allowed.
GENERATED = {
    "kind_list.h": "written at configure time from its .in template (the X-macro of the kind list)",
    "adapters.h": "written at configure time from its .in template (includes every kind's adapter.h)",
}
ALLOWED_PREFIXES = {
    "build/": "the build folder: generated files and binaries",
    "include/kvconform/internal/": "where `cmake --install` puts the internal headers (docs/design.md §6)",
}


def tracked_files():
    """The tree's files: git's view (tracked and new, ignored ones left out), or a walk without build folders."""
    git = ["git", "-C", ROOT, "ls-files", "--cached", "--others", "--exclude-standard"]
    try:
        out = subprocess.run(git, capture_output=True, text=True, check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        out = [os.path.relpath(os.path.join(d, f), ROOT) for d, _, files in os.walk(ROOT) for f in files
               if not os.path.relpath(d, ROOT).split(os.sep)[0].startswith(("build", ".git"))]
    return [f for f in out if os.path.exists(os.path.join(ROOT, f))]


FILES = tracked_files()
TOP = sorted({f.split("/")[0] for f in FILES if "/" in f} | {"build"})
PATH_RE = re.compile(r"(?<![\w/.<>{}*-])((?:%s)/[\w.<>{}*,/+-]*[\w>}*/])" % "|".join(re.escape(t) for t in TOP))
ENDING = re.compile(r"\.[A-Za-z0-9]+$")


def comments(path, text):
    """The comment text of a source file, line by line (line number, text); all of a Markdown file."""
    if path.endswith(".md"):
        return list(enumerate(text.splitlines(), 1))
    c_like = re.search(r"\.(h|hpp|cpp|c|cc|in)$", path) is not None
    found, in_block = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if c_like:
            if in_block or "/*" in line:
                start = 0 if in_block else line.index("/*")
                end = line.find("*/", start)
                in_block = end < 0
                found.append((n, line[start:] if in_block else line[start:end]))
            m = re.search(r"(?<![:\"])//(.*)$", line)
        else:
            m = re.search(r"(?:^|\s)#(?!include|!)(.*)$", line)
        if m:
            found.append((n, m.group(1)))
    return found


def expand(token):
    """Globs for a path token: braces expanded, placeholders as wildcards."""
    m = re.search(r"\{([^{}]*)\}", token)
    if m:
        return [g for alt in m.group(1).split(",") for g in expand(token[: m.start()] + alt + token[m.end():])]
    parts = []
    for part in token.split("/"):
        for p in PLACEHOLDERS:
            part = part.replace(p, "*")
        parts.append(re.sub(r"<[^<>/]*>", "*", part))
    return ["/".join(parts)]


def path_exists(token, where):
    if any(token.startswith(p) for p in ALLOWED_PREFIXES) or os.path.basename(token.rstrip("/")) in GENERATED:
        return True
    for base in (ROOT, os.path.join(ROOT, os.path.dirname(where))):
        for g in expand(token):
            if glob.glob(os.path.join(base, g)):
                return True
    return False


def check_paths(path, lines):
    problems = []
    for n, text in lines:
        for m in PATH_RE.finditer(text):
            token = m.group(1).rstrip(".,")
            if token.endswith("/") or ENDING.search(token):
                if not path_exists(token, path):
                    problems.append(f"{path}:{n}: names {token}, which is not in the tree")
    return problems


HEADING = re.compile(r"^#+\s+(\d+(?:\.\d+)*)\.?\s", re.M)
SECTION = r"§(\d+(?:\.\d+)*)"
CITATION = re.compile(r"(docs/[\w/-]+\.md)\]?(?:\([^)]*\))?\s*" + SECTION + r"((?:(?:,\s*|\s+and\s+|\s+or\s+|/)" +
                      SECTION + r")*)")
LINK_TEXT = re.compile(r"\[([^\[\]\n]*§[^\[\]\n]*)\]\(([^()\s#]+\.md)(?:#[^()\s]*)?\)")
_sections = {}


def sections(doc):
    if doc not in _sections:
        full = os.path.join(ROOT, doc)
        _sections[doc] = set(HEADING.findall(open(full, encoding="utf-8").read())) if os.path.exists(full) else None
    return _sections[doc]


def check_citations(path, lines):
    """Citations may break across lines, so they are read from the comment text joined line by line."""
    problems = []
    own = path if path.startswith("docs/") and path.endswith(".md") else None
    text = "\n".join(t for _, t in lines)
    starts = [0]
    for _, t in lines:
        starts.append(starts[-1] + len(t) + 1)

    def line_of(offset):
        return lines[max(i for i, s in enumerate(starts) if s <= offset)][0]

    cited = []
    for m in CITATION.finditer(text):
        cited += [(m.start(), m.group(1), s) for s in [m.group(2)] + re.findall(SECTION, m.group(3))]
    spans = [m.span() for m in CITATION.finditer(text)]
    for m in LINK_TEXT.finditer(text):  # a link's own § cites the linked doc
        spans.append(m.span())
        doc = os.path.relpath(os.path.normpath(os.path.join(ROOT, os.path.dirname(path), m.group(2))), ROOT)
        cited += [(m.start(), doc, sec) for sec in re.findall(SECTION, m.group(1))]
    if own:
        cited += [(m.start(), own, m.group(1)) for m in re.finditer(SECTION, text)
                  if not any(a <= m.start() < b for a, b in spans)]
    for at, doc, sec in cited:
        have = sections(doc)
        if have is None:
            problems.append(f"{path}:{line_of(at)}: cites {doc} §{sec}, and there is no {doc}")
        elif sec not in have:
            problems.append(f"{path}:{line_of(at)}: cites {doc} §{sec}, which is no heading of {doc}")
    return problems


LINK = re.compile(r"\]\(([^()\s#]*)(?:#([^()\s]+))?\)")


def slugs(doc):
    """The anchors GitHub gives a Markdown file's headings."""
    text = open(doc, encoding="utf-8").read()
    titles = re.findall(r"^#+\s+(.*?)\s*$", text, re.M)
    return {re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", t.lower())) for t in titles}


def check_links(path, lines):
    problems = []
    for n, text in lines:
        for m in LINK.finditer(text):
            target, anchor = m.group(1), m.group(2)
            if re.match(r"[a-z]+:", target):
                continue
            full = os.path.normpath(os.path.join(ROOT, os.path.dirname(path), target or os.path.basename(path)))
            if not os.path.exists(full):
                problems.append(f"{path}:{n}: links {target}, which is not in the tree")
            elif anchor and full.endswith(".md") and anchor not in slugs(full):
                problems.append(f"{path}:{n}: links {target}#{anchor}, which is no heading there")
    return problems


def scanned(path):
    if path.endswith(".md"):
        return path.startswith(("docs/", "examples/")) or path in ("README.md", "fuzz/README.md")
    if path.startswith("fuzz/corpus/") or path.startswith("fuzz/regressions/"):
        return False
    name = os.path.basename(path)
    return (re.search(r"\.(h|hpp|cpp|c|cc|in|cmake|sh|py)$", path) is not None or name == "CMakeLists.txt"
            or path in (".ci/setup", ".ci/run"))


def main():
    problems = []
    for path in FILES:
        if not scanned(path):
            continue
        text = open(os.path.join(ROOT, path), encoding="utf-8", errors="replace").read()
        lines = comments(path, text)
        problems += check_paths(path, lines) + check_citations(path, lines)
        if path.endswith(".md"):
            problems += check_links(path, lines)
    problems = list(dict.fromkeys(problems))  # a line checked in more than one window is named once
    for p in problems:
        print(p)
    print(f"{len(problems)} stale mention(s) of files or sections" if problems else "comments and docs match the tree")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
