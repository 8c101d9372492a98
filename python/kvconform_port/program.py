"""Which kvconform program a Python caller runs: an argument, $KVCONFORM, the one installed beside this package, PATH."""
import os
import pathlib
import shutil

HERE = pathlib.Path(__file__).resolve().parent


class ProgramNotFound(RuntimeError):
    pass


def _beside():
    """The program installed with this package (cmake --install: PREFIX/lib/pythonX/*-packages/kvconform_port beside
    PREFIX/bin/kvconform), or this checkout's build (python/kvconform_port beside build/kvconform)."""
    candidates = []
    if len(HERE.parents) > 3:
        candidates.append((HERE.parents[3] / "bin" / "kvconform", "installed beside the package"))
    if (HERE.parents[1] / "CMakeLists.txt").is_file():
        candidates.append((HERE.parents[1] / "build" / "kvconform", "this checkout's build"))
    return candidates


def _runnable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_program(explicit=None):
    """(path, how it was found). The first of: `explicit` (an argument or --kvconform), $KVCONFORM, the program installed
    beside this package (it speaks this package's protocol), then PATH. ProgramNotFound says what was tried and what to
    do; a named program that is not an executable file is an error, never passed over for another."""
    for value, how in ((explicit, "given"), (os.environ.get("KVCONFORM"), "from $KVCONFORM")):
        if value:
            path = shutil.which(value) if os.sep not in value else value
            if not path or not _runnable(path):
                raise ProgramNotFound(f"kvconform program {value!r} ({how}) is not an executable file")
            return os.path.abspath(path), how
    tried = []
    for path, how in _beside():
        if _runnable(path):
            return str(path), how
        tried.append(str(path))
    path = shutil.which("kvconform")
    if path:
        return os.path.abspath(path), "from PATH"
    raise ProgramNotFound(
        "no kvconform program found: tried $KVCONFORM (unset), " + ", ".join(tried) + " and PATH. Build it "
        "(bash .ci/setup in a kvconform checkout builds build/kvconform) or install it (cmake --install), then "
        "name it with --kvconform=PATH (pytest), KVCONFORM=PATH, or put it on PATH")
