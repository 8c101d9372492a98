"""The pytest plugin: options, the program's header line, one test per property, and one gate run per test function.

Loaded by the package's pytest11 entry point once installed, or with `-p kvconform_port.pytest_plugin`.
"""
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile

import pytest

from .program import ProgramNotFound, find_program

STATE = pytest.StashKey()
REQUIRED_EVENTS = "required_events"  # the pseudo-property: the kind's required coverage events (README, coverage)
TAIL = 4000  # characters of the program's output shown when a run ends without a report


def pytest_addoption(parser):
    group = parser.getgroup("kvconform", "kvconform conformance tests")
    group.addoption("--kvconform", metavar="PATH",
                    help="the kvconform program (default: $KVCONFORM, the one installed beside the package, PATH)")
    group.addoption("--kvconform-seed", type=int, metavar="N", help="the seed of every conformance test")
    group.addoption("--kvconform-profile", choices=("quick", "deep"), help="the profile of every conformance test")
    group.addoption("--kvconform-deadline", type=int, default=1800, metavar="S",
                    help="seconds a conformance test function's gate run may take (default 1800)")


def pytest_configure(config):
    config.addinivalue_line("markers", "kvconform: a conformance test made by kvconform_port.conformance()")
    config.stash[STATE] = _State(config)


def pytest_report_header(config):
    state = config.stash[STATE]
    try:
        path, how = state.program(None)
        return f"kvconform: {path} ({how})"
    except ProgramNotFound as e:
        return f"kvconform: none found (only conformance tests need it): {e}"


def pytest_generate_tests(metafunc):
    spec = getattr(metafunc.function, "kvconform", None)
    if spec is None or "kvconform_property" not in metafunc.fixturenames:
        return
    names = metafunc.config.stash[STATE].properties(spec)
    metafunc.parametrize("kvconform_property", names + [REQUIRED_EVENTS], ids=names + [REQUIRED_EVENTS])


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    state = session.config.stash[STATE]
    for item in session.items:
        if getattr(getattr(item, "function", None), "kvconform", None) is not None:
            state.selected.setdefault(_group(item), set()).add(item.callspec.params["kvconform_property"])


def _group(item):
    return f"{item.parent.nodeid}::{item.originalname}"


