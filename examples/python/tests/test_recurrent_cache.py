"""Unit tests of the numpy recurrent cache on docs/kinds/recurrent.md's rules, of the bugs its twins seed, and of the
library's recurrent observation."""
import unittest

import numpy as np

import kvconform_port as kp
from numpy_caches import recurrent

# d_k = d_v = 1: rows [q, k, v]; a window of one row; checkpoints every 2 steps, at most 2 of them.
CONFIG = {"capacity": 2, "block_size": 2, "d_k": 1, "d_v": 1, "conv_width": 2, "delta": False, "layers": 0}
NO_BETA = np.zeros(0)


def no_rows(n):
    """k and v of n steps without attention layers."""
    return np.zeros((0, n, 1)), np.zeros((0, n, 1))


def cache(cls=recurrent.RecurrentCache, **config):
    return cls(dict(CONFIG, **config))


def steps(c, s, n, tokens=None, first=1.0):
    """n steps of no decay with rows [t, t + 1, 1] from t = first, tokens 0, 1, 2, ... unless given."""
    x = np.array([[first + i, first + i + 1, 1.0] for i in range(n)]).reshape(n, 3)
    k = v = np.arange(first, first + n, dtype=float).reshape(1, n, 1).repeat(c.layers, axis=0)
    return c.append(s, x, np.zeros(n), NO_BETA, k, -v, list(range(n)) if tokens is None else tokens)


def head(c, s):
    return c.state(s).ravel().tolist(), c.window(s).ravel().tolist(), c.length(s)


class RecurrentCacheTest(unittest.TestCase):
    def test_worked_example(self):
        c = cache()
        s = c.create([])
        # Taps: 1 for the step, then (-1/2, 1/4, -1/2) on the row before. Step 1: S = 2 * 3, o = 1 * 6. Step 2:
        # convolved [2 - 1/2, 4 + 1/2, 1 - 3/2], S = 6 + 4.5 * -0.5 = 3.75, o = 1.5 * 3.75.
        out = c.append(s, np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 1.0]]), np.zeros(2), NO_BETA, *no_rows(2), [7, 8])
        self.assertEqual(out.ravel().tolist(), [6.0, 5.625])
        self.assertEqual(head(c, s), ([3.75], [2.0, 4.0, 1.0], 2))

    def test_refusals_change_nothing(self):
        c = cache()
        s = c.create([])
        steps(c, s, 1)
        before = head(c, s)
        row, g = np.ones((1, 3)), np.zeros(1)
        for x, gs, beta, tokens in ((np.ones((1, 4)), g, NO_BETA, [1]), (row, np.array([0.5]), NO_BETA, [1]),
                                    (row, g, np.array([0.5]), [1]), (row, g, NO_BETA, []),
                                    (np.array([[np.inf, 0, 0]]), g, NO_BETA, [1])):
            with self.assertRaises(kp.ShapeRefusal):
                c.append(s, x, gs, beta, *no_rows(1), tokens)
        with self.assertRaises(kp.ShapeRefusal):  # the rows of an attention layer the config has not
            c.append(s, row, g, NO_BETA, np.ones((1, 1, 1)), np.ones((1, 1, 1)), [1])
        d = cache(delta=True)
        with self.assertRaises(kp.ShapeRefusal):  # beta outside [0, 1] for the delta rule
            d.append(d.create([]), row, g, np.array([1.5]), *no_rows(1), [1])
        for op in (lambda: c.rollback(s, 2), lambda: c.evict(-1), lambda: c.fork(None)):
            with self.assertRaises(kp.IndexRefusal):
                op()
        self.assertEqual(head(c, s), before)

    def test_rollback_leaves_the_accepted_steps(self):
        for cls, same in ((recurrent.RecurrentCache, (True, True)), (recurrent.RollbackNoOpRecurrent, (False, False)),
                          (recurrent.RollbackKeepsWindowRecurrent, (True, False))):
            accepted, c = cache(), cache(cls)
            a, s = accepted.create([]), c.create([])
            steps(accepted, a, 1)
            steps(c, s, 3)  # one step and two drafts, both rejected
            c.rollback(s, 1)
            c.rollback(s, 1)
            got, want = head(c, s), head(accepted, a)
            self.assertEqual((got[0] == want[0], got[1] == want[1], got[2]), same + (1,), cls)
            with self.assertRaises(kp.IndexRefusal):  # only the last append's steps are droppable
                c.rollback(s, 2)
            steps(c, s, 1, first=2.0)  # the next step continues from the accepted state
            steps(accepted, a, 1, first=2.0)
            self.assertEqual(head(c, s) == head(accepted, a), cls is recurrent.RecurrentCache, cls)

    def test_checkpoints_follow_acceptance(self):
        for cls, early in ((recurrent.RecurrentCache, 0), (recurrent.PublishBeforeAcceptRecurrent, 1)):
            c = cache(cls)
            s = c.create([])
            steps(c, s, 3, [5, 6, 7])  # crosses the boundary at 2
            self.assertEqual(len(c.checkpoints()), early, cls)
            c.rollback(s, 2)  # drops it: nothing to publish
            c.release(s)
            self.assertEqual(len(c.checkpoints()), early, cls)
        c = cache()
        s = c.create([])
        steps(c, s, 4, [5, 6, 7, 8])
        c.release(s)
        self.assertEqual(sorted(chain for chain, _, _ in c.checkpoints()), [(5, 6), (5, 6, 7, 8)])

    def test_create_resumes_from_the_longest_held_prefix_and_eviction_is_lru(self):
        c = cache()
        s = c.create([])
        steps(c, s, 4, [5, 6, 7, 8])
        c.release(s)
        t = c.create([5, 6, 7, 9])  # (5, 6) held, (5, 6, 7, 9) not
        self.assertEqual((c.length(t), c.hit_tokens()), (2, 2))
        steps(c, t, 2, [7, 9])
        c.release(t)  # publishes (5, 6, 7, 9), evicting (5, 6, 7, 8): (5, 6) was used by the create
        self.assertEqual(sorted(chain for chain, _, _ in c.checkpoints()), [(5, 6), (5, 6, 7, 9)])
        c.evict(5)
        self.assertEqual(c.checkpoints(), [])

    def test_a_resumed_sequence_leaves_its_checkpoint(self):
        for cls, kept in ((recurrent.RecurrentCache, True), (recurrent.ResumeSharesCheckpointRecurrent, False)):
            c = cache(cls)
            s = c.create([])
            steps(c, s, 2, [5, 6])
            c.release(s)
            before = c.checkpoints()[0][1].tolist()
            steps(c, c.create([5, 6]), 1, [7], first=3.0)
            self.assertEqual(c.checkpoints()[0][1].tolist() == before, kept, cls)

    def test_a_fork_is_independent(self):
        for cls, isolated in ((recurrent.RecurrentCache, True), (recurrent.ForkSharesStateRecurrent, False)):
            c = cache(cls)
            s = c.create([])
            steps(c, s, 1)
            f = c.fork(s)
            before = head(c, f)
            steps(c, s, 1, first=2.0)
            self.assertEqual(head(c, f) == before, isolated, cls)
            c.rollback(f, 1)  # the fork has its source's droppable steps
            self.assertEqual(c.length(f), 0)

    def test_a_hit_is_the_shortest_over_the_state_and_the_attention_blocks(self):
        for cls, hit in ((recurrent.RecurrentCache, 0), (recurrent.HitPastAttentionBlocksRecurrent, 4)):
            c = cache(cls, layers=1, capacity=4)
            s = c.create([])
            steps(c, s, 4, [5, 6, 7, 8])
            c.rollback(s, 1)
            self.assertEqual(c.rows(s)[0].ravel().tolist(), [1.0, 2.0, 3.0], cls)  # the rows follow the rollback
            steps(c, s, 1, [9], first=4.0)
            c.release(s)  # in order: block (5, 6), checkpoint (5, 6), block (5, 6, 7, 9), checkpoint (5, 6, 7, 9)
            self.assertEqual(sorted(chain for chain, _, _ in c.blocks()), [(5, 6), (5, 6, 7, 9)], cls)
            c.evict(1)  # block (5, 6): both checkpoints stay, and neither has every block below it
            t = c.create([5, 6, 7, 9])
            self.assertEqual((c.length(t), len(c.rows(t)[0])), (hit, 0), cls)


