"""Drivers: requests to adapter calls and back (docs/port-protocol.md §5, §6), and observations (§7, §8)."""
import operator

import numpy as np

from . import codec
from .arrays import snapshot, to_numpy
from .digest import stream_digest, stream_digests
from .refusals import Unsupported, reason_of

_INTEGERS = {"seq", "layer", "start", "count", "extra_key", "tier", "block", "transfer"}
_INTEGER_LISTS = {"index", "tokens"}
_NO_ID = object()  # a handle whose create or fork was refused


class Refused(Exception):
    """An adapter's refusal, with its protocol reason and message."""

    def __init__(self, reason, message):
        super().__init__(message)
        self.reason, self.message = reason, message


def integers_of(values, what):
    """Integers an adapter returned (numpy integers too, but no floats or booleans)."""
    values = list(values)
    if all(type(x) is int for x in values):
        return values
    out = []
    for x in values:
        if isinstance(x, (bool, np.bool_)):
            raise TypeError(f"{what}: expected integers, got {x!r}")
        out.append(operator.index(x))
    return out


def stream(name, keys, values, digest, positions=None, blocks=None, groups=None):
    """One observed stream: rows in full (§7) or as rows and digest (§8); blocks in full either way.
    groups: {"key_scales": array, ...}, the integer groups the adapter exposes, sent with full rows."""
    keys, values = np.asarray(to_numpy(keys), dtype=np.float64), np.asarray(to_numpy(values), dtype=np.float64)
    if keys.ndim != 2 or values.ndim != 2 or keys.shape[0] != values.shape[0]:
        raise ValueError(f"stream {name!r}: keys and values must be 2-D with as many rows each, "
                         f"got shapes {keys.shape} and {values.shape}")
    out = {"name": name}
    pos = None if positions is None else integers_of(positions, f"stream {name!r} positions")
    if digest:
        out.update(rows=keys.shape[0], digest=stream_digest(keys, values, () if pos is None else pos))
    else:
        out.update(keys=codec.tensor(keys), values=codec.tensor(values))
        if pos is not None:
            out["positions"] = pos
        for field, numbers in (groups or {}).items():
            out[field] = codec.numbers(to_numpy(numbers))
    if blocks is not None:
        out["blocks"] = integers_of(blocks, f"stream {name!r} blocks")
    return out


def counters(values):
    """An adapter's counters as JSON integers."""
    names = list(values)
    return dict(zip(names, integers_of((values[n] for n in names), "counters")))


def decode_answer(result):
    """A decode's (output, weights), flattened row-major."""
    output, weights = result
    return {"output": codec.numbers(to_numpy(output)), "weights": codec.numbers(to_numpy(weights))}


class Driver:
    """Calls the adapter method an op names with the op's fields in the order the kind lists them.
    Arrays handed over are read-only during the call when `guard` is set, and every input is kept
    in `inputs` for the port to poison afterwards (§9). An adapter's `array_in` converts each array
    handed over; as other array types may ignore numpy's read-only flag, their bits are compared instead."""

    def __init__(self, adapter, inputs, guard):
        self.adapter, self.inputs, self.guard = adapter, inputs, guard
        self.watched = []  # (field, array handed over, its bits before the call)

    def apply(self, op, request):
        """The answer fields of an accepted op; raises Refused, Unsupported or ProtocolError."""
        if op not in self.adapter.ops:
            raise Unsupported(f"a {self.adapter.kind} cache has no op {op!r}")
        method = getattr(self.adapter, op, None)
        if method is None:
            raise Unsupported(f"{type(self.adapter).__name__} does not implement {op!r}")
        try:
            return self.call(op, method, self.arguments(op, request))
        finally:  # a write into an input is a bug even in a call that was refused
            self.check_unwritten(op)

    def check_unwritten(self, op):
        watched, self.watched = self.watched, []
        for field, given, before in watched:
            if before is not None and snapshot(given) != before:
                raise ValueError(f"{op}: the cache wrote into its input {field}, which is read-only during the call "
                                 "(docs/port-protocol.md §9)")

    def arguments(self, op, request):
        required, optional = self.adapter.ops[op]
        unknown = set(request) - {"id", "op", "cache", *required, *optional}
        missing = [f for f in required if f not in request]
        if unknown or missing:
            raise codec.ProtocolError(f"{op}: unknown fields {sorted(unknown)} or missing fields {missing}")
        return [self.parse(f, request[f]) if f in request else None for f in required + optional]

    def parse(self, field, value):
        if field in _INTEGERS:
            return codec.integer(value, field)
        if field in _INTEGER_LISTS:
            out = codec.integers(value, field)
        else:
            out = codec.array_from(value, field)
            convert = type(self.adapter).array_in  # from the class: a plain function must not bind as a method
            if convert is not None:
                self.inputs.append(out)  # poisoned afterwards, so a converted array sharing its memory shows it
                given = convert(out)
                if self.guard:
                    self.watched.append((field, given, snapshot(given)))
                return given
            out.flags.writeable = not self.guard
        self.inputs.append(out)
        return out

    def invoke(self, method, *args):
        """The adapter's call, its exceptions mapped to refusals (others escape: a bug of the cache)."""
        try:
            return method(*args)
        except Unsupported:
            raise
        except Exception as e:  # noqa: BLE001 - mapped by class, or re-raised
            reason = reason_of(e, self.adapter.refusals)
            if reason is None:
                raise
            raise Refused(reason, str(e) or type(e).__name__) from e

    def call(self, op, method, args):
        result = self.invoke(method, *args)
        return decode_answer(result) if op in ("decode", "prefill") else {}


