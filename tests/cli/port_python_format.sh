# A numpy port storing its rows in one format (examples/python/numpy_format_port.py) passes `kvconform port` for a
# kind with every property run, its format declared in its hello profile.
# Usage: port_python_format.sh KVCONFORM ROOT FORMAT KIND SEED CASES
source "$(dirname "$0")/port_python_lib.sh"
format=$3 kind=$4 seed=$5 cases=$6
run 0 "$kvconform" port --kind "$kind" --seed "$seed" --cases "$cases" -- \
  "${tracked[@]}" "$py" "$ex/numpy_format_port.py" "$format"
contains out.txt " 0 failed"
only_speculation_unsupported out.txt  # the format caches offer no prefill or rollback
no_leftovers
