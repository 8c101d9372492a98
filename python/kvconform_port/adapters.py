"""The adapter base classes, one per kind: subclass one, implement its methods over your cache, and serve it.

Arrays arrive as float64 numpy arrays of exactly the shape the harness sent (never broadcast,
squeezed or reshaped: validating ranks and widths is the cache's job, docs/port-protocol.md §2),
read-only during the call and overwritten with NaN after it (§9), so a cache must copy what it
keeps. Refuse an op by raising a refusal (kvconform_port.refusals) or an exception of your own
listed in `refusals`; a refused op must change nothing observable. Any other exception is a bug of
the cache: the port prints its traceback and exits, and the harness reports it with that output.
"""
from .drivers import BeamDriver, HybridDriver, RecurrentDriver, RowsDriver, SequenceDriver, TieredDriver
from .refusals import Unsupported

# The per-tensor scales every kind's config carries (docs/port-protocol.md §4), 1.0 when absent.
SCALES = {"k_scale": 1.0, "v_scale": 1.0}


class Adapter:
    """What every kind shares. Class attributes a subclass may set:

    - `profile`: the numeric profile declared in hello (docs/numerics.md §2), e.g.
      {"storage": "f32", "working": "f32"}; empty means double storage and arithmetic.
    - `refusals`: {exception class: reason} for caches that raise their own exceptions, e.g.
      {CacheFullError: "capacity", ValueError: "shape"}; checked in order with isinstance.
    - `limits`: the largest config sizes the cache serves, declared in hello, e.g. {"capacity": 1024,
      "d_k": 128}; the harness generates no config beyond them (docs/port-protocol.md §3).
    - `profile["attention"]`: the attention the decode computes besides softmax(q K^T / sqrt(d_k)) V
      (docs/numerics.md §7), e.g. {"sinks": "learned", "window": "sliding 128", "softcap": 30}; with learned sinks
      decode and prefill take one more argument, `sinks`, the decode's sink logits (1-D, one per query head).
    - `policies`: the choices the cache makes where engines legitimately differ, declared in hello, e.g.
      {"hit_limit": "all_but_last", "duplicates": "registered"} (docs/design.md §2.4; `kvconform list` prints each
      kind's policies); the harness holds the cache to exactly those. Empty: the kind's contract.
    - `array_in`: a callable applied to every array handed to the cache (a float64 numpy array), e.g.
      torch.from_numpy; None (the default) hands the numpy arrays over. Arrays the adapter returns may be of any
      type that exports DLPack or __array__ (arrays.to_numpy).

    The constructor receives the config dict of docs/port-protocol.md §4, optional fields filled in;
    every kind's config carries the per-tensor scales "k_scale" and "v_scale" (floats, 1.0 unless the
    harness sent others) that a scaled element format divides by (docs/numerics.md §6.1); a latent
    config only "k_scale", as its values are entries of its key rows, and a recurrent one neither (a state is
    not stored in a scaled format).

    A side declared as integer groups in `profile` exposes its groups (docs/port-protocol.md §7):
    key_scales(*where), key_zeros(*where), value_scales(*where), value_zeros(*where), each an array
    (any shape, sent flattened) of one scale or minimum per group, oldest first, or None for a side
    without them (the default). `where` is the stream: nothing (flat, ring, growing), the sequence
    id (paged, prefix), or layer, row and kv head (beam).
    """

    kind = None
    profile = {}
    refusals = {}
    limits = {}
    policies = {}
    array_in = None
    config_fields = ()  # required config fields of the kind, after "kind"
    config_defaults = SCALES  # optional config fields and their values when absent
    driver = None  # the drivers.Driver subclass that calls it and observes it
    ops = {}  # op name -> (required fields, optional fields), in the order the method takes them

    def __init_subclass__(cls, **kwargs):
        """A profile declaring learned sinks (docs/numerics.md §7.1) makes the kind's decode and prefill take one more
        argument, `sinks`: the decode's sink logits (1-D, one per query head), after the kind's own arguments."""
        super().__init_subclass__(**kwargs)
        attention = cls.profile.get("attention", {}) if isinstance(cls.profile, dict) else {}
        if isinstance(attention, dict) and attention.get("sinks") == "learned":
            cls.ops = {op: (required + ("sinks",), optional)
                       if op in ("decode", "prefill") and "sinks" not in required else (required, optional)
                       for op, (required, optional) in cls.ops.items()}

    def __init__(self, config):
        self.config = config

    @classmethod
    def capabilities(cls):
        """The optional capabilities declared in hello: each of "decode", "prefill" and "rollback" that is an op of
        the kind and that the subclass defines (docs/design.md §2.3); a method inherited from a cache of another
        kind (a latent cache built on a paged one keeps its prefill) is not one."""
        base = _kind_base(cls)
        return [name for name in ("decode", "prefill", "rollback")
                if name in cls.ops and getattr(cls, name, None) is not getattr(base, name, None)]

    def supports(self, config):
        """Whether this adapter serves `config` (an open of a config it does not is `unsupported`)."""
        return True

    def decode(self, *args):
        """Optional: the kind's decode (see each kind), returning (output, weights) arrays."""
        raise Unsupported(f"{type(self).__name__} has no decode")

    def prefill(self, *args):
        """Optional: append m steps and attend with each step's query causally (see each kind), returning
        (output (m, d_v), weights (m, n + m)) for n rows held before, 0 where a query does not see a row."""
        raise Unsupported(f"{type(self).__name__} has no prefill")

    def rollback(self, *args):
        """Optional: drop the newest `count` steps (see each kind); IndexRefusal beyond what the cache can undo."""
        raise Unsupported(f"{type(self).__name__} has no rollback")

    @classmethod
    def declares_groups(cls):
        """Whether the profile declares a side in integer groups (its formats start with "int")."""
        return any(str(cls.profile.get(side, "")).startswith("int") for side in ("keys", "values"))

    def key_scales(self, *where):
        return None

    def key_zeros(self, *where):
        return None

    def value_scales(self, *where):
        return None

    def value_zeros(self, *where):
        return None

    def groups(self, *where):
        """The group fields of a stream that the adapter exposes, as {field: array}."""
        methods = {"key_scales": self.key_scales, "key_zeros": self.key_zeros,
                   "value_scales": self.value_scales, "value_zeros": self.value_zeros}
        return {name: a for name, a in ((name, m(*where)) for name, m in methods.items()) if a is not None}


