# Caches written to real engines' designs (examples/python/engine_caches/, docs/design.md §2.4) pass every property of
# their kind they run on seeds 1 to 3 when they declare the policies the engine chose, and fail without each (one
# left out at a time, or a pair a rule ties together). Usage: port_engines.sh KVCONFORM ROOT CACHE KIND CASES
# POLICY[+POLICY]...
source "$(dirname "$0")/port_python_lib.sh"
cache=$3 kind=$4 cases=$5
shift 5
engine=("${tracked[@]}" "$py" "$ex/engine_port.py" "$cache")
# A prefix engine cache serves atomic creates: the properties of the phases (docs/kinds/prefix.md "Phases"), which it
# does not declare, are NOT SUPPORTED, and nothing else is.
phases=(admitted_hit_decodes_as_miss written_before_found retract_abort_release_blocks)
unsupported=0
[ "$kind" = prefix ] && unsupported=${#phases[@]}
for seed in 1 2 3; do
  run 0 "$kvconform" port --kind "$kind" --seed "$seed" --cases "$cases" -- "${engine[@]}"
  contains out.txt " 0 failed, $unsupported not supported"
  if [ "$kind" = prefix ]; then
    for p in "${phases[@]}"; do contains out.txt "NOT SUPPORTED port / prefix_$p: needs capability \"phases\""; done
  fi
done
for left_out in "$@"; do
  undeclare=()
  for policy in ${left_out//+/ }; do undeclare+=(--undeclare "$policy"); done
  run 1 "$kvconform" port --kind "$kind" --cases "$cases" --store "" -- "${engine[@]}" "${undeclare[@]}"
  contains out.txt "FAIL port / "
done
no_leftovers
