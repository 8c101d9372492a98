"""A numpy recurrent cache (recurrent kind): a state and convolution window per sequence and the rows of the attention
layers beside it, rollback of the last append, checkpoints and blocks of rows at block boundaries found again by prefix;
and twins breaking one rule each, after docs/kinds/recurrent.md's reports."""
import copy
import math

import numpy as np
from kvconform_port import IndexRefusal, RecurrentAdapter, ShapeRefusal

from .blocks import Sequences


def taps(width, channels):
    """The kind's convolution (docs/kinds/recurrent.md), row i multiplying x_{t-i}: 1 for the step itself, then
    -1/2 where i + c is odd and 1/4 elsewhere."""
    i, c = np.arange(width)[:, None], np.arange(channels)[None, :]
    return np.where(i == 0, 1.0, np.where((i + c) % 2 == 1, -0.5, 0.25))


def unit(u):
    norm = math.sqrt(float(u @ u))
    return u / norm if norm > 0 else u


class Head:
    """One recurrent head: the last width - 1 raw rows (oldest first) and the d_k x d_v state, in double, advanced a
    token at a time. step() rebinds its arrays, so a copy shares nothing with its original afterwards."""

    def __init__(self, d_k, d_v, width, delta):
        self.d_k, self.delta = d_k, delta
        self.conv = taps(width, 2 * d_k + d_v)
        self.window = np.zeros((width - 1, 2 * d_k + d_v))
        self.state = np.zeros((d_k, d_v))

    def copy(self):
        h = copy.copy(self)
        h.window, h.state = self.window.copy(), self.state.copy()
        return h

    def step(self, x, g, beta):
        """One token: raw row x, log decay g, write strength beta (None for the decay form); returns S^T q."""
        rows = np.vstack([self.window, x[None]])
        xc = np.zeros(x.shape[0])
        for i in range(rows.shape[0]):
            xc += self.conv[i] * rows[-1 - i]
        self.window = rows[1:]  # raw inputs, exact: the convolution never writes them
        d = self.d_k
        q, k, v = xc[:d], xc[d:2 * d], xc[2 * d:]
        a = math.exp(g)
        if self.delta:
            q, k = unit(q), unit(k)
            self.state = a * (self.state - beta * np.outer(k, k @ self.state)) + beta * np.outer(k, v)
        else:
            self.state = a * self.state + np.outer(k, v)
        return q @ self.state


class Sequence:
    def __init__(self, head, layers, d_k, d_v):
        self.now, self.committed = head, head.copy()  # committed: before the last append, which rollback replays
        self.tokens, self.droppable = [], 0
        self.keys, self.values = np.zeros((layers, 0, d_k)), np.zeros((layers, 0, d_v))  # the attention layers' rows
        self.x = self.g = self.beta = None  # the last append's inputs, copied
        self.pending = {}  # boundary -> the head at it, published when the last append is kept for good


class Checkpoint:
    def __init__(self, head, used):
        self.head, self.used = head, used


class Block:
    """One block of steps of every attention layer: keys (layers, block_size, d_k), values likewise."""

    def __init__(self, keys, values, used):
        self.keys, self.values, self.used = keys, values, used


