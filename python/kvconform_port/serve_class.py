"""Serves one adapter class named by its module file and qualified name: the port process the pytest plugin starts.

Usage: python3 -m kvconform_port.serve_class MODULE_FILE MODULE_NAME QUALNAME POLICIES_JSON [serve's options]
(POLICIES_JSON: the policies to declare in place of the class's own, or null)
"""
import importlib
import importlib.util
import json
import os
import sys

from .protocol import serve


def load_module(path, name):
    """The module by its name when that import gives the same file (pytest's default import mode), else by its file."""
    try:
        module = importlib.import_module(name)
        if os.path.realpath(getattr(module, "__file__", "") or "") == os.path.realpath(path):
            return module
    except ImportError:
        pass
    spec = importlib.util.spec_from_file_location(f"kvconform_port_subject_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def adapter_class(path, name, qualname, policies=None):
    """The adapter class, with `policies` (a dict) in place of its own when given."""
    cls = load_module(path, name)
    for part in qualname.split("."):
        cls = getattr(cls, part)
    if policies is not None:
        cls = type(cls.__name__, (cls,), {"policies": dict(policies)})
    return cls


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    path, name, qualname, policies = argv[:4]
    cls = adapter_class(path, name, qualname, json.loads(policies))
    serve(cls.__name__, [cls], argv=argv[4:])


if __name__ == "__main__":
    main(sys.argv[1:])
