# Bad input of every kind gives a message naming the problem and exit 2, never a crash.
source "$(dirname "$0")/lib.sh"
echo '{"schema":"kvconform-trace","version":1,"config":{"kind":"flat"' > truncated.json
run 2 "$kvconform" replay truncated.json
contains err.txt "malformed trace: truncated.json: not valid JSON"
head='{"schema":"kvconform-trace","version":1,'
config='"config":{"kind":"flat","capacity":2,"d_k":1,"d_v":1}'
echo "$head"'"implementation":"flat",'"$config"',"ops":[{"op":"append","k":{"shape":[2],"data":[1]}}]}' > shape.json
run 2 "$kvconform" replay shape.json
contains err.txt "ops[0].k: data has 1 values"
run 2 "$kvconform" replay missing.json
contains err.txt "missing.json: cannot open"
echo "$head"'"implementation":"nope",'"$config"',"ops":[]}' > unknown.json
run 2 "$kvconform" replay unknown.json
contains err.txt 'unknown implementation "nope"'
run 2 "$kvconform" gate --impl nope
contains err.txt 'unknown implementation "nope"'
run 2 "$kvconform" gate --profile fast
run 2 "$kvconform" gate --no-such-flag
run 2 "$kvconform"
run 2 "$kvconform" gate --cases 0
