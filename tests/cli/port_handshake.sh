# The handshake (docs/port-protocol.md §3): a port of another protocol version or with a malformed hello is exit 2
# naming the cause; a kind the port does not serve, or a config it answers "unsupported", is NOT SUPPORTED.
# Usage: port_handshake.sh KVCONFORM ROOT
source "$(dirname "$0")/port_python_lib.sh"
hello_port '{"id":1,"ok":true,"protocol":3,"name":"future","kinds":{}}'
run 2 "$kvconform" port --kind flat -- "${port[@]}"
contains err.txt "the port speaks protocol version 3; this harness speaks version 2"
hello_port '{"id":1,"ok":true,"protocol":2,"kinds":{"flat":{"capabilities":["decode","warp"]}}}'
run 2 "$kvconform" port --kind flat -- "${port[@]}"
contains err.txt "hello.kinds.flat.capabilities"
contains err.txt "unknown capability \"warp\""
hello_port '{"id":1,"ok":true,"protocol":2,"kinds":{"flat":{"profile":{"storage":"f16"}}}}'
run 2 "$kvconform" port --kind flat -- "${port[@]}"
contains err.txt "hello.kinds.flat.profile"
# Sliding-group formats are the hybrid kind's: another kind declaring them is refused.
hello_port '{"id":1,"ok":true,"protocol":2,"kinds":{"paged":{"profile":{"sliding_keys":"e4m3"}}}}'
run 2 "$kvconform" port --kind paged -- "${port[@]}"
contains err.txt "hello.kinds.paged.profile: sliding_keys and sliding_values are the hybrid kind's"
# Sparse top-k (docs/numerics.md §7.4) is not carried by the protocol; declaring it, or it on ring, is refused.
sparse='"sparse":{"top_k":4,"heads":2,"width":8,"index":"e4m3 row-scaled"}'
hello_port '{"id":1,"ok":true,"protocol":2,"kinds":{"flat":{"profile":{"attention":{'"$sparse"'}}}}}'
run 2 "$kvconform" port --kind flat -- "${port[@]}"
contains err.txt "hello.kinds.flat.profile: attention.sparse: top-k is served by built-in and plug-in caches, not ports"
hello_port '{"id":1,"ok":true,"protocol":2,"kinds":{"ring":{"profile":{"attention":{'"$sparse"'}}}}}'
run 2 "$kvconform" port --kind ring -- "${port[@]}"
contains err.txt "attention.sparse: top-k is served by flat only"
hello_port '{"id":1,"ok":true,"protocol":2,"kinds":{"flat":{"profile":{"attention":{"sparse":{"top_k":4}}}}}}'
run 2 "$kvconform" port --kind flat -- "${port[@]}"
contains err.txt "profile.attention.sparse: accepted: \"none\" or {\"top_k\": K"
# Policies (docs/design.md §2.4): one the kind lacks, a choice its policy lacks, and a broken rule across policies are
# exit 2 naming what is accepted.
hello_port '{"id":1,"ok":true,"protocol":2,"kinds":{"paged":{"policies":{"hit_limit":"all_but_last"}}}}'
run 2 "$kvconform" port --kind paged -- "${port[@]}"
contains err.txt "hello.kinds.paged.policies: the paged kind has no policy \"hit_limit\" (its policies: rollback_blocks)"
hello_port '{"id":1,"ok":true,"protocol":2,"kinds":{"prefix":{"policies":{"duplicates":"merged"}}}}'
run 2 "$kvconform" port --kind prefix -- "${port[@]}"
contains err.txt "prefix policy duplicates has no choice \"merged\" (its choices: first, registered, adopted)"
hello_port '{"id":1,"ok":true,"protocol":2,"kinds":{"prefix":{"policies":{"eviction":"leaf"}}}}'
run 2 "$kvconform" port --kind prefix -- "${port[@]}"
contains err.txt "prefix policy eviction=leaf needs duplicates=adopted"
hello_port '{"id":1,"ok":true,"protocol":2,"kinds":{"ring":{"policies":{"rollback":7}}}}'
run 2 "$kvconform" port --kind ring -- "${port[@]}"
contains err.txt "hello.kinds.ring.policies.rollback: expected the name of a choice"
# The float32 port serves flat only: ring is not served at all.
run 0 "$kvconform" port --kind ring -- "${tracked[@]}" "$py" "$ex/numpy_port_f32.py"
grep -qE "^0 passed, 0 failed, [1-9][0-9]* not supported" out.txt || fail "ring: not every property NOT SUPPORTED"
contains out.txt "NOT SUPPORTED port / ring_window_last_steps: the port does not serve the ring kind"
# A ring port that declares sinks but answers every config with keep > 0 "unsupported" at open: the property that
# draws sinks is NOT SUPPORTED, not failed.
no_sinks=("$py" -c "
import sys; sys.path.insert(0, '$ex')
from kvconform_port import serve
import numpy_port
class NoSinks(numpy_port.ring.RingCache):
    def supports(self, config):
        return config['keep'] == 0
serve('numpy-no-sinks', [NoSinks])
")
run 0 "$kvconform" port --kind ring --property ring_sinks_survive -- "${tracked[@]}" "${no_sinks[@]}"
contains out.txt "NOT SUPPORTED port / ring_sinks_survive"
no_leftovers
