"""vLLM v1's hybrid allocator as a kvconform hybrid cache: a full-attention and a sliding-window group over one block
pool, whose SlidingWindowManager measures the window at the step's start."""
from numpy_caches.hybrid import HybridCache


class VllmHybridCache(HybridCache):
    """What vLLM v1 does (vllm/v1/core/single_type_kv_cache_manager.py, kv_cache_manager.py): at the start of each
    step remove_skipped_blocks gives back the sliding blocks wholly before the window of the next token, the
    max(0, c - W + 1) tokens skipped after c computed, before allocate_slots checks the free count, so a refused
    allocation has freed them too (on purpose, says its comment); the step then takes a block for every new row (the
    chunk's peak) and frees nothing until the next step. A prefix hit needs and holds cdiv(W - 1, block_size) blocks:
    the W - 1 rows the next token reads. It has no attention sinks."""

    policies = {"sliding_free": "next_step", "refused_append": "frees_passed"}
    supports_sinks = False

    def skipped_blocks(self, computed):
        return max(0, computed - self.window + 1) // self.bs

    def step_start(self, seq):
        t = seq.tables["sliding"]
        for j in range(min(self.skipped_blocks(seq.length), len(t))):
            if t[j] is not None:
                self.drop(t[j])
                t[j] = None  # the null block

    def extend(self, seq, k, v, tokens, prefill):
        super().extend(seq, k, v, tokens, True)  # planned at the first new row: a block for every new row

    def after_queries(self, seq):
        """Nothing: the next step's start gives the passed blocks back."""

    def hit_window(self, n):
        return n + 1  # the window of the next token