class RowsDriver(Driver):
    """flat, ring, growing: one stream named "" with the held rows (and positions, for ring)."""

    def observe(self, digest):
        a = self.adapter
        return {"streams": [stream("", a.keys(), a.values(), digest, positions=a.observed_positions(),
                                   groups=a.groups())],
                "counters": counters(a.observed_counters())}


class Handles:
    """Harness handles (0-based count of create, fork and lookup requests, refused ones included) and the
    adapter's ids. A handle that names no sequence maps to None; a released one keeps its id unless
    the cache gave that id to a live sequence since (then None), so no id of a live sequence ever
    reaches the cache for a handle that is not it."""

    def __init__(self):
        self.ids, self.live = [], []

    def issue(self):
        self.ids.append(_NO_ID)
        self.live.append(False)

    def give(self, sid):
        if sid is None:
            raise TypeError("create, fork and lookup must return the new sequence's id, not None")
        self.ids[-1], self.live[-1] = sid, True

    def id_of(self, h):
        if not 0 <= h < len(self.ids) or self.ids[h] is _NO_ID:
            return None
        sid = self.ids[h]
        if not self.live[h] and any(live and other == sid for other, live in zip(self.ids, self.live)):
            return None
        return sid

    def released(self, h):
        if 0 <= h < len(self.ids):
            self.live[h] = False

    def released_id(self, sid):
        """The live handle of `sid`, now released (preemption); -1, which no model expects, if none."""
        for h, (other, live) in enumerate(zip(self.ids, self.live)):
            if live and other == sid:
                self.live[h] = False
                return h
        return -1

    def each_live(self):
        return [(h, sid) for h, (sid, live) in enumerate(zip(self.ids, self.live)) if live]


class SequenceDriver(Driver):
    """paged, prefix, latent, radix: handles to ids and back; one stream "seq H" per live handle, and block_refs. A
    prefix lookup names the next handle as a create does, and an accepted abort ends its handle as a release does
    (docs/kinds/prefix.md "Phases")."""

    def __init__(self, adapter, inputs, guard):
        super().__init__(adapter, inputs, guard)
        self.handles = Handles()

    def call(self, op, method, args):
        if op in ("create", "lookup") and len(args) > 1:  # a create's or lookup's extra key, if the cache takes it
            key = args.pop() or 0
            if getattr(self.adapter, "supports_extra_keys", False):
                args.append(key)
            elif key != 0:
                raise Unsupported(f"{type(self.adapter).__name__} takes no extra keys (supports_extra_keys)")
        if op in ("create", "fork", "lookup"):
            if op == "fork":
                args[0] = self.handles.id_of(args[0])
            self.handles.issue()  # used up even if the cache refuses
            self.handles.give(self.invoke(method, *args))
            return {}
        handle = args[0]
        args[0] = self.handles.id_of(handle)
        result = self.invoke(method, *args)
        if op in ("release", "abort"):
            self.handles.released(handle)
        if op == "decode":
            return decode_answer(result)
        if op == "prefill":  # (output, weights), or (output, weights, preempted ids)
            answer = decode_answer(result[:2])
            if len(result) > 2 and result[2]:
                answer["preempted"] = [self.handles.released_id(sid) for sid in result[2]]
            return answer
        if op == "append" and result:  # the ids an append preempted
            return {"preempted": [self.handles.released_id(sid) for sid in result]}
        return {}

    def observe(self, digest):
        a = self.adapter
        streams = [stream(f"seq {h}", a.keys(sid), a.values(sid), digest, blocks=a.block_table(sid),
                          groups=a.groups(sid))
                   for h, sid in self.handles.each_live()]
        counts = a.ref_counts()
        refs = sorted(zip(integers_of(counts.keys(), "ref_counts"), integers_of(counts.values(), "ref_counts")))
        return {"streams": streams, "counters": counters(a.observed_counters()),
                "block_refs": [[b, n] for b, n in refs if n != 0]}


