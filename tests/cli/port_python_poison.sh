# Copy semantics over a pipe (docs/port-protocol.md §9): the twin that keeps the caller's arrays passes copy_semantics
# when the library does not overwrite its inputs (--no-poison: every request is parsed into fresh arrays, so nothing
# ever changes them), and fails it, as a cache that keeps references must, with the poisoning on by default.
# Usage: port_python_poison.sh KVCONFORM ROOT
source "$(dirname "$0")/port_python_lib.sh"
run 0 "$kvconform" port --kind flat --property copy_semantics --store "" -- \
  "${tracked[@]}" "$py" "$port" --bug flat-no-copy --no-poison
contains out.txt "1 passed, 0 failed"
run 1 "$kvconform" port --kind flat --property copy_semantics --store "" -- \
  "${tracked[@]}" "$py" "$port" --bug flat-no-copy
contains out.txt "FAIL port / copy_semantics: state at "
contains out.txt "is [nan"
no_leftovers
