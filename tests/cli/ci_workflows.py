"""The workflow files (.github/workflows/) against GitHub's workflow schema, and the gate's shards as gate.yml runs them.

Usage: ci_workflows.py SOURCE_DIR KVCONFORM. Validation uses tests/ci/github-workflow.schema.json (tests/ci/README.md)
with python3-jsonschema; broken copies of gate.yml must be refused, so the check can fail. Then the gate runs once
whole and once per shard of gate.yml's matrix, with gate.yml's --shard argument: the shards' cells must be the whole
gate's, each exactly once.
"""
import copy
import json
import pathlib
import re
import subprocess
import sys
import tempfile

import jsonschema
import yaml

source, kvconform = pathlib.Path(sys.argv[1]), sys.argv[2]
schema = json.loads((source / "tests/ci/github-workflow.schema.json").read_text())
validator = jsonschema.Draft7Validator(schema)


def load(path):
    doc = yaml.safe_load(path.read_text())
    if True in doc:  # YAML 1.1 reads the key `on` as true
        doc["on"] = doc.pop(True)
    return doc


def problems(doc):
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


workflows = sorted((source / ".github/workflows").glob("*.yml"))
assert len(workflows) >= 4, f"expected the gate, tests and two fuzzing workflows, found {workflows}"
failed = False
for path in workflows:
    for p in problems(load(path)):
        print(f"{path.name}: {p}", file=sys.stderr)
        failed = True
    if not path.read_text().startswith("# "):
        print(f"{path.name}: no purpose line", file=sys.stderr)
        failed = True
if failed:
    sys.exit("FAILED: a workflow file does not validate")

gate = load(source / ".github/workflows/gate.yml")
job = gate["jobs"]["gate"]
broken = {"no runs-on": lambda d: d["jobs"]["gate"].pop("runs-on"),
          "a step with neither uses nor run": lambda d: d["jobs"]["gate"]["steps"].append({"name": "nothing"}),
          "an unknown event": lambda d: d["on"].update({"pushed": None}),
          "steps not a list": lambda d: d["jobs"]["gate"].update({"steps": "bash .ci/setup"})}
for name, breaks in broken.items():
    doc = copy.deepcopy(gate)
    breaks(doc)
    if not problems(doc):
        sys.exit(f"FAILED: gate.yml with {name} validates: the check cannot fail")

shards = job["strategy"]["matrix"]["shard"]
n = len(shards)
assert shards == list(range(n)), f"gate.yml's shards {shards} are not 0 .. N-1"
command = next(s["run"] for s in job["steps"] if "--shard" in s.get("run", ""))
assert re.search(r"--shard \$\{\{ matrix\.shard \}\}/" + str(n) + r"\b", command), command
print(f"{len(workflows)} workflow files valid; gate.yml runs {n} shards")


def cells(args):
    # Which cells a shard holds does not depend on how many cases each runs: one case each, no search.
    with tempfile.TemporaryDirectory() as tmp:
        report = pathlib.Path(tmp) / "gate.json"
        subprocess.run([kvconform, "gate", "--store", "", "--cases", "1", "--search", "0", "--json", str(report),
                        *args], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return [(i["name"], p["name"]) for i in json.loads(report.read_text())["implementations"]
                for p in i["properties"]]


whole = cells([])
parts = [cells(["--shard", f"{i}/{n}"]) for i in shards]
union = sorted(c for part in parts for c in part)
if union != sorted(whole):
    sys.exit(f"FAILED: the {n} shards hold {len(union)} cells ({len(set(union))} distinct), the gate {len(whole)}")
print(f"the {n} shards hold the gate's {len(whole)} cells once each: {[len(p) for p in parts]}")