def _kind_base(cls):
    """The library's base class of the kind `cls` adapts (the one that sets `kind`)."""
    for c in cls.__mro__:
        if "kind" in vars(c):
            return c
    raise TypeError(f"{cls.__name__} is not an adapter of a kind")


class FlatAdapter(Adapter):
    """A cache of at most config["capacity"] steps, config["d_k"] and config["d_v"] wide.

    append(k, v): k and v each 1-D (one step) or 2-D (n steps, n may be 0); refuse ShapeRefusal for
    a wrong rank or width or differing step counts, CapacityRefusal when size + n > capacity.
    decode(q) (optional): q 1-D of width d_k; s = K q / sqrt(d_k), w = softmax(s), return (w V, w);
    ShapeRefusal, EmptyRefusal with no rows. keys(), values(): the held rows, oldest first, 2-D.
    size(): the cache's own count of held rows.
    prefill(k, v, q) (optional): the append of k and v (m steps, refused as that append), q 2-D (m, d_k)
    (else ShapeRefusal); query i attends the rows before the prefill and the chunk's first i + 1; return
    (output (m, d_v), weights (m, n + m)). rollback(count) (optional): drop the newest count steps;
    IndexRefusal for a negative count or more than held.
    """

    kind = "flat"
    driver = RowsDriver
    config_fields = ("capacity", "d_k", "d_v")
    ops = {"append": (("k", "v"), ()), "decode": (("q",), ()), "prefill": (("k", "v", "q"), ()),
           "rollback": (("count",), ())}

    def keys(self):
        raise NotImplementedError("an adapter must return its keys")

    def values(self):
        raise NotImplementedError("an adapter must return its values")

    def size(self):
        raise NotImplementedError("an adapter must return its size")

    def observed_positions(self):
        """Positions of the held rows, or None for kinds without them."""
        return None

    def observed_counters(self):
        """The kind's counters (docs/port-protocol.md §7)."""
        return {"size": self.size()}