class RecurrentPortTest(unittest.TestCase):
    def test_observation_streams_counters_and_output(self):
        port, ids = kp.Port("p", [recurrent.RecurrentCache]), iter(range(1, 100))

        def ask(op, **fields):
            return port.handle(dict(fields, id=next(ids), op=op, cache=1))

        self.assertTrue(ask("open", config=dict(CONFIG, kind="recurrent"))["ok"])
        ask("create", tokens=[])
        rows = {"shape": [2, 3], "data": [1.0, 2.0, 3.0, 2.0, 4.0, 1.0]}
        answer = ask("append", seq=0, x=rows, g={"shape": [2], "data": [0.0, 0.0]}, beta={"shape": [0], "data": []},
                     k={"shape": [0, 2, 1], "data": []}, v={"shape": [0, 2, 1], "data": []}, tokens=[7, 8])
        self.assertEqual(answer["output"], [6.0, 5.625])
        ask("release", seq=0)
        ask("create", tokens=[7, 8])
        seen = ask("observe")
        self.assertEqual([(s["name"], s["keys"]["shape"], s["values"]["shape"]) for s in seen["streams"]],
                         [("seq 1 state", [1, 1], [1, 0]), ("seq 1 window", [1, 3], [1, 0]),
                          ("checkpoint 7,8 state", [1, 1], [1, 0]), ("checkpoint 7,8 window", [1, 3], [1, 0])])
        self.assertEqual(seen["counters"], {"length 1": 2, "sequences": 1, "checkpoints": 1, "hit_tokens": 2})
        self.assertEqual(ask("rollback", seq=1, count=1)["error"], "index")  # a resumed sequence has no drafts


if __name__ == "__main__":
    unittest.main()
