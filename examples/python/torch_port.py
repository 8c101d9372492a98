"""A kvconform port of torch caches (flat and paged) whose storage is float64 tensors: arrays arrive as tensors sharing
the harness's memory (`array_in = torch.from_numpy`), and the caches answer with tensors.

Usage: /usr/bin/python3 torch_port.py [--no-poison] [--no-digest]
"""
import math

import torch

from kvconform_port import CapacityRefusal, EmptyRefusal, FlatAdapter, IndexRefusal, PagedAdapter, ShapeRefusal, serve


def steps(k, v, d_k, d_v):
    """k and v as 2-D (n, width) tensors, each given 1-D (one step) or 2-D (n steps); ShapeRefusal otherwise."""
    def rows(a, width, name):
        if a.ndim in (1, 2) and a.shape[-1] == width:
            return a.reshape(-1, width)
        raise ShapeRefusal(f"{name} must be 1-D ({width}) or 2-D (n, {width}), got shape {tuple(a.shape)}")
    k, v = rows(k, d_k, "k"), rows(v, d_v, "v")
    if len(k) != len(v):
        raise ShapeRefusal(f"k has {len(k)} steps and v {len(v)}")
    return k, v


def attend(keys, values, q):
    """softmax(K q / sqrt(d_k)) V and its weights, the maximum subtracted first."""
    if q.ndim != 1 or q.shape[0] != keys.shape[1]:
        raise ShapeRefusal(f"q must be 1-D of width {keys.shape[1]}, got shape {tuple(q.shape)}")
    if len(keys) == 0:
        raise EmptyRefusal("decode of an empty cache")
    s = keys @ q / math.sqrt(keys.shape[1])
    p = torch.exp(s - s.max())
    w = p / p.sum()
    return w @ values, w


def causal(keys, values, q, before):
    """A prefill's attentions: query i over the first before + i + 1 rows; weights 0 beyond them."""
    m = q.shape[0]
    out, weights = torch.zeros(m, values.shape[1], dtype=torch.float64), torch.zeros(m, before + m, dtype=torch.float64)
    for i in range(m):
        out[i], weights[i, :before + i + 1] = attend(keys[:before + i + 1], values[:before + i + 1], q[i])
    return out, weights


def check_queries(q, m, d_k):
    if q.ndim != 2 or tuple(q.shape) != (m, d_k):
        raise ShapeRefusal(f"q must be 2-D ({m}, {d_k}), got shape {tuple(q.shape)}")


def check_rollback(count, held):
    if not 0 <= count <= held:
        raise IndexRefusal(f"cannot roll back {count} of {held} steps")


class TorchFlat(FlatAdapter):
    """Up to `capacity` steps in preallocated tensors, filled in append order."""

    array_in = torch.from_numpy

    def __init__(self, config):
        super().__init__(config)
        self.d_k, self.d_v = config["d_k"], config["d_v"]
        self.k = torch.full((config["capacity"], self.d_k), math.nan, dtype=torch.float64)
        self.v = torch.full((config["capacity"], self.d_v), math.nan, dtype=torch.float64)
        self.n = 0

    def append(self, k, v):
        k, v = steps(k, v, self.d_k, self.d_v)
        if self.n + len(k) > len(self.k):
            raise CapacityRefusal(f"{self.n} + {len(k)} steps exceed the capacity {len(self.k)}")
        self.k[self.n:self.n + len(k)], self.v[self.n:self.n + len(k)] = k, v  # copies
        self.n += len(k)

    def decode(self, q):
        return attend(self.keys(), self.values(), q)

    def prefill(self, k, v, q):
        check_queries(q, len(steps(k, v, self.d_k, self.d_v)[0]), self.d_k)
        before = self.n
        self.append(k, v)
        return causal(self.keys(), self.values(), q, before)

    def rollback(self, count):
        check_rollback(count, self.n)
        self.n -= count

    def keys(self):
        return self.k[:self.n]

    def values(self):
        return self.v[:self.n]

    def size(self):
        return self.n