class RingAdapter(FlatAdapter):
    """A sliding window of config["capacity"] = W steps: never refused for room; holds the first
    config["keep"] steps ever appended (attention sinks) and the last W - keep of the others. Set
    `supports_sinks = True` if the cache implements keep > 0; otherwise such configs are unsupported.

    Besides the flat methods: positions() (absolute 0-based step index of each held row, oldest
    first) and total() (steps ever appended).

    A ring with rollback also takes config["reserve"] = R: it holds W + R rows and attends the sinks and the
    last W - keep (a decode's weights cover every held row, 0 outside the window); a rollback is refused
    (IndexRefusal) unless every row the earlier window attends is still held (docs/kinds/ring.md). Without
    rollback, configs with a reserve are unsupported. A prefill's query i attends the window at its own step.
    """

    kind = "ring"
    supports_sinks = False
    config_defaults = dict(SCALES, keep=0, reserve=0)

    @classmethod
    def capabilities(cls):
        return super().capabilities() + (["sinks"] if cls.supports_sinks else [])

    def supports(self, config):
        return (config.get("keep", 0) == 0 or self.supports_sinks) and (
            config.get("reserve", 0) == 0 or "rollback" in self.capabilities())

    def positions(self):
        raise NotImplementedError("a ring adapter must return its positions")

    def total(self):
        raise NotImplementedError("a ring adapter must return its total")

    def observed_positions(self):
        return self.positions()

    def observed_counters(self):
        return {"size": self.size(), "total": self.total()}


class GrowingAdapter(FlatAdapter):
    """A cache without capacity: appends are never refused for room, storage grows in whole steps
    of config["step"] rows. Besides the flat methods: reserved_rows(), the rows of storage held."""

    kind = "growing"
    config_fields = ("step", "d_k", "d_v")

    def reserved_rows(self):
        raise NotImplementedError("a growing adapter must return its reserved rows")

    def observed_counters(self):
        return {"size": self.size(), "reserved_rows": self.reserved_rows()}


class PagedAdapter(Adapter):
    """A pool of config["capacity"] blocks of config["block_size"] rows shared by sequences.

    Sequences are the cache's own ids: create() and fork(seq) return a new id; the library maps the
    harness's handles to them. For a handle that names no sequence the adapter receives None, which
    it must refuse with IndexRefusal; for a released one, the id it had (unless the cache reissued
    that id to a live sequence, then None), so the cache's own check of released ids is exercised.

    create(); fork(seq): share every block of seq. release(seq). append(seq, k, v): as flat, copying
    a shared partly filled last block first; CapacityRefusal when the pool lacks blocks. With
    `supports_preempt = True` and config["preempt"], an append that does not fit releases other
    sequences, newest first, and returns their ids (refused if even that would not make room).
    decode(seq, q) (optional). keys(seq), values(seq), block_table(seq): the sequence's rows and
    block numbers; ref_counts(): {block: count} of held blocks; free_blocks(); bytes_in_use().
    prefill(seq, k, v, q) (optional): the append, then query i attends seq's rows up to the chunk's
    (i + 1)-th; return (output, weights) or, when it preempted, (output, weights, preempted ids).
    rollback(seq, count) (optional): drop seq's newest count steps; blocks past its end leave its
    table, a kept partly filled block stays whole for its other holders (the next append copies it).
    """

    kind = "paged"
    driver = SequenceDriver
    supports_preempt = False
    config_fields = ("capacity", "block_size", "d_k", "d_v")
    config_defaults = dict(SCALES, preempt=False)
    ops = {"create": ((), ()), "fork": (("seq",), ()), "release": (("seq",), ()),
           "append": (("seq", "k", "v"), ()), "decode": (("seq", "q"), ()), "prefill": (("seq", "k", "v", "q"), ()),
           "rollback": (("seq", "count"), ())}

    @classmethod
    def capabilities(cls):
        return super().capabilities() + (["preempt"] if cls.supports_preempt else [])

    def supports(self, config):
        return not config.get("preempt") or self.supports_preempt

    def observed_counters(self):
        return {"free_blocks": self.free_blocks(), "bytes_in_use": self.bytes_in_use()}