class RecurrentCache(RecurrentAdapter):
    """Sequences of a recurrent head and attention rows each; an append keeps the previous one for good (publishing
    the blocks of rows and the states at the block boundaries it crossed) and stays droppable itself; a rollback
    replays the kept steps from the state before it. Checkpoints and blocks are held by chain, at most `capacity` of
    them together, least recently used evicted first."""

    def __init__(self, config):
        super().__init__(config)
        self.d_k, self.d_v, self.block = config["d_k"], config["d_v"], config["block_size"]
        self.width, self.delta, self.capacity = config["conv_width"], config["delta"], config["capacity"]
        self.seqs = Sequences()
        self.layers = config["layers"]
        self.store = {}  # chain (a tuple of tokens) -> Checkpoint
        self.held_blocks = {}  # chain -> Block, in the same pool
        self.clock = self.hits = 0

    def fresh(self):
        return Head(self.d_k, self.d_v, self.width, self.delta)

    def tick(self):
        self.clock += 1
        return self.clock

    def create(self, tokens):
        seq = Sequence(self.fresh(), self.layers, self.d_k, self.d_v)
        for end in range(len(tokens) // self.block * self.block, 0, -self.block):
            cp = self.store.get(tuple(tokens[:end]))
            if cp is not None and self.covered(tokens, end):
                found = self.blocks_below(tokens, end)
                if found:
                    for b in found:
                        b.used = self.tick()
                    seq.keys = np.concatenate([b.keys for b in found], axis=1)
                    seq.values = np.concatenate([b.values for b in found], axis=1)
                self.resume(seq, cp)
                seq.tokens, cp.used = list(tokens[:end]), self.tick()
                self.hits += end
                break
        return self.seqs.add(seq)

    def blocks_below(self, tokens, end):
        """The held attention blocks of tokens from the first up to end, stopping at the first one missing."""
        found = []
        for e in range(self.block, end + 1, self.block) if self.layers else ():
            if tuple(tokens[:e]) not in self.held_blocks:
                break
            found.append(self.held_blocks[tuple(tokens[:e])])
        return found

    def covered(self, tokens, end):
        """Whether every attention block below end is held (a hit is the shortest over the state and the blocks)."""
        return not self.layers or len(self.blocks_below(tokens, end)) == end // self.block

    def resume(self, seq, cp):
        seq.now, seq.committed = cp.head.copy(), cp.head.copy()

    def fork(self, sid):
        return self.seqs.add(copy.deepcopy(self.seqs.get(sid)))

    def release(self, sid):
        self.commit(self.seqs.get(sid))
        del self.seqs.live[sid]

    def steps(self, x, g, beta, k, v, tokens):
        """The append's x as (n, 2 d_k + d_v); ShapeRefusal for anything the Ops table refuses so."""
        ch = 2 * self.d_k + self.d_v
        if x.shape == (ch,):
            x = x.reshape(1, ch)
        if x.ndim != 2 or x.shape[1] != ch:
            raise ShapeRefusal(f"x must be 1-D ({ch}) or 2-D (n, {ch}), got shape {x.shape}")
        n = x.shape[0]
        if g.shape != (n,) or len(tokens) != n:
            raise ShapeRefusal(f"{n} steps need g of shape ({n},) and {n} tokens, got {g.shape} and {len(tokens)}")
        if self.delta and beta.shape != (n,):
            raise ShapeRefusal(f"the delta rule needs beta of shape ({n},), got {beta.shape}")
        if not self.delta and beta.ndim != 0 and beta.shape != (0,):  # the model reads rank 0 as no beta too
            raise ShapeRefusal(f"the decay form takes no beta, got shape {beta.shape}")
        if not np.isfinite(g).all() or (g > 0).any():
            raise ShapeRefusal("g must be finite and at most 0")
        if self.delta and not ((beta >= 0) & (beta <= 1)).all():
            raise ShapeRefusal("beta must lie within [0, 1]")
        if not np.isfinite(x).all():
            raise ShapeRefusal("x must be finite")
        if k.shape != (self.layers, n, self.d_k) or v.shape != (self.layers, n, self.d_v):
            raise ShapeRefusal(f"k and v must be ({self.layers}, {n}, d), got {k.shape} and {v.shape}")
        if not (np.isfinite(k).all() and np.isfinite(v).all()):
            raise ShapeRefusal("k and v must be finite")
        return x

    def append(self, sid, x, g, beta, k, v, tokens):
        x = self.steps(x, g, beta, k, v, tokens)
        seq = self.seqs.get(sid)
        if x.shape[0] == 0:
            return np.zeros((0, self.d_v))
        self.commit(seq)
        seq.keys = np.concatenate([seq.keys, k], axis=1)
        seq.values = np.concatenate([seq.values, v], axis=1)
        seq.x, seq.g = x.copy(), g.copy()
        seq.beta = beta.copy() if self.delta else None
        seq.tokens += tokens
        seq.droppable = x.shape[0]
        return self.advance(seq, seq.droppable)

    def advance(self, seq, n):
        """Runs the first n steps of the last append from seq.now, keeping the head at each boundary they reach."""
        at = len(seq.tokens) - seq.droppable
        out = np.empty((n, self.d_v))
        for i in range(n):
            out[i] = seq.now.step(seq.x[i], float(seq.g[i]), None if seq.beta is None else float(seq.beta[i]))
            at += 1
            if at % self.block == 0:
                seq.pending[at] = seq.now.copy()
        return out

    def rollback(self, sid, count):
        seq = self.seqs.get(sid)
        if not 0 <= count <= seq.droppable:
            raise IndexRefusal(f"cannot drop {count} steps: {seq.droppable} of the last append are droppable")
        if count == 0:
            return
        seq.droppable -= count
        del seq.tokens[len(seq.tokens) - count:]
        seq.keys, seq.values = seq.keys[:, :len(seq.tokens)], seq.values[:, :len(seq.tokens)]
        seq.pending, seq.now = {}, seq.committed.copy()
        self.advance(seq, seq.droppable)

    def commit(self, seq):
        """The last append is kept for good: at each boundary it crossed, in order, the block of rows ending there and
        then the head there are published."""
        for at in sorted(seq.pending):
            if self.layers:
                self.publish_block(seq, at)
            self.publish(tuple(seq.tokens[:at]), seq.pending[at])
        seq.pending, seq.committed, seq.droppable = {}, seq.now.copy(), 0

    def publish(self, chain, head):
        if chain in self.store:  # the first stays
            return
        self.make_room()
        self.store[chain] = Checkpoint(head, self.tick())

    def publish_block(self, seq, end):
        chain = tuple(seq.tokens[:end])
        if chain in self.held_blocks:  # the first stays
            return
        self.make_room()
        rows = slice(end - self.block, end)
        self.held_blocks[chain] = Block(seq.keys[:, rows].copy(), seq.values[:, rows].copy(), self.tick())

    def make_room(self):
        if len(self.store) + len(self.held_blocks) >= self.capacity:
            self.evict_oldest()

    def evict_oldest(self):
        pool = [(e.used, d, chain) for d in (self.store, self.held_blocks) for chain, e in d.items()]
        _, d, chain = min(pool, key=lambda e: e[0])
        del d[chain]

    def evict(self, count):
        if count < 0:
            raise IndexRefusal(f"cannot evict {count} checkpoints")
        for _ in range(min(count, len(self.store) + len(self.held_blocks))):
            self.evict_oldest()

    # The observation.

    def length(self, sid):
        return len(self.seqs.get(sid).tokens)

    def state(self, sid):
        return self.seqs.get(sid).now.state

    def window(self, sid):
        return self.seqs.get(sid).now.window

    def hit_tokens(self):
        return self.hits

    def checkpoints(self):
        return [(chain, cp.head.state, cp.head.window) for chain, cp in self.store.items()]

    def rows(self, sid):
        seq = self.seqs.get(sid)
        return seq.keys.reshape(-1, self.d_k), seq.values.reshape(-1, self.d_v)

    def blocks(self):
        return [(chain, b.keys.reshape(-1, self.d_k), b.values.reshape(-1, self.d_v))
                for chain, b in self.held_blocks.items()]


class RollbackNoOpRecurrent(RecurrentCache):
    """Seeded bug (docs/mutants.md, recurrent-rollback-no-op; mlx-lm #846): a rollback lowers the length and keeps
    the drafts' state and window."""

    def rollback(self, sid, count):
        kept = self.seqs.get(sid).now
        super().rollback(sid, count)
        self.seqs.get(sid).now = kept


class RollbackKeepsWindowRecurrent(RecurrentCache):
    """Seeded bug (docs/mutants.md, recurrent-rollback-keeps-window; mlx-lm PR #1486): a rollback restores the state
    but the convolution window keeps the drafts' rows."""

    def rollback(self, sid, count):
        kept = self.seqs.get(sid).now.window
        super().rollback(sid, count)
        self.seqs.get(sid).now.window = kept


class PublishBeforeAcceptRecurrent(RecurrentCache):
    """Seeded bug (docs/mutants.md, recurrent-publish-before-accept; vLLM #53912): the boundaries an append crosses
    are published as it runs, before its drafts are accepted, so a rollback leaves rejected steps' checkpoints."""

    def append(self, sid, x, g, beta, k, v, tokens):
        out = super().append(sid, x, g, beta, k, v, tokens)
        seq = self.seqs.get(sid)
        for at, head in seq.pending.items():
            self.publish(tuple(seq.tokens[:at]), head)
        return out


class ForkSharesStateRecurrent(RecurrentCache):
    """Seeded bug (recurrent-fork-shares-state): a fork copies the tokens and the bookkeeping but shares its source's
    head, so a step of either moves the other's state and window."""

    def fork(self, sid):
        child = super().fork(sid)
        self.seqs.live[child].now = self.seqs.get(sid).now
        return child


class ResumeSharesCheckpointRecurrent(RecurrentCache):
    """Seeded bug (docs/mutants.md, recurrent-resume-shares-checkpoint; vLLM PR #57908): a resumed sequence runs in
    its checkpoint's own head, so its steps change what every later hit resumes from."""

    def resume(self, seq, cp):
        seq.now, seq.committed = cp.head, cp.head.copy()


class HitPastAttentionBlocksRecurrent(RecurrentCache):
    """Seeded bug (docs/mutants.md, recurrent-hit-past-attention-blocks; vLLM PR #46281): a create resumes from the
    state's longest checkpoint though an attention block below it is missing; the rows it has stop short of its
    length."""

    def covered(self, tokens, end):
        return True
