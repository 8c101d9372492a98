# The torch port (examples/python/torch_port.py: float64 tensors in and out through array_in and to_numpy) passes
# flat and paged, the only property NOT SUPPORTED being paged's preemption, which the cache does not implement.
# Usage: port_python_torch.sh KVCONFORM ROOT [CASES]
source "$(dirname "$0")/port_python_lib.sh"
"$py" -c "import torch" 2>/dev/null || skip "torch is not importable by $py (Debian: apt-get install python3-torch)"
cases=()
[ $# -ge 3 ] && cases=(--cases "$3")
run 0 "$kvconform" port --kind flat "${cases[@]}" -- "${tracked[@]}" "$py" "$ex/torch_port.py"
contains out.txt " 0 failed, 0 not supported"
run 0 "$kvconform" port --kind paged "${cases[@]}" -- "${tracked[@]}" "$py" "$ex/torch_port.py"
contains out.txt " 0 failed, 1 not supported"
contains out.txt 'NOT SUPPORTED port / paged_preemption: needs capability "preempt"'
no_leftovers