class PrefixAdapter(PagedAdapter):
    """A paged cache with automatic prefix caching (no preemption).

    create(tokens): a new sequence holding the registered full blocks of the longest cached prefix
    of tokens. append(seq, k, v, tokens): one token per step (ShapeRefusal otherwise); a block that
    fills is registered under the hash chain of every token up to its end, unless that chain is
    registered already. CapacityRefusal when free and evictable blocks together are too few;
    evictable blocks go least recently released first. release(seq): registered blocks stay cached
    and evictable, added from the last to the first. Counters: free_blocks(), evictable_blocks(),
    hit_rows() (rows every create and admit so far found cached). With `supports_extra_keys = True` (the capability
    "extra_keys"), create(tokens, extra_key) receives the create's extra key (an adapter, a tenant's salt; 0 for
    none), part of every block's chain: equal tokens under another key share nothing; without, a create with a key
    is unsupported and create(tokens) is called. prefill(seq, k, v, tokens, q) (optional) as
    paged's with the tokens; rollback(seq, count) (optional) as paged's, and a registered block it
    leaves partly filled stays registered and unchanged (the next append copies it first).

    Phases (optional: the capability "phases", declared when the class defines all four methods; docs/kinds/prefix.md
    "Phases"), a scheduler's steps under the declared policies. lookup(tokens) -> id (with extra keys
    lookup(tokens, extra_key), as create's): a new waiting sequence whose prompt is tokens, its handle the next as a
    create's: its hit found as a create's but not held, no block taken, hit_rows unchanged (eviction=leaf: the runs
    it walks used, the one it ends inside split); never refused. admit(seq, count): waiting seq matches its prompt
    again (its lookup's hit may have been evicted since), holds that hit (hit_rows grows), then takes
    ceil(count / block_size) blocks into its table past its rows, free ones first, then as the policies evict (the hit
    is held first, so never evicted); IndexRefusal for a sequence that is not waiting or a negative count,
    CapacityRefusal, changing nothing, when free and evictable blocks other than the hit's are too few. Appends write
    into those blocks and only then register what fills. retract(seq): running seq lets go of its blocks, last first,
    without the insert of a release, and waits again, its prompt its tokens followed by the rest of its old prompt;
    IndexRefusal otherwise. abort(seq): a running or waiting seq ends, letting go as a retract does (the library ends
    its handle); IndexRefusal for a dead one. A waiting sequence refuses append, prefill, decode, fork, rollback and
    retract with IndexRefusal (release ends it) and shows no rows and no blocks; a fork shares only the blocks that
    hold rows. A create is a lookup and an admit of no rows at once.
    """

    kind = "prefix"
    supports_preempt = False
    supports_extra_keys = False
    config_defaults = SCALES
    PHASES = {"lookup": (("tokens",), ("extra_key",)), "admit": (("seq", "count"), ()), "retract": (("seq",), ()),
              "abort": (("seq",), ())}
    ops = dict(PagedAdapter.ops, create=(("tokens",), ("extra_key",)), append=(("seq", "k", "v", "tokens"), ()),
               prefill=(("seq", "k", "v", "tokens", "q"), ()), **PHASES)

    @classmethod
    def capabilities(cls):
        phased = all(callable(getattr(cls, op, None)) for op in cls.PHASES)  # one missing: NOT SUPPORTED, never half
        return super().capabilities() + (["extra_keys"] if cls.supports_extra_keys else []) + (
            ["phases"] if phased else [])

    def observed_counters(self):
        return {"free_blocks": self.free_blocks(), "evictable_blocks": self.evictable_blocks(),
                "hit_rows": self.hit_rows()}