class Transfers(Handles):
    """Harness transfer numbers (tiered: the 0-based count of store and load requests, refused ones and stores that
    copied nothing included) mapped to the cache's transfer ids as Handles maps sequences: a number that began no
    transfer maps to None; an ended one keeps its id unless the cache gave that id to a pending transfer since."""

    def give(self, tid):
        if tid is not None:  # a store that copied nothing began no transfer
            super().give(tid)

    ended = Handles.released

    def number_of(self, tid):
        """The pending number of the cache's transfer `tid`; -1, which no model shows, for one no op began."""
        return next((n for n, (other, live) in enumerate(zip(self.ids, self.live)) if live and other == tid), -1)


class TieredDriver(SequenceDriver):
    """tiered: prefix's sequences, and transfers by number; after the "seq H" streams, one "transfer N" per pending
    transfer (no rows, its device blocks) in number order, then one "host T0,T1,..." per ready host entry and one
    "disk ..." per ready disk entry, each in the order of their chains."""

    def __init__(self, adapter, inputs, guard):
        super().__init__(adapter, inputs, guard)
        self.transfers = Transfers()

    def call(self, op, method, args):
        if op in ("store", "load"):
            args[0] = self.handles.id_of(args[0])
            self.transfers.issue()  # used up even if the cache refuses
            tid = self.invoke(method, *args)
            if tid is None and op == "load":
                raise TypeError("load must return the id of the transfer it began, not None")
            self.transfers.give(tid)
            return {}
        if op in ("complete", "fail"):
            number = args[0]
            released = self.invoke(method, self.transfers.id_of(number))
            self.transfers.ended(number)
            if op == "fail" and released:  # load_failure=abort: the load's sequence, answered as a preemption
                return {"preempted": [self.handles.released_id(sid) for sid in released]}
            return {}
        if op in ("evict", "put"):
            self.invoke(method, *args)
            return {}
        return super().call(op, method, args)

    def observe(self, digest):
        out = super().observe(digest)
        a, c = self.adapter, self.adapter.config
        no_k, no_v = np.zeros((0, c["d_k"])), np.zeros((0, c["d_v"]))
        transfers = dict(a.pending_transfers()).items()
        pending = sorted(((self.transfers.number_of(tid), blocks) for tid, blocks in transfers), key=lambda x: x[0])
        out["streams"] += [stream(f"transfer {n}", no_k, no_v, digest, blocks=blocks) for n, blocks in pending]
        for tier, name in a.tier_names():
            entries = sorted(((integers_of(chain, f"{name} entry chain"), k, v) for chain, k, v in a.entries(tier)),
                             key=lambda e: e[0])
            out["streams"] += [stream(f"{name} " + ",".join(map(str, chain)), k, v, digest) for chain, k, v in entries]
        return out


def _rows(a, shape, what):
    """An adapter's state or window as `shape`: given so, or flat row-major (as the C++ concept takes them); another
    shape is refused rather than reshaped, as a transposed state would read as a wrong one. Rows of -1: any number of
    rows of that width (attention rows, whose count the gate judges)."""
    a = np.asarray(to_numpy(a), dtype=np.float64)
    rows, width = shape
    if rows < 0:
        if not (a.ndim == 2 and a.shape[1] == width or a.ndim == 1 and a.size % width == 0):
            raise ValueError(f"{what}: expected shape (n, {width}) or a multiple of {width} values, got {a.shape}")
        return a.reshape(-1, width)
    if a.shape != shape and (a.ndim != 1 or a.size != rows * width):
        raise ValueError(f"{what}: expected shape {shape} or {rows * width} values, got shape {a.shape}")
    return a.reshape(shape)


