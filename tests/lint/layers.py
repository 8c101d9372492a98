#!/usr/bin/env python3
"""The layer rule of docs/design.md §5: a source file includes only headers of its own layer or of lower ones."""
import pathlib
import re
import sys

# Bottom up, as docs/design.md §5 draws them: (layer, the paths it holds). A path is a folder ("x/") or a file.
LAYERS = [
    ("public base", ["include/kvconform/array_view.h", "include/kvconform/errors.h", "include/kvconform/c_port.h"]),
    ("trace", ["properties/trace/"]),
    ("numeric", ["oracle/numeric/"]),
    ("models", ["oracle/models/"]),
    ("impls common", ["impls/common/"]),
    ("impls", ["impls/"]),
    ("executor", ["properties/executor/"]),
    ("generate and port", ["properties/generate/", "properties/port/"]),
    ("runners", ["properties/runners/"]),
    ("kinds", ["properties/kinds/"]),
    ("vectors", ["properties/vectors/"]),
    ("cli", ["properties/cli/"]),
    ("plug-in and programs", ["include/kvconform/plugin.h", "fuzz/", "bench/", "examples/", "cmake/"]),
]
# Headers written at configure time (cmake/kinds.cmake) sit where their template does.
GENERATED = {"properties/trace/kind_list.h": "properties/trace/kind_list.h.in",
             "properties/kinds/adapters.h": "properties/kinds/adapters.h.in"}
SOURCES = ("*.h", "*.cpp", "*.c", "*.in")
INCLUDE = re.compile(r'^\s*#\s*include\s+(?:"([^"]+)"|<(kvconform/[^>]+)>)')


def layer_of(path):
    """The index of the layer holding `path` (the longest matching path wins), or None outside every layer."""
    best = None
    for i, (_, paths) in enumerate(LAYERS):
        for p in paths:
            if (path == p or (p.endswith("/") and path.startswith(p))) and (best is None or len(p) > best[1]):
                best = (i, len(p))
    return None if best is None else best[0]


def target_path(root, source, quoted, public):
    """The tree path an include names: <kvconform/x> is include/kvconform/x; a quoted name is relative to the
    source's folder when such a file is there (the C port's own headers), else to the repository root."""
    if public:
        return "include/" + public
    if (root / source).parent.joinpath(quoted).is_file() and not (root / quoted).is_file():
        return str(((root / source).parent / quoted).relative_to(root))
    return GENERATED.get(quoted, quoted)


def violations(root):
    found = []
    for pattern in SOURCES:
        for f in sorted(root.rglob(pattern)):
            rel = str(f.relative_to(root))
            # Tests are built into one program that links every layer: a test may use any layer to set up its case.
            if rel.startswith(("build", ".git")) or "/tests/" in rel or rel.startswith("tests/"):
                continue
            own = layer_of(rel)
            if own is None:
                continue
            for n, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = target_path(root, rel, m.group(1), m.group(2))
                theirs = layer_of(target)
                if theirs is not None and theirs > own:
                    found.append(f"{rel}:{n}: includes {target} ({LAYERS[theirs][0]}), a layer above "
                                 f"its own ({LAYERS[own][0]}); docs/design.md §5 orders the layers")
    return found


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    found = violations(root)
    for v in found:
        print(v)
    print(f"layers: {len(found)} include(s) pointing up")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