class TieredAdapter(PrefixAdapter):
    """A prefix cache whose blocks are also copied to a host tier and optionally a disk tier, and back, by transfers
    that stay pending until the harness completes or fails them, in any order (docs/kinds/tiered.md). The config adds
    config["host_blocks"] (tier blocks on host), config["host_factor"] (device blocks per tier block: F = host_factor
    x block_size rows, tier block t of a sequence being its rows [t F, (t + 1) F)) and config["disk_blocks"] (0: no
    disk tier). Tier 0 is the device, 1 the host, 2 the disk.

    The device pool is PrefixAdapter's, without extra keys: create(tokens), whose tokens are the sequence's prompt
    that loads continue (a fork keeps its parent's), fork, release, append, decode, prefill and rollback, each refused
    with PendingRefusal on a sequence whose load is pending.

    Transfers are the cache's own ids (anything but None); the library maps the harness's transfer numbers to them as
    it maps handles to sequences, so a complete or fail naming a number that began no transfer receives None.
    store(seq, block, tier) -> id or None: begin copying tier block `block` of seq to the host (from its device blocks,
    held as a table holds them until the transfer ends) or the disk (from the ready host entry of that chain, pinned);
    None when the tier has that chain already, pending or ready (nothing copied). IndexRefusal (dead seq, negative
    block, no such tier), PendingRefusal (seq loading, or the block's rows not all written), EmptyRefusal (tier 2: no
    ready host entry), CapacityRefusal (no free slot and no evictable entry).
    load(seq, tier) -> id: begin copying the tier blocks that continue seq's prompt from its rows: from the host into
    device blocks past seq's rows, taken now into its table, or from the disk into pending host entries; it pins the
    entries it reads. IndexRefusal, PendingRefusal, EmptyRefusal (no tier block continues the prompt), CapacityRefusal.
    complete(id): the copy is done: a store's entry is ready, a host load's rows are seq's (registered as an append's),
    a disk load's host entries are ready. fail(id) -> the ids of the sequences it released: its destination dropped,
    its sources let go of; a load's sequence holds what it held before the load (load_failure=recompute: return
    nothing) or is released (abort: return [its id], answered as "preempted"). Both IndexRefusal for an id that is not
    pending (None too), complete OrderRefusal when completion_order=fifo forbids it.
    evict(tier, count): the count least recently used evictable device blocks (tier 0) or ready, unpinned entries
    (1, 2); IndexRefusal (no such tier, count < 1), CapacityRefusal (fewer evictable). put(tier, tokens, k, v): the rows
    of tokens, whole tier blocks, k and v 2-D with a row per token, straight into tier 1 or 2 as ready entries;
    IndexRefusal, ShapeRefusal, CapacityRefusal.

    Observation, besides prefix's (whose ref_counts() count a pending store's hold as a table's):
    pending_transfers(): (id, device blocks) of every pending transfer, as pairs or a dict (a host store's sources, a
    host load's destinations, none for the disk's); entries(tier): (chain, keys (F, d_k), values (F, d_v)) of every
    ready entry of tier 1 or 2, chain being every token up to the tier block's end, in any order (the library names
    the streams "host T0,T1,..." and "disk ..." and sorts them by chain); tier_counts(tier): {"free", "cached" (ready,
    unpinned), "pinned" (ready, read by a pending transfer), "pending" (being copied into), "hit_rows" (rows its loads
    brought: host to the device, disk to the host)}.
    """

    kind = "tiered"
    driver = TieredDriver
    config_fields = PrefixAdapter.config_fields + ("host_blocks", "host_factor")
    config_defaults = dict(SCALES, disk_blocks=0)
    ops = dict({op: fields for op, fields in PrefixAdapter.ops.items() if op not in PrefixAdapter.PHASES},
               create=(("tokens",), ()), store=(("seq", "block", "tier"), ()), load=(("seq", "tier"), ()),
               complete=(("transfer",), ()), fail=(("transfer",), ()), evict=(("tier", "count"), ()),
               put=(("tier", "tokens", "k", "v"), ()))
    TIER_COUNTS = ("free", "cached", "pinned", "pending", "hit_rows")

    @classmethod
    def capabilities(cls):  # no extra keys and no phases, whatever the prefix cache it builds on takes
        return [c for c in super().capabilities() if c not in ("extra_keys", "phases")]

    def tier_names(self):
        """(tier, name) of the tiers the config has: the host, and the disk when disk_blocks > 0."""
        return [(1, "host")] + ([(2, "disk")] if self.config["disk_blocks"] > 0 else [])

    def observed_counters(self):
        counters = super().observed_counters()
        for tier, name in self.tier_names():
            counts = self.tier_counts(tier)
            counters.update((f"{name}_{what}", counts[what]) for what in self.TIER_COUNTS)
        return counters


class RadixAdapter(PrefixAdapter):
    """SGLang's radix cache as a scheduler drives it (docs/kinds/radix.md): PrefixAdapter's pool of pages of
    config["block_size"] tokens under eviction=leaf and duplicates=adopted (a page that fills under a chain the tree
    holds is replaced in its table by the tree's page, its own going free; an allocation short of free pages evicts
    whole least recently used leaves no table holds), with prefix's phases always.

    create(tokens), fork(seq), release(seq), append(seq, k, v, tokens), decode, prefill and rollback (optional) as
    prefix's, without extra keys; lookup(tokens), admit(seq, count), retract(seq) and abort(seq) as PrefixAdapter's
    phases, required here. Counters: prefix's and protected_blocks(), the registered pages some table holds (locked).
    """

    kind = "radix"
    ops = dict(PrefixAdapter.ops, create=(("tokens",), ()), lookup=(("tokens",), ()))

    @classmethod
    def capabilities(cls):  # no extra keys, whatever the prefix cache it builds on takes; the phases are the kind's
        return [c for c in super().capabilities() if c not in ("extra_keys", "phases")]

    def observed_counters(self):
        return dict(super().observed_counters(), protected_blocks=self.protected_blocks())


