# From an empty directory: install kvconform, build examples/consumer (every kind) against it, run its gates.
# Usage: consumer_example.sh KVCONFORM SOURCE_ROOT BUILD_DIR
source "$(dirname "$0")/lib.sh"
root=$2 build=$3
prefix=$scratch/prefix
run 0 cmake --install "$build" --prefix "$prefix"
# The Python package installed beside the program: imported from the prefix, it finds that program, and pytest loads
# its plugin from the installed metadata (python/README.md, "Installing").
cd / && env -u KVCONFORM PATH=/usr/bin:/bin PYTHONPATH="$prefix/lib/python3/dist-packages" "$py" -m pytest --co \
  -p no:cacheprovider "$root/python/tests/test_pytest_plugin.py" >"$scratch/py.txt" 2>&1 ||
  { cat "$scratch/py.txt" >&2; fail "pytest with the installed package"; }
cd "$scratch"
contains py.txt "kvconform: $prefix/bin/kvconform (installed beside the package)"
PYTHONPATH="$prefix/lib/python3/dist-packages" run 0 env -u KVCONFORM "$py" -c \
  "import kvconform_port as k; print(k.__file__); print(*k.find_program())"
contains out.txt "$prefix/lib/python3/dist-packages/kvconform_port/__init__.py"
contains out.txt "$prefix/bin/kvconform installed beside the package"
# The installed libraries' own compiler flags (a sanitizer build's -fsanitize must link the consumer too).
flags=$(sed -n 's/^CMAKE_CXX_FLAGS:STRING=//p' "$build/CMakeCache.txt")
run 0 cmake -S "$root/examples/consumer" -B consumer -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS="$flags"
run 0 cmake --build consumer -j2

