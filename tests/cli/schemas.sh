# The JSON Schemas in docs/ are exactly what the kind table generates, and each is a valid schema.
source "$(dirname "$0")/lib.sh"
root=$2
for which in trace port vectors; do
  file=$root/docs/$which.schema.json
  [ "$which" = port ] && file=$root/docs/port-protocol.schema.json
  run 0 "$kvconform" schema "$which"
  "$py" - out.txt "$file" <<'PY' || fail "$file differs from 'kvconform schema $which' (regenerate it)"
import json, sys, jsonschema
generated, committed = (json.load(open(p)) for p in sys.argv[1:3])
jsonschema.Draft202012Validator.check_schema(generated)
assert generated == committed
PY
done
