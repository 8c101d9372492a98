# The gpt-oss-style numpy port declares learned sinks in hello (docs/numerics.md §7): its flat cache on a sliding
# window of 8, its paged cache, its hybrid cache on sliding and full layers. The harness sends sink logits with every
# decode and prefill and judges each by that attention, and all three pass (flat's plain worked example is NOT
# SUPPORTED). The plain numpy port is never sent a sink.
# Usage: port_python_gpt_oss.sh KVCONFORM ROOT
source "$(dirname "$0")/port_python_lib.sh"
echo '{"id":1,"op":"hello","protocol":2}' | "$py" "$ex/gpt_oss_port.py" >hello.txt || fail "hello"
"$py" -c "import json; a=json.load(open('hello.txt'));
assert a['kinds']['flat']['profile'] == {'attention': {'sinks': 'learned', 'window': 'sliding 8'}}, a
assert a['kinds']['hybrid']['profile'] == {'attention': {'sinks': 'learned'}}, a
assert a['kinds']['paged']['profile'] == {'attention': {'sinks': 'learned'}}, a" ||
  fail "the gpt-oss port's hello: $(cat hello.txt)"
run 0 "$kvconform" port --kind flat -- "${tracked[@]}" "$py" "$ex/gpt_oss_port.py"
contains out.txt "13 passed, 0 failed, 1 not supported"
contains out.txt "NOT SUPPORTED port / seed_worked_example: pins plain attention's numbers"
run 0 "$kvconform" port --kind hybrid -- "${tracked[@]}" "$py" "$ex/gpt_oss_port.py"
contains out.txt " 0 failed"
run 0 "$kvconform" port --kind paged -- "${tracked[@]}" "$py" "$ex/gpt_oss_port.py"
contains out.txt " 0 failed"
for port in gpt_oss_port.py numpy_port.py; do
  run 0 "$kvconform" port --kind flat --property prefill_equals_decode_steps --cases 5 --store "" -- \
    "${tracked[@]}" bash -c "tee -a $port.jsonl | '$py' '$ex/$port'"
done
"$py" - <<'PY' || fail "sink logits were not sent as declared"
import json
def requests(port):
    return [json.loads(l) for l in open(port + ".jsonl")]
attending = [r for r in requests("gpt_oss_port.py") if r["op"] in ("decode", "prefill")]
assert attending and all(len(r["sinks"]["data"]) == 1 for r in attending), attending[:2]
assert not any("sinks" in r for r in requests("numpy_port.py"))
PY
no_leftovers
