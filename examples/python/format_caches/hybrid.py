"""The numpy hybrid cache with each layer group's rows stored by its own codecs: the full and cross groups in bf16
and the sliding group in fp8 e4m3, as vLLM lets groups differ (docs/kinds/hybrid.md), declared in the hello profile
with sliding_keys and sliding_values; and its seeded-bug twin, whose blocks keep their first group's codecs."""
import numpy as np

from numpy_caches.hybrid import HybridCache

from .elements import BF16, E4M3Saturating


class MixedHybrid(HybridCache):
    """A row is kept as its group's codecs store it: encoded, and read back as the values it decodes to."""

    codecs = {"full": (BF16, BF16), "cross": (BF16, BF16), "sliding": (E4M3Saturating, E4M3Saturating)}
    profile = {"keys": BF16.format, "values": BF16.format,
               "sliding_keys": E4M3Saturating.format, "sliding_values": E4M3Saturating.format}

    def __init__(self, config):
        super().__init__(config)
        self.sides = {g: (k(self.d_k, config["k_scale"]), v(self.d_v, config["v_scale"]))
                      for g, (k, v) in self.codecs.items()}

    def format_of(self, block, group):
        """The group whose codecs a write into `block` for `group` uses."""
        return group

    def write(self, seq, g, place, p, k, v):
        keys, values = self.sides[self.format_of(seq.tables[g][p // self.bs], g)]
        super().write(seq, g, place, p, *(c.decode(c.encode(np.reshape(x, (1, -1))))[0]
                                          for c, x in ((keys, k), (values, v))))


class StaleFormatHybrid(MixedHybrid):
    """Seeded bug (docs/mutants.md, hybrid-reused-block-stale-format): a block keeps the codecs of the group that took
    it first, so a bf16 group's rows in a block the fp8 group freed are stored as fp8 (vLLM #47574)."""

    def __init__(self, config):
        super().__init__(config)
        self.first = {}

    def take(self, group):
        block = super().take(group)
        self.first.setdefault(block, group)
        return block

    def format_of(self, block, group):
        return self.first[block]
