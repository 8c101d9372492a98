"""A kvconform port of numpy caches storing keys and values in one storage format, declared in hello.

Usage: /usr/bin/python3 numpy_format_port.py FORMAT [--bug NAME] [--no-poison] [--no-digest]
FORMAT: bf16, e4m3 (saturating, per-tensor scales), q8_0, q4_1 or kivi. Each serves the kinds its format
fits (a residual, KIVI's, serves neither a sliding window nor a block pool; e4m3 and q8_0 also serve the latent kind,
its rows in fp8 with the one scale k_scale or in int8 blocks of 32); `--bug` serves a seeded-bug twin in place of the cache of its kind: the
format's twin of its flat cache, bf16-truncates, e4m3-no-saturation, q8_0-amax-over-128, q4_1-nibble-order,
kivi-residual-never-flushed, and e4m3's latent twin latent-e4m3-values-unscaled. FORMAT bf16+e4m3 serves the hybrid
kind, its sliding group in e4m3 and the others in bf16; its twin is hybrid-reused-block-stale-format.
"""
import sys

from format_caches import elements, groups, kivi
from format_caches.caches import kinds, stored
from format_caches.hybrid import MixedHybrid, StaleFormatHybrid
from format_caches.latent import ValuesUnscaledLatent
from kvconform_port import serve

PER_ROW = ("flat", "growing", "ring", "paged")
# format -> (kinds, key codec, value codec, bug name, bugged key codec, bugged value codec)
FORMATS = {
    "bf16": (PER_ROW, elements.BF16, None, "bf16-truncates", elements.TruncatingBF16, None),
    "e4m3": (PER_ROW + ("latent",), elements.E4M3Saturating, None, "e4m3-no-saturation", elements.UnsaturatedE4M3,
             None),
    "q8_0": (PER_ROW + ("latent",), groups.Q8_0, None, "q8_0-amax-over-128", groups.AmaxOver128Q8_0, None),
    "q4_1": (PER_ROW, groups.Q4_1, None, "q4_1-nibble-order", groups.PairedNibblesQ4_1, None),
    "kivi": (("flat", "growing"), kivi.ChannelKeys, kivi.TokenValues, "kivi-residual-never-flushed",
             kivi.NeverFlushedKeys, kivi.NeverFlushedValues),
}
# Twins whose bug is the cache's, not the codec's: format -> {bug name: the twin's class}.
CACHE_TWINS = {"e4m3": {"latent-e4m3-values-unscaled": stored(ValuesUnscaledLatent, elements.E4M3Saturating)}}

if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "bf16+e4m3":
        serve("numpy-bf16+e4m3", [MixedHybrid], {"hybrid-reused-block-stale-format": StaleFormatHybrid}, sys.argv[2:])
        sys.exit(0)
    if len(sys.argv) < 2 or sys.argv[1] not in FORMATS:
        sys.exit(f"usage: numpy_format_port.py {{{','.join(FORMATS)},bf16+e4m3}} [--bug NAME] [--no-poison] "
                 "[--no-digest]")
    names, key, value, bug, bug_key, bug_value = FORMATS[sys.argv[1]]
    twins = {bug: cls for cls in kinds(names[:1], bug_key, bug_value)}  # flat: the twin's kind in the tests
    twins.update(CACHE_TWINS.get(sys.argv[1], {}))
    serve(f"numpy-{sys.argv[1]}", kinds(names, key, value), twins, sys.argv[2:])
