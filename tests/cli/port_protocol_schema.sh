# Every request the harness sends and every answer the Python port gives validates against the protocol schema.
source "$(dirname "$0")/lib.sh"
root=$2
for kind in flat ring; do
  run 0 "$kvconform" port --kind "$kind" --cases 5 --store "" -- \
    "${tracked[@]}" bash -c "tee -a '$scratch/requests.jsonl' | '$py' '$root/examples/python/kvconform_port.py' |
             tee -a '$scratch/answers.jsonl'"
done
"$py" - "$root/docs/port-protocol.schema.json" requests.jsonl answers.jsonl <<'PY' || fail "a message does not validate"
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
validator = jsonschema.Draft202012Validator(schema)
for name, kind in ((sys.argv[2], "request"), (sys.argv[3], "answer")):
    lines = open(name).read().splitlines()
    assert len(lines) > 100, (name, len(lines))
    sub = {"$ref": "#/$defs/" + kind, "$defs": schema["$defs"]}
    for line in lines:
        jsonschema.Draft202012Validator(sub).validate(json.loads(line))
        validator.validate(json.loads(line))
    print(name, len(lines), "messages valid as", kind)
PY
no_leftovers
