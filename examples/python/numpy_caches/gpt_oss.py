"""gpt-oss-style attention in numpy (docs/numerics.md §7): learned sinks, on a flat cache's sliding window, a paged
cache's sequences and a hybrid cache's sliding and full layers, and twins that add the sink to key 0's score instead
(vLLM PR #49815's other semantics)."""
import numpy as np

from kvconform_port import EmptyRefusal, ShapeRefusal

from .common import causal, queries, steps
from .flat import FlatCache
from .hybrid import HybridCache
from .paged import PagedCache

WINDOW = 8  # rows a query reads, its own counted; quick traces pass it (gpt-oss's is 128)


def sink_logits(sinks, heads=1):
    """The sink logit of each of `heads` heads; ShapeRefusal for anything but a 1-D array of that many."""
    if sinks.ndim != 1 or sinks.shape[0] != heads:
        raise ShapeRefusal(f"sinks must be 1-D of {heads} logits, got shape {sinks.shape}")
    return [float(x) for x in sinks]


def attend_with_sink(keys, values, q, sink, key0_bias=False):
    """w = e^(s - m) / (e^(sink - m) + sum e^(s - m)), output = w V: the sink joins the normaliser with no value. With
    `key0_bias` the sink is added to key 0's score instead and has no term of its own (the twin's bug)."""
    if q.ndim != 1 or q.shape[0] != keys.shape[1]:
        raise ShapeRefusal(f"q must be 1-D of width {keys.shape[1]}, got shape {q.shape}")
    if keys.shape[0] == 0:
        raise EmptyRefusal("decode over no rows")
    s = keys @ q / np.sqrt(keys.shape[1])
    if key0_bias:
        s[0] += sink
        p = np.exp(s - s.max())
        w = p / p.sum()
    else:
        m = max(s.max(), sink)
        p = np.exp(s - m)
        w = p / (p.sum() + np.exp(sink - m))
    return w @ values, w


class SinksSlidingFlat(FlatCache):
    """A flat cache whose decode reads the last WINDOW rows with a learned sink, as gpt-oss's sliding layers do."""

    profile = {"attention": {"sinks": "learned", "window": f"sliding {WINDOW}"}}
    key0_bias = False

    def window_attend(self, position, q, sink):
        """The query at `position` over the rows p - WINDOW < r <= p; weights over rows 0 .. position."""
        first = max(0, position - WINDOW + 1)
        keys, values = self.keys()[first:position + 1], self.values()[first:position + 1]
        out, w = attend_with_sink(keys, values, q, sink, self.key0_bias)
        weights = np.zeros(position + 1)
        weights[first:] = w
        return out, weights

    def decode(self, q, sinks):
        if q.ndim != 1 or q.shape[0] != self.d_k:
            raise ShapeRefusal(f"q must be 1-D of width {self.d_k}, got shape {q.shape}")
        sink = sink_logits(sinks)[0]
        if self.size() == 0:
            return super().decode(q)  # refused as empty, as the plain cache refuses it
        return self.window_attend(self.size() - 1, q, sink)

    def prefill(self, k, v, q, sinks):
        q = queries(q, steps(k, v, self.d_k, self.d_v)[0].shape[0], self.d_k)
        sink = sink_logits(sinks)[0]
        before = self.size()
        self.append(k, v)
        out, weights = np.zeros((q.shape[0], self.d_v)), np.zeros((q.shape[0], self.size()))
        for i in range(q.shape[0]):
            out[i], weights[i, :before + i + 1] = self.window_attend(before + i, q[i], sink)
        return out, weights


class SinkKey0BiasFlat(SinksSlidingFlat):
    """Seeded bug (docs/mutants.md, flat-sink-key0-bias): the sink added to key 0's score."""

    key0_bias = True


class GptOssPaged(PagedCache):
    """gpt-oss's full-attention layers on a block pool: every sequence's decode and prefill with a learned sink."""

    profile = {"attention": {"sinks": "learned"}}
    key0_bias = False

    def decode(self, sid, q, sinks):
        seq = self.seqs.get(sid)  # an unknown sequence is refused as such first
        sink = sink_logits(sinks)[0]
        return attend_with_sink(*self.pool.rows(seq.table, seq.length), q, sink, self.key0_bias)

    def prefill(self, sid, k, v, q, sinks):
        before = self.checked_prefill(sid, k, q)
        sink = sink_logits(sinks)[0]
        preempted = self.append(sid, k, v)
        seq = self.seqs.get(sid)
        out, weights = causal(lambda keys, values, qi: attend_with_sink(keys, values, qi, sink, self.key0_bias),
                              *self.pool.rows(seq.table, seq.length), q, before)
        return out, weights, preempted


class SinkKey0BiasPaged(GptOssPaged):
    """Seeded bug (docs/mutants.md, flat-sink-key0-bias, on a paged cache): the sink added to key 0's score."""

    key0_bias = True


class GptOssHybrid(HybridCache):
    """gpt-oss's layers: sliding and full (the config's window and pattern), every head with a learned sink."""

    profile = {"attention": {"sinks": "learned"}}
    key0_bias = False
    _sinks = {}

    def attend_layer(self, layer, keys, values, q):
        return attend_with_sink(keys, values, q, self._sinks[layer], self.key0_bias)

    def decode(self, sid, layer, q, sinks):
        self._sinks = {layer: sink_logits(sinks)[0]}
        return super().decode(sid, layer, q)

    def prefill(self, sid, k, v, tokens, q, sinks):
        self._sinks = dict(enumerate(sink_logits(sinks, len(self.plan))))
        return super().prefill(sid, k, v, tokens, q)


class SinkKey0BiasHybrid(GptOssHybrid):
    """Seeded bug (docs/mutants.md, flat-sink-key0-bias, on a hybrid cache): the sink added to key 0's score."""

    key0_bias = True
