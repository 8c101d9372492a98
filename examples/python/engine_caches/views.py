"""What the engines' block-pool caches show the harness, read through their own structures: `table(sid)` (block ids
in row order) and `length(sid)` (rows) over a numpy_caches BlockPool `pool`; and a prefill as an append then its
causal attentions."""
from numpy_caches.common import attend, causal, queries


class TableViews:
    def rows(self, sid):
        return self.pool.rows(self.table(sid), self.length(sid))

    def decode(self, sid, q):
        return attend(*self.rows(sid), q)

    def prefill(self, sid, k, v, tokens, q):
        before = self.length(sid)
        queries(q, k.shape[0] if k.ndim == 2 else 1, self.d_k)
        self.append(sid, k, v, tokens)
        return causal(attend, *self.rows(sid), q, before)

    def keys(self, sid):
        return self.rows(sid)[0]

    def values(self, sid):
        return self.rows(sid)[1]

    def block_table(self, sid):
        return list(self.table(sid))