class LatentAdapter(PagedAdapter):
    """Multi-head latent attention (docs/kinds/latent.md): a paged pool (without preemption) of rows [c ; k_r] of
    width config["d_k"] = d_c + d_r, whose first config["d_v"] = d_c entries are each row's value: the same storage,
    never a copy. config["k_scale"] is the one per-tensor scale of the rows (there is no v_scale).

    create(), fork(seq), release(seq) and rollback(seq, count) (optional) as paged's. append(seq, k): k 1-D or 2-D
    rows of width d_k (the kind's appends carry no values); CapacityRefusal when the pool lacks blocks. decode(seq, q, w_uk, w_uv)
    (optional): q (Hq, d_nope + d_r), each query head's q_nope then q_r, w_uk (Hq, d_nope, d_c), w_uv (Hq, d_vh, d_c);
    head h attends with s_i = (q_nope . W_uk[h] c_i + q_r . k_r,i) / sqrt(d_nope + d_r) and answers
    sum_i softmax(s)_i W_uv[h] c_i; return output (Hq, d_vh) and weights (Hq, n); ShapeRefusal for shapes that
    disagree (with each other, d_c or d_r), EmptyRefusal for a sequence without rows. keys(seq): its rows (n, d_k);
    values(seq): their first d_c entries as the decode reads them (n, d_c); prefill(seq, k, q, w_uk, w_uv)
    (optional): the append of k (m, d_k) (refused as that append), q (m, Hq, d_nope + d_r) with the decode's
    projections (else ShapeRefusal); step i's heads attend as a decode's over the rows up to its own; return output
    (m, Hq, d_vh) and weights (m, Hq, n + m), 0 where a step does not read; block_table(seq), ref_counts(),
    free_blocks(); bytes_in_use(): held blocks x block_size x d_k entries in the rows' format (no value storage).
    The profile must declare "latent_path", "absorbed" or "materialised" (the order the decode multiplies in), and
    "values" as "keys" when it declares a storage format.
    """

    kind = "latent"
    supports_preempt = False
    config_defaults = {"k_scale": SCALES["k_scale"]}
    ops = {"create": ((), ()), "fork": (("seq",), ()), "release": (("seq",), ()), "append": (("seq", "k"), ()),
           "decode": (("seq", "q", "w_uk", "w_uv"), ()), "prefill": (("seq", "k", "q", "w_uk", "w_uv"), ()),
           "rollback": (("seq", "count"), ())}


class BeamAdapter(Adapter):
    """config["layers"] L x config["batch"] B x config["heads"] H kv heads, config["capacity"] T
    positions per layer, head_dim D = config["d_k"] = config["d_v"], config["q_heads"] query heads.

    update(layer, start, k, v): k, v (B, H, n, D) written at positions [start, start + n) of layer;
    start below the length truncates first. IndexRefusal (layer, start < 0 or > length),
    ShapeRefusal, CapacityRefusal (start + n > T). reorder(index): row b of every layer becomes a
    copy of old row index[b] (a list of B ints; repeated rows must never alias); ShapeRefusal (not B
    of them), IndexRefusal. decode(layer, q, mask) (optional): q (B, Hq, D) with Hq a positive
    multiple of H, mask (B, len) or None; query head h reads kv head h // (Hq // H); mask 0 takes no
    weight, a fully masked row gives zeros; return output (B, Hq, D) and weights (B, Hq, len).
    keys(layer), values(layer): (B, H, len, D); length(layer); bytes(); bytes_per_token();
    max_batch_tokens(budget): the largest B x T that fits `budget` bytes.
    prefill(layer, k, v, q, mask) (optional): the update of k and v (B, H, m, D) at the layer's length (refused as
    that update), q (B, Hq, m, D) and mask (B, len + m) or None (else ShapeRefusal); query i of row b, query head h
    sits at position len + i and attends, through kv head h // (Hq // H), the positions up to its own that the mask
    does not hide; return output (B, Hq, m, D) and weights (B, Hq, m, len + m), 0 where a query does not see a
    position. Beam has no rollback op: an update below the length rolls back.
    """

    kind = "beam"
    driver = BeamDriver
    config_fields = ("capacity", "d_k", "d_v", "layers", "batch", "heads", "q_heads")
    ops = {"update": (("layer", "start", "k", "v"), ()), "reorder": (("index",), ()),
           "decode": (("layer", "q"), ("mask",)), "prefill": (("layer", "k", "v", "q"), ("mask",))}

    def observed_counters(self):
        counters = {f"layer {l} length": self.length(l) for l in range(self.config["layers"])}
        counters.update(bytes=self.bytes(), bytes_per_token=self.bytes_per_token(),
                        max_batch_tokens=self.max_batch_tokens(BEAM_MEMORY_BUDGET))
        return counters


