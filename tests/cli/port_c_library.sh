# A ring cache in C behind the C ABI passes every ring property; its bugged twin fails with a shrunk, replayable
# trace; a library built for version 1 of the ABI is refused with exit 2 naming its version and the versions driven
# (docs/port-protocol.md §12).
source "$(dirname "$0")/lib.sh"
good=$2 bug=$3 version_1=$4
run 0 "$kvconform" port --kind ring --library "$good"
contains out.txt " 0 failed, 0 not supported"
run 1 "$kvconform" port --kind ring --property ring_window_last_steps --library "$bug"
contains out.txt "FAIL port / ring_window_last_steps: state at append"
saved=$(ls kvconform-failures/port/ring_window_last_steps-*.json)
"$py" -c "import json; t=json.load(open('$saved')); assert len(t['ops']) <= 4, t['ops']" || fail "not shrunk: $saved"
contains out.txt "replay: $kvconform port --kind ring --replay $saved --library $bug"
run 1 "$kvconform" port --kind ring --replay "$saved" --library "$bug"
run 0 "$kvconform" port --kind ring --replay "$saved" --library "$good"
run 2 "$kvconform" port --kind ring --library "$version_1"
contains err.txt "the library was built for C ABI version 1; this harness drives versions 2 to 6"
run 0 "$kvconform" port --kind flat --library "$good"
contains out.txt "NOT SUPPORTED port / exact_fill: the port does not serve the flat kind"
run 2 "$kvconform" port --kind ring --library "$scratch/missing.so"
contains err.txt "cannot load the library"
no_temporaries  # an in-process library starts no port process: only files can be left