class RecurrentDriver(SequenceDriver):
    """recurrent: sequences by handle; an append answers its outputs; per live handle the streams "seq H state" and
    "seq H window", each with values of no columns, and with attention layers "seq H rows"; then per checkpoint, in
    the order of the chains, "checkpoint T0,T1,... state" and "... window", and per attention block "block T0,T1,...
    rows" (docs/kinds/recurrent.md); no block_refs."""

    def call(self, op, method, args):
        if op == "evict":  # names no sequence
            self.invoke(method, *args)
            return {}
        if op != "append":
            return super().call(op, method, args)
        args[0] = self.handles.id_of(args[0])
        output = self.invoke(method, *args)
        return {"output": [] if output is None else codec.numbers(to_numpy(output))}

    def observe(self, digest):
        a, c = self.adapter, self.adapter.config
        streams, counts = [], {}

        def head(name, state, window):
            state = _rows(state, (c["d_k"], c["d_v"]), f"{name} state")
            window = _rows(window, (c["conv_width"] - 1, 2 * c["d_k"] + c["d_v"]), f"{name} window")
            streams.append(stream(f"{name} state", state, np.zeros((c["d_k"], 0)), digest))
            streams.append(stream(f"{name} window", window, np.zeros((window.shape[0], 0)), digest))

        def rows(name, keys, values):  # every attention layer's rows, layer by layer: however many, the gate counts
            keys = _rows(keys, (-1, c["d_k"]), f"{name} keys")
            values = _rows(values, (-1, c["d_v"]), f"{name} values")
            streams.append(stream(f"{name} rows", keys, values, digest))

        live = self.handles.each_live()
        for h, sid in live:
            head(f"seq {h}", a.state(sid), a.window(sid))
            if c["layers"]:
                rows(f"seq {h}", *a.rows(sid))
            counts[f"length {h}"] = a.length(sid)
        held = sorted(((integers_of(chain, "checkpoint chain"), state, window)
                       for chain, state, window in a.checkpoints()), key=lambda e: e[0])
        for chain, state, window in held:
            head("checkpoint " + ",".join(map(str, chain)), state, window)
        counts.update(sequences=len(live), checkpoints=len(held), hit_tokens=a.hit_tokens())
        if c["layers"]:
            blocks = sorted(((integers_of(chain, "block chain"), keys, values) for chain, keys, values in a.blocks()),
                            key=lambda e: e[0])
            for chain, keys, values in blocks:
                rows("block " + ",".join(map(str, chain)), keys, values)
            counts["blocks"] = len(blocks)
        return {"streams": streams, "counters": counters(counts)}


class HybridDriver(SequenceDriver):
    """hybrid: a create carries the encoder's rows, not a handle; one stream "seq H layer L" per live handle and
    layer, and block_refs."""

    def call(self, op, method, args):
        if op == "create":
            self.handles.issue()  # used up even if the cache refuses
            self.handles.give(self.invoke(method, *args))
            return {}
        return super().call(op, method, args)

    def observe(self, digest):
        a, c = self.adapter, self.adapter.config
        layers = c["layers"] + (1 if c["cross"] > 0 else 0)
        streams = [stream(f"seq {h} layer {l}", a.keys(sid, l), a.values(sid, l), digest, blocks=a.block_table(sid, l))
                   for h, sid in self.handles.each_live() for l in range(layers)]
        counts = a.ref_counts()
        refs = sorted(zip(integers_of(counts.keys(), "ref_counts"), integers_of(counts.values(), "ref_counts")))
        return {"streams": streams, "counters": counters(a.observed_counters()),
                "block_refs": [[b, n] for b, n in refs if n != 0]}


class BeamDriver(Driver):
    """beam: one stream per (layer, row, kv head), layer outer, from keys(layer) (B, H, len, D)."""

    def observe(self, digest):
        a, c = self.adapter, self.adapter.config
        streams = []
        for layer in range(c["layers"]):
            keys = np.asarray(to_numpy(a.keys(layer)), dtype=np.float64)
            values = np.asarray(to_numpy(a.values(layer)), dtype=np.float64)
            want = (c["batch"], c["heads"])
            if keys.ndim != 4 or values.ndim != 4 or keys.shape[:2] != want or values.shape[:2] != want:
                raise ValueError(f"keys({layer}) and values({layer}) must be (B, H, len, D) with (B, H) = {want}, "
                                 f"got {keys.shape} and {values.shape}")
            where = [(layer, b, h) for b in range(c["batch"]) for h in range(c["heads"])]
            names = ["layer %d row %d head %d" % w for w in where]
            keys, values = keys.reshape(len(names), *keys.shape[2:]), values.reshape(len(names), *values.shape[2:])
            if digest:  # one vectorised pass over the layer's streams, all of one shape
                streams += [{"name": n, "rows": keys.shape[1], "digest": d}
                            for n, d in zip(names, stream_digests(keys, values))]
            else:
                streams += [stream(n, k, v, False, groups=a.groups(*w))
                            for n, k, v, w in zip(names, keys, values, where)]
        return {"streams": streams, "counters": counters(a.observed_counters())}