class HybridAdapter(Adapter):
    """Decoder layers of several attention types, and optionally a cross-attention layer, over one pool of
    config["capacity"] blocks of config["block_size"] rows (docs/kinds/hybrid.md). config["layers"] decoder layers:
    with config["window"] W > 0, layer i is full when config["global_every"] > 0 and (i + 1) % global_every == 0, else
    sliding (the first config["keep"] rows and the last W - keep); the last config["shared"] read an earlier layer's
    rows (the last writing layer of their pattern type, else the last writing layer) and write nothing; with
    config["cross"] E > 0, layer number `layers` reads the E encoder rows given at create.

    create(k, v, tokens): the encoder's rows (E, d_k) and (E, d_v) (0 rows without a cross layer), in blocks of their
    own; ShapeRefusal, CapacityRefusal. With `supports_prefix = True` and config["prefix_caching"] (the capability
    "prefix"), the new sequence then holds the blocks live sequences hold for the longest whole-block prefix of
    `tokens` the full group has and whose window blocks the sliding group has; without, tokens may be ignored.
    fork(seq), release(seq) as paged. append(seq, k, v, tokens): k (writing layers, n, d_k), v (writing layers, n,
    d_v), a token per step (with prefix caching, ShapeRefusal for another count), the writing layers in layer order; at the new length the sliding group gives back
    the blocks that hold neither a sink nor a window row, then every group copies a shared, partly filled last
    block it writes into and takes what it lacks, or the append is CapacityRefusal with nothing changed.
    decode(seq, layer, q) (optional): over the rows the layer reads; IndexRefusal for a layer past the last.
    prefill(seq, k, v, tokens, q) (optional): the append, with q (layers, n, d_k) (else ShapeRefusal) holding each
    layer's query of each step, the cross layer's last; step i's query attends the rows its layer reads at row
    before + i: return (output, weights), output (layers * n * d_v) and per layer and step the weights over the rows
    the layer read before the prefill and the n new ones (the cross layer: its encoder rows), 0 where the query does
    not read; the window may free blocks only after the queries (docs/kinds/hybrid.md).
    keys(seq, layer), values(seq, layer): those rows, in order; block_table(seq, layer): the blocks its group holds,
    in row order, none for a shared layer; ref_counts(), free_blocks(), group_blocks(group) for group "full",
    "sliding" and "cross": the distinct blocks each holds.
    """

    kind = "hybrid"
    driver = HybridDriver
    config_fields = ("capacity", "block_size", "d_k", "d_v", "layers")
    config_defaults = dict(SCALES, window=0, keep=0, global_every=0, shared=0, cross=0, prefix_caching=False)
    ops = {"create": (("k", "v", "tokens"), ()), "fork": (("seq",), ()), "release": (("seq",), ()),
           "append": (("seq", "k", "v", "tokens"), ()), "decode": (("seq", "layer", "q"), ()),
           "prefill": (("seq", "k", "v", "tokens", "q"), ())}
    supports_prefix = False
    supports_sinks = True  # False for a cache without attention sinks (vLLM's): configs with keep > 0 unsupported

    @classmethod
    def capabilities(cls):
        return super().capabilities() + (["prefix"] if cls.supports_prefix else []) + (
            ["sinks"] if cls.supports_sinks else [])

    def supports(self, config):
        return (not config.get("prefix_caching") or self.supports_prefix) and (
            config.get("keep", 0) == 0 or self.supports_sinks)

    def observed_counters(self):
        counters = {"free_blocks": self.free_blocks()}
        counters.update({f"blocks_{g}": self.group_blocks(g) for g in ("full", "sliding", "cross")})
        return counters


