# The Python package as a user installs it: pip into a fresh virtual environment offline, then python/README.md's
# pytest module, whose correct cache passes every test and whose twin fails one with its trace and replay command.
# Usage: python_package.sh KVCONFORM ROOT
source "$(dirname "$0")/lib.sh"
root=$2
"$py" -c "import ensurepip, pytest" 2>/dev/null || skip "python3-venv (ensurepip) or python3-pytest missing"
cp -r "$root/python" src  # pip builds in its source folder: never in the checkout
run 0 "$py" -m venv --system-site-packages env
run 0 env/bin/python -m pip install --no-build-isolation --no-index ./src
run 0 env/bin/python -c "import kvconform_port, importlib.metadata as m; print(kvconform_port.__file__, m.version('kvconform'))"
contains out.txt "$scratch/env/lib/"
mkdir proj && cp -r "$root/examples/python/numpy_caches" proj/  # the user's cache, beside the suite
"$py" - "$root/python/README.md" proj/test_paged.py <<'PY' || fail "no pytest module in python/README.md"
import re, sys
text = open(sys.argv[1]).read()
section = text[text.index("## Gating from pytest"):]
open(sys.argv[2], "w").write(re.search(r"```python\n(.*?)```", section, re.S).group(1))
PY
cd proj
env -u KVCONFORM PATH=/usr/bin:/bin ../env/bin/python -m pytest -p no:randomly -rfs "--kvconform=$kvconform" >../out.txt 2>&1
code=$?
cd ..
[ $code = 1 ] || { cat out.txt >&2; fail "pytest exited $code, expected 1 (one failed test)"; }
contains out.txt "kvconform: $kvconform (given)"
contains out.txt "collected 40 items"  # python/README.md says so
contains out.txt "= 1 failed, "
contains out.txt "FAILED test_paged.py::test_preempts_oldest[paged_preemption]"
contains out.txt "FAIL paged_preemption: preemption at append: "
contains out.txt "<- fails here"
contains out.txt "  saved:  $scratch/proj/.pytest_cache/d/kvconform/test_paged.py_test_preempts_oldest/port/paged_preemption-"
replay=$(grep "^  replay: " out.txt | head -1)
[ -n "$replay" ] || fail "no replay command"
(cd / && bash -c "${replay#  replay: }") >replay.txt 2>&1
[ $? = 1 ] || { cat replay.txt >&2; fail "the replay command did not fail as the test did: $replay"; }
contains replay.txt "preemption at append: "

# The same for a cache of torch tensors (DLPack): examples/python/torch_port.py's flat cache, and a twin whose prefill
# masks a chunk from its own start (vLLM #26042), which the three prefill properties catch.
cp "$root/examples/python/torch_port.py" proj/
cat >proj/test_torch.py <<'PY'
from kvconform_port import conformance
from torch_port import TorchFlat, causal


class ChunkOffsetFlat(TorchFlat):
    def prefill(self, k, v, q):
        self.append(k, v)
        return causal(self.keys()[-len(q):], self.values()[-len(q):], q, 0)  # the bug: the rows before are not seen


test_flat = conformance(TorchFlat, seed=1)
test_chunk_offset = conformance(ChunkOffsetFlat, seed=1)
PY
(cd proj && env -u KVCONFORM ../env/bin/python -m pytest -p no:randomly -rf "--kvconform=$kvconform" test_torch.py) \
  >torch.txt 2>&1
[ $? = 1 ] || { cat torch.txt >&2; fail "pytest of the torch caches did not exit 1"; }
failed=$(grep "^FAILED " torch.txt | sort | tr '\n' ' ')
want="FAILED test_torch.py::test_chunk_offset[prefill_chunked_equals_whole] \
FAILED test_torch.py::test_chunk_offset[prefill_equals_decode_steps] FAILED test_torch.py::test_chunk_offset[speculative_rounds] "
[ "$failed" = "$want" ] || { cat torch.txt >&2; fail "torch: failed $failed"; }
contains torch.txt "<- fails here"
echo "pip install, pytest and the replay as documented; torch tensors the same"
