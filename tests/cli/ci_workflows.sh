# The workflow files validate against GitHub's workflow schema and gate.yml's shards cover the gate
# (tests/cli/ci_workflows.py). Usage: ci_workflows.sh KVCONFORM SOURCE_DIR
source "$(dirname "$0")/lib.sh"
"$py" -c "import jsonschema, yaml" 2>/dev/null || skip "python3-jsonschema and python3-yaml are needed"
"$py" "$2/tests/cli/ci_workflows.py" "$2" "$kvconform" || fail "ci_workflows.py"