class RecurrentAdapter(Adapter):
    """Linear-attention and state-space layers (docs/kinds/recurrent.md): per sequence a recurrent state of
    config["d_k"] x config["d_v"] and the last config["conv_width"] - 1 raw inputs of a causal convolution, advanced
    by every step; the decay form (Mamba-2) or, with config["delta"], the gated delta rule (Gated DeltaNet). Each step
    is a raw row x = [q | k | v] of width 2 d_k + d_v, a log decay g and, for the delta rule, a write strength beta;
    the convolution's taps are the kind's (tap 0 is 1, tap i > 0 of channel c is -1/2 when i + c is odd, else 1/4).
    The config carries no per-tensor scales. Sequences are the cache's own ids, mapped from handles as paged's.

    A hybrid model's attention layers sit beside the recurrent one: config["layers"] of them (0 when absent), each
    step carrying one row of keys (d_k) and values (d_v) per layer, kept per sequence and, once kept for good, in
    blocks of config["block_size"] steps of every layer, by prefix, in the same pool as the checkpoints.

    create(tokens): a new sequence resumed from the longest whole-block prefix of tokens whose checkpoint and every
    attention block below it the cache holds (none: empty), holding that prefix's state and the blocks' rows;
    fork(seq): an independent copy of everything (state, window, rows, tokens, droppable steps); release(seq): keeps
    the last append for good (publishing its checkpoints and blocks), then ends seq. append(seq, x, g, beta, k, v,
    tokens) -> outputs (n, d_v), any array, sent row-major: x 1-D (one step) or 2-D (n, 2 d_k + d_v), g n values,
    beta n values (delta rule) or empty (shape (0,); the decay form), k (layers, n, d_k) and v (layers, n, d_v) the
    attention layers' rows, a token per step; keeps seq's previous append for good first, then runs the steps, which
    stay droppable until the next append or the release; n = 0 changes nothing. ShapeRefusal for a width, rank or
    count that does not fit, x, k or v not finite, g above 0 or not finite, beta outside [0, 1] or given to the decay
    form; IndexRefusal for a sequence that is not live (None). rollback(seq, count) (optional): drop the newest count
    droppable steps, leaving exactly the state, window, rows and length of the sequence without them; IndexRefusal
    beyond the droppable steps (a cache that cannot restore a state must refuse, never accept and keep the drafts).
    evict(count): drop the count least recently used checkpoints and blocks (all, if fewer); IndexRefusal for
    count < 0. When steps are kept for good, at every block boundary (config["block_size"] steps) they crossed, in
    order, the attention layers' block of rows ending there and then the state there are published under the
    sequence's tokens up to it, each unless its chain is held (the first stays); the pool holds at most
    config["capacity"] of them, the least recently used (published or resumed from) evicted first.

    Observation: length(seq) (its steps); state(seq) (d_k, d_v); window(seq) (conv_width - 1, 2 d_k + d_v), the last
    raw rows oldest first, zeros before the first step (both may also be flat, row-major); hit_tokens() (the steps
    every create so far resumed); checkpoints(): (chain, state, window) of every checkpoint held, in any order (the
    library names the streams "checkpoint T0,T1,..." and sorts them by chain). With attention layers also rows(seq):
    (keys, values), (layers x length, d_k) and (layers x length, d_v), layer by layer; and blocks(): (chain, keys,
    values) of every block held, keys (layers x block_size, d_k), in any order.

    Policies a cache may declare in `policies`: "hit_limit" ("all", the default, or "all_but_last": a create resumes
    from at most all but its last token) and "checkpoint_at" ("every_block", the default, or "append_end": only where
    an append, less what a rollback dropped, ends on a block boundary).
    """

    kind = "recurrent"
    driver = RecurrentDriver
    config_fields = ("capacity", "block_size", "d_k", "d_v", "conv_width")
    config_defaults = {"delta": False, "layers": 0}
    ops = {"create": (("tokens",), ()), "fork": (("seq",), ()), "release": (("seq",), ()),
           "append": (("seq", "x", "g", "beta", "k", "v", "tokens"), ()), "rollback": (("seq", "count"), ()),
           "evict": (("count",), ())}


BEAM_MEMORY_BUDGET = 1 << 20  # bytes: the budget max_batch_tokens is observed for (docs/port-protocol.md §7)
KIND_BASES = (FlatAdapter, RingAdapter, GrowingAdapter, PagedAdapter, PrefixAdapter, BeamAdapter, HybridAdapter,
              LatentAdapter, TieredAdapter, RecurrentAdapter, RadixAdapter)
