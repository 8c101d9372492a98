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
# A glob that selects nothing, and counts or seeds outside their ranges, are errors, not empty passes.
run 2 "$kvconform" gate --property 'zzz*'
contains err.txt "--property 'zzz*' matches no property"
run 2 "$kvconform" gate --seed -1
contains err.txt '"-1" is not an integer in [0, 18446744073709551615]'
run 2 "$kvconform" gate --cases 99999999999
contains err.txt '"99999999999" is not an integer in [1, 1000000]'
for params in max_success=0 max_size=5000 seed=abc 'seed=1 seed=2' verbose_progress=1; do
  RC_PARAMS=$params run 2 "$kvconform" gate --impl flat --property exact_fill --store ""
  contains err.txt "RC_PARAMS"
done

# Files that are not traces: a directory, a FIFO nobody writes, /dev/zero, a file past the size limit.
run 2 "$kvconform" replay .
contains err.txt ".: is a directory, not a file"
mkfifo fifo
run 2 timeout 60 "$kvconform" replay fifo
contains err.txt "fifo: nothing was written to this FIFO within 10000 ms"
run 2 timeout 60 "$kvconform" replay /dev/zero
contains err.txt "/dev/zero: more than the limit of 67108864 bytes"
truncate -s 200M huge.json
run 2 "$kvconform" replay huge.json
contains err.txt "huge.json: 209715200 bytes, more than the limit of 67108864 bytes"
"$py" -c "print('[' * 100000 + ']' * 100000)" >deep.json
run 2 "$kvconform" replay deep.json
contains err.txt "deep.json: nested deeper than the limit of 32 levels"

# Sizes out of range name the field and the allowed range, never a 309-digit number.
for capacity in 1e308 -1 1.5 99999999999999999999 100000000; do
  echo "$head"'"implementation":"flat","config":{"kind":"flat","capacity":'$capacity',"d_k":1,"d_v":1},"ops":[]}' \
    > capacity.json
  run 2 "$kvconform" replay capacity.json
  contains err.txt "capacity.json: config.capacity: "
  contains err.txt " [0, 1048576]"
  [ "$(wc -c <err.txt)" -lt 200 ] || fail "a long message for capacity $capacity: $(cat err.txt)"
done

# A trace naming a property the implementation's kind does not have, or a driver's seed without a driver.
echo "$head"'"implementation":"flat","property":"nope",'"$config"',"ops":[]}' > property.json
run 2 "$kvconform" replay property.json
contains err.txt 'property.json: property: "nope" is not a property of the flat kind'
echo "$head"'"implementation":"flat","property":"exact_fill",'"$config"',"ops":[],"drive":{"seed":1,"size":1}}' \
  > drive.json
run 2 "$kvconform" replay drive.json
contains err.txt 'drive.json: drive: only the trace of a driver property has a driver'

# Driver traces: drive.size outside [1, capacity] (0 divided by zero, more indexed past the cache), a driver of
# another kind, and a saved driver trace replayed where the driver fails past the saved ops.
run 1 "$kvconform" gate --impl beam-reorder-aliases --property beam_search_equals_recompute --store drv
saved=$(ls drv/beam-reorder-aliases/*.json)
cap=$("$py" -c "import json; print(json.load(open('$saved'))['config']['capacity'])")
for size in 0 $((cap + 1)) 1048576; do
  "$py" -c "import json,sys; t=json.load(open('$saved')); t['drive']['size']=$size; json.dump(t,open('size.json','w'))"
  run 2 "$kvconform" replay size.json
  contains err.txt "size.json: trace.drive.size: $size is outside the allowed range [1, $cap]"
done
"$py" -c "import json; t=json.load(open('$saved')); t['ops']=t['ops'][:1]; json.dump(t,open('short.json','w'))"
run 1 "$kvconform" replay short.json
contains out.txt "at op 3 of 1: update, which the driver ran past the saved ops"
mkdir -p kinds/flat
"$py" -c "import json; t=json.load(open('$saved'))
t.update(implementation='flat', property='generation_fills_capacity')
json.dump(t, open('kinds/flat/generation_fills_capacity-0.json', 'w'))"
run 2 "$kvconform" gate --impl flat --store kinds
contains err.txt "kinds/flat/generation_fills_capacity-0.json: config.kind: a beam trace cannot run on flat"