# Each kind's gate passes, and its own properties ran: a kind whose concept matched but whose
# adapter skipped the kind's ops would still pass the shared properties.
for entry in flat:acme-tiny:exact_fill ring:acme-window:ring_window_last_steps paged:acme-blocks:paged_copy_on_write \
             beam:acme-beam:beam_reorder_gathers growing:acme-growing:growing_memory_follows_rule \
             prefix:acme-prefix:prefix_hits_longest_prefix,prefix_eviction_lru \
             hybrid:acme-hybrid:hybrid_window_frees_blocks,hybrid_freed_blocks_reused,hybrid_shared_layers_read_producer \
             hybrid:acme-hybrid:hybrid_prefill_windows; do
  IFS=: read -r kind name properties <<<"$entry"
  run 0 "consumer/acme_${kind}_gate" gate
  contains out.txt " 0 failed"
  for property in ${properties//,/ }; do
    grep -qE "^$name +$property +PASS +[1-9]" out.txt || { cat out.txt >&2; fail "no PASS row: $name / $property"; }
  done
done
# Sparse top-k declared from the outside: its gate passes with a choice among ties that is not kvconform's own order,
# and the events of top-k are hit.
run 0 consumer/acme_sparse_gate gate --stats
contains out.txt " 0 failed"
grep -qE "^\* top-k leaves rows out " out.txt || fail "acme-sparse: top-k never left a row out"
grep -qE "^\* index scores tie at the k-th " out.txt || fail "acme-sparse: no tie at the k-th"
# A policy declared from the outside (docs/design.md §2.4): the window that refuses rollbacks once full passes with
# rollback=before_full declared, its rollback properties run.
run 0 consumer/acme_trimmed_gate gate
contains out.txt " 0 failed"
grep -qE "^acme-trimmed +refused_rollback_unchanged +PASS +[1-9]" out.txt || fail "no rollbacks run on acme-trimmed"
# Narrow storage declared: the fp16 and q8_0 caches pass (the q8_0 one shows its block scales), and the hybrid cache
# whose sliding group alone is fp16.
for name in half q8 half_sliding; do
  run 0 "consumer/acme_${name}_gate" gate
  contains out.txt " 0 failed"
done
# Declared as double, each fails on its first stored row with one line that names the format to declare.
run 1 consumer/acme_half_as_f64 gate --property order_preserved --store ""
grep -qE '^FAIL acme-half-f64 / order_preserved: state at append: .*f64, but the stored rows match fp16 rounding' \
  out.txt || { cat out.txt >&2; fail "no fp16 hint for a half cache declared f64"; }
run 1 consumer/acme_q8_as_f64 gate --property order_preserved --store ""
grep -qE '^FAIL acme-q8-f64 / order_preserved: format at append: .* [0-9]+ key scales, but keys are declared f64; the stored rows lie on the grid of int8 g32 token sym scale=fp16: declare that format' \
  out.txt || { cat out.txt >&2; fail "no q8_0 hint for a q8_0 cache declared f64"; }

# The status-returning paged cache has no preemption: NOT SUPPORTED, which does not fail the gate.
run 0 consumer/acme_paged_gate gate --property paged_preemption
grep -qE "^acme-blocks +paged_preemption +NOT SUPPORTED" out.txt ||
  { cat out.txt >&2; fail "paged_preemption is not NOT SUPPORTED"; }
contains out.txt "0 passed, 0 failed, 1 not supported"

# The hand-written zoo: the mutant is killed on both seeds by its registered killer (a number of
# cases, not "never failed"), and the decode-less variant passes.
run 0 consumer/acme_zoo selftest --seeds 2
contains out.txt " 0 failed"
grep -qE '^acme-tiny-strict +flat +2/2 .* exact_fill \([0-9]+\)$' out.txt ||
  { cat out.txt >&2; fail "no killer line for acme-tiny-strict"; }
unsupported=$(sed -nE 's/^acme-ledger +PASS .*\(([0-9]+) NOT SUPPORTED\)$/\1/p' out.txt)
[ -n "$unsupported" ] && [ "$unsupported" -gt 0 ] ||
  { cat out.txt >&2; fail "acme-ledger does not pass with NOT SUPPORTED properties"; }
# selftest leaves out exactly what the gate reports NOT SUPPORTED for the same cache.
run 0 consumer/acme_zoo gate --impl acme-ledger
contains out.txt " 0 failed, $unsupported not supported"
# The zoo's own runner catches the mutant in a gate too and replays what it saved.
run 1 consumer/acme_zoo gate --impl acme-tiny-strict --property exact_fill
contains out.txt "FAIL acme-tiny-strict / exact_fill: "
contains out.txt "replay: consumer/acme_zoo replay kvconform-failures/acme-tiny-strict/exact_fill-"
run 1 consumer/acme_zoo replay kvconform-failures/acme-tiny-strict/exact_fill-*.json

# The zoo's latent cache, on three fixed seeds: every property of the kind `list` shows passes with cases, none NOT
# SUPPORTED (a decode_step or prefill the concept does not see, say a non-const decode, would make its properties NOT
# SUPPORTED and still exit 0).
run 0 consumer/acme_zoo list
latent_properties=$(sed -n '/^latent properties:$/,/^[a-z_]* properties:$/s/^  \([a-z0-9_]*\)$/\1/p' out.txt)
[ -n "$latent_properties" ] || { cat out.txt >&2; fail "'acme_zoo list' shows no latent property"; }
for seed in 1 2 3; do
  run 0 consumer/acme_zoo gate --impl acme-latent --seed "$seed"
  contains out.txt " 0 failed, 0 not supported"
  for property in $latent_properties; do
    grep -qE "^acme-latent +$property +PASS +[1-9]" out.txt ||
      { cat out.txt >&2; fail "acme-latent / $property did not pass with cases (seed $seed)"; }
  done
done

run 0 ctest --test-dir consumer --output-on-failure
contains out.txt "100% tests passed, 0 tests failed out of 15"

# The installed interface: the public headers and internal/, nothing else; the consumer includes only <kvconform/...>.
installed=$(ls "$prefix/include/kvconform" | tr '\n' ' ')
[ "$installed" = "array_view.h c_port.h errors.h hybrid.h internal plugin.h " ] || fail "include/kvconform holds: $installed"
own=$(grep -rhE '^#include' "$root/examples/consumer" | grep -vE '^#include (<[a-z_]+>|<kvconform/[a-z_]+\.h>|"[a-z_]+\.h")$' || true)
[ -z "$own" ] || fail "the consumer includes more than <kvconform/...>: $own"
# The installed plug-in header stays light: an outside build needs no RapidCheck, Boost, Eigen or nlohmann headers.
echo '#include <kvconform/plugin.h>' |
  g++ -std=c++20 -E -I"$prefix/include" -I"$prefix/include/kvconform/internal" -x c++ - >plugin.i 2>err.txt ||
  { cat err.txt >&2; fail "the installed <kvconform/plugin.h> does not preprocess"; }
heavy=$(grep -ioE '^# [0-9]+ "[^"]*(rapidcheck|boost|eigen|nlohmann)[^"]*"' plugin.i | sort -u)
[ -z "$heavy" ] || fail "<kvconform/plugin.h> pulls in: $heavy"
grep -qF "\"$prefix/include/kvconform/plugin.h\"" plugin.i || fail "plugin.h did not come from the install"