class TorchPaged(PagedAdapter):
    """Sequences hold tables of blocks of one pool tensor; a fork shares every block, and an append into a shared,
    partly filled last block copies it first. No preemption."""

    array_in = torch.from_numpy

    def __init__(self, config):
        super().__init__(config)
        self.bs, self.d_k, self.d_v = config["block_size"], config["d_k"], config["d_v"]
        self.pk = torch.full((config["capacity"], self.bs, self.d_k), math.nan, dtype=torch.float64)
        self.pv = torch.full((config["capacity"], self.bs, self.d_v), math.nan, dtype=torch.float64)
        self.refs = [0] * config["capacity"]
        self.free = list(range(config["capacity"] - 1, -1, -1))  # pop() takes the lowest
        self.seqs, self.next_id = {}, 0  # id -> [table, length]; ids never reused

    def seq(self, sid):
        if not isinstance(sid, int) or sid not in self.seqs:
            raise IndexRefusal(f"no live sequence {sid!r}")
        return self.seqs[sid]

    def add(self, table, length):
        self.seqs[self.next_id] = [list(table), length]
        self.next_id += 1
        return self.next_id - 1

    def take(self):
        block = self.free.pop()
        self.refs[block] += 1
        return block

    def drop(self, block):
        self.refs[block] -= 1
        if self.refs[block] == 0:
            self.free.append(block)

    def create(self):
        return self.add([], 0)

    def fork(self, sid):
        table, length = self.seq(sid)
        for b in table:
            self.refs[b] += 1
        return self.add(table, length)

    def release(self, sid):
        for b in self.seq(sid)[0]:
            self.drop(b)
        del self.seqs[sid]

    def append(self, sid, k, v):
        try:
            k, v = steps(k, v, self.d_k, self.d_v)
        except ShapeRefusal:
            self.seq(sid)  # an unknown sequence is refused as such first
            raise
        s = self.seq(sid)
        table, length = s
        n = len(k)
        if n == 0:
            return
        cow = length % self.bs != 0 and self.refs[table[-1]] > 1
        if -(-(length + n) // self.bs) - len(table) + cow > len(self.free):
            raise CapacityRefusal(f"the pool has {len(self.free)} free blocks, too few for {n} more rows")
        if cow:
            own = self.take()
            self.pk[own], self.pv[own] = self.pk[table[-1]], self.pv[table[-1]]
            self.drop(table[-1])
            table[-1] = own
        while len(table) * self.bs < length + n:
            table.append(self.take())
        rows = torch.arange(length, length + n)
        blocks = torch.tensor(table)[rows // self.bs]
        self.pk[blocks, rows % self.bs], self.pv[blocks, rows % self.bs] = k, v
        s[1] = length + n

    def rows(self, sid):
        table, length = self.seq(sid)
        index = torch.tensor(table, dtype=torch.long)
        return self.pk[index].reshape(-1, self.d_k)[:length], self.pv[index].reshape(-1, self.d_v)[:length]

    def decode(self, sid, q):
        return attend(*self.rows(sid), q)

    def prefill(self, sid, k, v, q):
        before = self.seq(sid)[1]
        check_queries(q, k.shape[0] if k.ndim == 2 else 1, self.d_k)
        self.append(sid, k, v)
        return causal(*self.rows(sid), q, before)

    def rollback(self, sid, count):
        s = self.seq(sid)
        check_rollback(count, s[1])
        s[1] -= count
        while len(s[0]) * self.bs >= s[1] + self.bs:  # blocks wholly past the new end leave the table
            self.drop(s[0].pop())

    def keys(self, sid):
        return self.rows(sid)[0]

    def values(self, sid):
        return self.rows(sid)[1]

    def block_table(self, sid):
        return list(self.seq(sid)[0])

    def ref_counts(self):
        return {b: n for b, n in enumerate(self.refs) if n}

    def free_blocks(self):
        return len(self.free)

    def bytes_in_use(self):
        return (len(self.refs) - len(self.free)) * self.bs * (self.d_k + self.d_v) * 8


if __name__ == "__main__":
    serve("torch-caches", [TorchFlat, TorchPaged])