class _State:
    """The session's runs: which properties each conformance test function selected, and each function's report."""

    def __init__(self, config):
        self.config = config
        self.selected = {}  # group -> property names collected and not deselected
        self.reports = {}  # group -> (report dict or None, the run's output)
        self.lists = {}  # program -> `kvconform list --json`
        self.default_path = None

    def program(self, spec):
        return find_program((spec and spec.program) or self.config.getoption("kvconform"))

    def properties(self, spec):
        try:
            path, _ = self.program(spec)
        except ProgramNotFound as e:
            raise pytest.UsageError(str(e)) from None
        if path not in self.lists:
            out = subprocess.run([path, "list", "--json"], capture_output=True, text=True, timeout=60)
            if out.returncode != 0:
                raise pytest.UsageError(f"{path} list --json failed ({out.returncode}): {out.stderr.strip()}"
                                        " (a kvconform older than this package?)")
            self.lists[path] = {k["name"]: [p["name"] for p in k["properties"]] for k in json.loads(out.stdout)["kinds"]}
        if spec.kind not in self.lists[path]:
            raise pytest.UsageError(f"{path} has no kind {spec.kind!r}; it has {sorted(self.lists[path])}")
        return self.lists[path][spec.kind]

    def check(self, item, spec, name):
        group = _group(item)
        if group not in self.reports:
            self.reports[group] = self._run(group, spec)
        report, output = self.reports[group]
        if report is None:
            pytest.fail(output, pytrace=False)
        row = report["implementations"][0] if report["implementations"] else {"properties": [], "coverage": {}}
        if name == REQUIRED_EVENTS:
            return _required_events(row["coverage"])
        cell = next((c for c in row["properties"] if c["name"] == name), None)
        if cell is None:
            pytest.fail(f"{name}: not run ({report.get('stopped', 'the run ended before it')})\n{output}", pytrace=False)
        if cell["status"] == "NOT SUPPORTED":
            pytest.skip(f"NOT SUPPORTED: {cell.get('message', '')}")
        if cell["status"] != "PASS":
            pytest.fail(_failure(cell, self._env_prefix()), pytrace=False)

    def _store(self, group):
        cache = getattr(self.config, "cache", None)
        if cache is None:  # -p no:cacheprovider: nowhere to keep failures
            return ""
        return str(cache.mkdir("kvconform") / re.sub(r"[^A-Za-z0-9_.-]+", "_", group))

    def _extra_path(self):
        """The import paths pytest added (the test's own folders): the port process needs them, and a replay too."""
        if self.default_path is None:
            out = subprocess.run([sys.executable, "-c", "import sys, json; print(json.dumps(sys.path))"],
                                 capture_output=True, text=True, timeout=60)
            self.default_path = json.loads(out.stdout) if out.returncode == 0 else []
        return [p for p in sys.path if p and p not in self.default_path and os.path.isdir(p)]

    def _env_prefix(self):
        extra = self._extra_path()
        return f"PYTHONPATH={shlex.quote(os.pathsep.join(extra))} " if extra else ""

    def _run(self, group, spec):
        path, how = self.program(spec)
        everything = self.properties(spec)
        wanted = [p for p in everything if p in self.selected.get(group, ())]
        # One run for the whole row (the coverage guard judges only whole rows); else one run per property selected.
        globs = ["*"] if set(wanted) == set(everything) or not wanted else wanted
        opt = self.config.getoption
        profile, seed = opt("kvconform_profile") or spec.profile, opt("kvconform_seed")
        seed = spec.seed if seed is None else seed
        deadline = opt("kvconform_deadline")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(self._extra_path() + sys.path))
        merged, outputs = None, []
        with tempfile.TemporaryDirectory(prefix="kvconform-pytest-") as tmp:
            for glob in globs:
                report = os.path.join(tmp, "report.json")
                cmd = [path, "port", "--kind", spec.kind, "--profile", profile, "--seed", str(seed),
                       "--property", glob, "--json", report, "--store", self._store(group),
                       "--run-deadline-s", str(deadline)]
                cmd += ["--cases", str(spec.cases)] if spec.cases else []
                cmd += ["--search", str(spec.search)] if spec.search is not None else []
                cmd += ["--", *spec.port_command(sys.executable)]
                code, output = _call(cmd, env, deadline + 60)
                outputs.append(output)
                if code not in (0, 1) or not os.path.exists(report):
                    return None, (f"kvconform ({path}, {how}) exited {code} without a report:\n  {' '.join(cmd)}\n"
                                  + output[-TAIL:])
                with open(report, encoding="utf-8") as f:
                    r = json.load(f)
                os.unlink(report)
                if merged is None:
                    merged = r
                elif r["implementations"]:
                    merged["implementations"][0]["properties"] += r["implementations"][0]["properties"]
        return merged, "\n".join(outputs)[-TAIL:]


def _call(cmd, env, timeout):
    """Runs the gate in its own process group, so that a deadline or an interrupted pytest leaves no port behind."""
    with subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace", start_new_session=True) as p:
        try:
            out, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _stop(p)
            return "timeout", p.communicate()[0] + f"\n(stopped after {timeout} s)"
        except BaseException:  # Ctrl-C reaches pytest's process group only, not the gate's
            _stop(p)
            raise
        return p.returncode, out


def _stop(p):
    """SIGTERM to the gate's group (it closes its port and ends the matrix), SIGKILL if it is not gone 5 s later."""
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, None)):
        try:
            os.killpg(p.pid, sig)
            p.wait(wait)
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


def _failure(cell, env_prefix):
    lines = [f"{cell['status']} {cell['name']}: {cell.get('message', '')}"]
    if "shrunk" in cell:
        lines.append(cell["shrunk"].rstrip("\n"))
    if "trace" in cell:
        lines += [f"  saved:  {cell['trace']}", f"  replay: {env_prefix}{cell['replay']}"]
    if "save_error" in cell:
        lines.append(f"  NOT SAVED: {cell['save_error']}")
    return "\n".join(lines)


def _required_events(coverage):
    if not coverage.get("guarded"):
        pytest.skip("required events are judged over a whole quick row in which no property failed")
    if coverage.get("missing"):
        pytest.fail(f"required events no trace hit: {', '.join(coverage['missing'])}\n  statistics: "
                    f"{coverage.get('rerun', '')}", pytrace=False)
