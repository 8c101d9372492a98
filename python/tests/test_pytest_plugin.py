"""The pytest plugin, driven as a user's suite would be (pytester): one test per property, failures with their shrunk
trace and replay command, -k, --junitxml, the store in pytest's cache, the program's discovery, deadlines."""
import json
import os
import pathlib
import subprocess
import xml.etree.ElementTree as ET

import pytest

from kvconform_port import program

pytest_plugins = ["pytester"]
ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "python"
KVCONFORM = os.path.abspath(os.environ.get("KVCONFORM") or ROOT / "build" / "kvconform")
FLAT = json.loads(subprocess.run([KVCONFORM, "list", "--json"], capture_output=True, text=True, check=True).stdout)
FLAT = [p["name"] for k in FLAT["kinds"] if k["name"] == "flat" for p in k["properties"]]

SUITE = """
from kvconform_port import conformance
from numpy_caches.flat import FlatCache, StrictCapacityFlat

test_flat = conformance(FlatCache, cases=3, search=0)
test_strict = conformance(StrictCapacityFlat, cases=20, search=0)
"""


@pytest.fixture
def suite(pytester, monkeypatch):
    monkeypatch.setenv("KVCONFORM", KVCONFORM)
    pytester.syspathinsert(EXAMPLES)
    pytester.makepyfile(test_suite=SUITE)
    return pytester


def run(pytester, *args):
    return pytester.runpytest("-p", "kvconform_port.pytest_plugin", "-p", "no:randomly", *args)


def test_one_test_per_property_and_a_failure_with_its_trace(suite):
    result = run(suite, "-v")
    # The correct cache passes every flat property (its required events are not judged on 3 cases a property); the
    # twin fails the property that registers its bug.
    status = {l.split("::")[1].split()[0]: l.split()[1] for l in result.outlines if l.startswith("test_suite.py::")}
    assert len(status) == 2 * (len(FLAT) + 1), status
    assert all(status[f"test_flat[{p}]"] == "PASSED" for p in FLAT), status
    assert status["test_strict[exact_fill]"] == "FAILED" and result.ret == 1, status
    result.stdout.fnmatch_lines(["kvconform: * (from $KVCONFORM)", "FAIL exact_fill: *", "*<- fails here",
                                 "  saved:  *", "  replay: *kvconform port --kind flat --replay *"])
    stored = list((suite.path / ".pytest_cache" / "d" / "kvconform").rglob("exact_fill-*.json"))
    assert len(stored) == 1, stored  # the failing store is kept in pytest's cache
    # The replay command shown runs as printed and fails the same way.
    line = next(l for l in result.outlines if l.startswith("  replay: ") and "exact_fill" in l)
    replay = subprocess.run(line[len("  replay: "):], shell=True, capture_output=True, text=True, timeout=120,
                            cwd="/")
    assert replay.returncode == 1 and "exceed the capacity" in replay.stdout, replay.stdout + replay.stderr


def test_k_selects_properties_and_junit_records_them(suite):
    result = run(suite, "-k", "test_strict and exact_fill or test_flat and order_preserved", "--junitxml=out.xml")
    result.assert_outcomes(passed=1, failed=1, deselected=2 * (len(FLAT) + 1) - 2)
    cases = ET.parse(suite.path / "out.xml").getroot().iter("testcase")
    names = {c.get("name"): c.find("failure") for c in cases}
    assert set(names) == {"test_strict[exact_fill]", "test_flat[order_preserved]"}, names
    assert "<- fails here" in names["test_strict[exact_fill]"].text and names["test_flat[order_preserved]"] is None


def test_a_refused_declaration_fails_every_test_with_the_message(suite):
    suite.makepyfile(test_suite="""
from kvconform_port import conformance
from numpy_caches.flat import FlatCache
test_flat = conformance(FlatCache, policies={"no_such_policy": "x"}, cases=1)
""")
    result = run(suite)
    assert result.parseoutcomes()["failed"] == len(FLAT) + 1
    result.stdout.fnmatch_lines(["*exited 2 without a report*", "*no_such_policy*"])


def test_a_run_past_its_deadline_leaves_nothing_running(suite):
    suite.makepyfile(test_suite="""
import time
from kvconform_port import conformance
from numpy_caches.flat import FlatCache

class SlowFlat(FlatCache):
    def append(self, k, v):
        time.sleep(30)

test_slow = conformance(SlowFlat, cases=1)
""")
    result = run(suite, "--kvconform-deadline", "2", "-k", "exact_fill")
    result.assert_outcomes(failed=1, deselected=len(FLAT))
    leftover = subprocess.run(["pgrep", "-f", "serve_class .*test_suite.py"], capture_output=True, text=True)
    assert leftover.stdout == "", leftover.stdout


def test_the_program_named_must_exist(suite):
    result = run(suite, "--kvconform", "/nonexistent/kvconform")
    result.stdout.fnmatch_lines(["*'/nonexistent/kvconform' (given) is not an executable file*"])
    assert result.ret != 0


def test_discovery_order_and_the_message_when_none_is_found(monkeypatch, tmp_path):
    fake = tmp_path / "bin" / "kvconform"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("KVCONFORM", KVCONFORM)
    assert program.find_program(str(fake)) == (str(fake), "given")
    assert program.find_program() == (KVCONFORM, "from $KVCONFORM")
    monkeypatch.delenv("KVCONFORM")
    monkeypatch.setattr(program, "_beside", lambda: [(tmp_path / "none", "installed beside the package")])
    monkeypatch.setenv("PATH", str(fake.parent))
    assert program.find_program() == (str(fake), "from PATH")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(program.ProgramNotFound, match=r"tried \$KVCONFORM \(unset\), .*none and PATH.*--kvconform"):
        program.find_program()


def test_the_package_version_is_the_projects():
    cmake = (ROOT / "CMakeLists.txt").read_text()
    pyproject = (ROOT / "python" / "pyproject.toml").read_text()
    version = cmake.split("project(kvconform VERSION ", 1)[1].split()[0]
    assert f'version = "{version}"' in pyproject, version
