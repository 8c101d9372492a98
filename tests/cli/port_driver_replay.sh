# A driver's saved trace replayed through a port on which the driver fails past the saved ops: a FAIL naming the op
# the driver ran past the trace, never a crash (the op index was once read past the saved ops); the correct port
# passes the same trace, as the driver reruns from its seed.
# Usage: port_driver_replay.sh KVCONFORM ROOT
source "$(dirname "$0")/port_python_lib.sh"
run 1 "$kvconform" gate --impl beam-reorder-aliases --property beam_search_equals_recompute --store drv
saved=$(ls drv/beam-reorder-aliases/beam_search_equals_recompute-*.json)
"$py" -c "import json; t=json.load(open('$saved')); t['ops']=t['ops'][:1]; json.dump(t,open('short.json','w'))"
run 1 "$kvconform" port --kind beam --replay short.json -- "${tracked[@]}" "$py" "$port" --bug beam-reorder-aliases
contains out.txt "FAIL short.json on port: "
contains out.txt "which the driver ran past the saved ops"
run 0 "$kvconform" port --kind beam --replay short.json -- "${tracked[@]}" "$py" "$port"
contains out.txt "PASS short.json on port"
no_leftovers
