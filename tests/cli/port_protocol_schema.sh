# Every request the harness sends and every answer the numpy ports give, for every kind, validates against the
# protocol schema (hello and digest observations included); so do the messages of a scripted session (unsupported).
# Usage: port_protocol_schema.sh KVCONFORM ROOT KIND... (every kind of the table)
source "$(dirname "$0")/port_python_lib.sh"
for kind in "${@:3}"; do  # 3 cases per property: every op and answer shape, quickly
  run 0 "$kvconform" port --kind "$kind" --cases 3 --store "" -- \
    "${tracked[@]}" bash -c "tee -a '$scratch/requests.jsonl' | '$py' '$port' | tee -a '$scratch/answers.jsonl'"
done
PYTHONPATH=$ex "$py" - "$root/docs/port-protocol.schema.json" requests.jsonl answers.jsonl <<'PY' ||
import json, sys, jsonschema
import numpy_port
from kvconform_port import Port
schema = json.load(open(sys.argv[1]))
validator = jsonschema.Draft202012Validator(schema)
def lean(x):
    """x with the number arrays (tensor data, output, weights) cut to one item per JSON type and each distinct string:
    the schema judges their items one by one, so the verdict is the same without jsonschema's time per number (and
    messages that are then equal but for their id are judged once)."""
    if isinstance(x, dict):
        return {k: (list({(type(i), i if isinstance(i, str) else 0): i for i in v}.values())
                    if k in ("data", "output", "weights") and isinstance(v, list) else lean(v)) for k, v in x.items()}
    return [lean(i) for i in x] if isinstance(x, list) else x
def check(messages, kind):
    sub = jsonschema.Draft202012Validator({"$ref": "#/$defs/" + kind, "$defs": schema["$defs"]})
    distinct = {json.dumps({k: v for k, v in m.items() if k != "id"}, sort_keys=True): m for m in map(lean, messages)}
    return [(m, e.message[:160]) for m in distinct.values()
            for e in [*sub.iter_errors(m), *validator.iter_errors(m)][:1]]
for name, kind in ((sys.argv[2], "request"), (sys.argv[3], "answer")):
    messages = [json.loads(line) for line in open(name)]
    ops = {m.get("op") for m in messages}
    wanted = {"hello", "open", "close", "observe", "append", "decode", "create", "fork", "release", "update", "reorder"}
    assert len(messages) > 1000 and (kind == "answer" or wanted <= ops), ops
    assert kind == "answer" or any(m.get("digest") for m in messages), "no observation asked for digests"
    bad = check(messages, kind)
    assert not bad, bad[:3]
    print(name, len(messages), "messages valid as", kind)
# A scripted session adds what a gate run does not show: an unsupported open (of flat, which this port leaves out).
port, session = Port("numpy", numpy_port.CACHES[1:]), [{"id": 1, "op": "hello", "protocol": 2}]
configs = [{"kind": "ring", "capacity": 2, "keep": 1, "d_k": 1, "d_v": 1},
           {"kind": "paged", "capacity": 2, "block_size": 1, "d_k": 1, "d_v": 1, "preempt": True},
           {"kind": "prefix", "capacity": 2, "block_size": 1, "d_k": 1, "d_v": 1},
           {"kind": "beam", "capacity": 2, "d_k": 1, "d_v": 1, "layers": 1, "batch": 1, "heads": 1, "q_heads": 1}]
for cache, config in enumerate(configs, 1):
    create = [{"op": "create", "cache": cache, **({"tokens": [1]} if config["kind"] == "prefix" else {})}]
    session += [{"op": "open", "cache": cache, "config": config}] + (create if "block_size" in config else []) + \
        [{"op": "observe", "cache": cache, "digest": True}]
session += [{"op": "open", "cache": 9, "config": {"kind": "flat", "capacity": 2, "d_k": 1, "d_v": 1}}]
pairs = [(m, port.handle(dict(m))) for m in ({**m, "id": i} for i, m in enumerate(session, 1))]
assert [a["ok"] for _, a in pairs] == [True] * (len(pairs) - 1) + [False], pairs
bad = check([m for m, _ in pairs], "request") + check([a for _, a in pairs], "answer")
assert not bad, bad[:3]
print(len(pairs), "scripted exchanges valid")
PY
  fail "a message does not validate"
no_leftovers
