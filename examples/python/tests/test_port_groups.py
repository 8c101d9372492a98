"""Unit tests of the kvconform_port library's storage formats: per-tensor scales in configs, group scales and
minima in observations of every kind, and no digests for a port that declares integer groups."""
import unittest

import numpy as np

import kvconform_port as kp
from kvconform_port import codec

GROUPS = "int8 g32 token sym scale=fp16"


class Grouped(kp.FlatAdapter):
    """One row of width 1, quantized as one group of scale 0.5; keeps the config's scales."""

    profile = {"keys": GROUPS, "values": "f64"}

    def __init__(self, config):
        super().__init__(config)
        self.rows = 0

    def append(self, k, v):
        self.rows += k.shape[0] if k.ndim == 2 else 1

    def keys(self):
        return np.ones((self.rows, 1))

    def values(self):
        return np.full((self.rows, 1), self.config["k_scale"] + self.config["v_scale"])

    def size(self):
        return self.rows

    def key_scales(self):
        return np.full((self.rows, 1), 0.5)


class Sequences(kp.PagedAdapter):
    """Sequence ids 10, 11, ...; each exposes its id as its one key scale and zero."""

    profile = {"keys": "int4 g32 token asym scale=fp16"}

    def __init__(self, config):
        super().__init__(config)
        self.next = 10

    def create(self):
        self.next += 1
        return self.next - 1

    def keys(self, sid):
        return np.zeros((0, 1))

    values = keys

    def block_table(self, sid):
        return []

    def ref_counts(self):
        return {}

    def free_blocks(self):
        return 1

    def bytes_in_use(self):
        return 0

    def key_scales(self, sid):
        return [float(sid)]

    key_zeros = key_scales


class Beam(kp.BeamAdapter):
    """Empty layers whose value scales name their stream."""

    def keys(self, layer):
        c = self.config
        return np.zeros((c["batch"], c["heads"], 0, c["d_k"]))

    values = keys

    def length(self, layer):
        return 0

    def bytes(self):
        return 0

    def bytes_per_token(self):
        return 1

    def max_batch_tokens(self, budget):
        return budget

    def value_scales(self, layer, row, head):
        return np.array([[100.0 * layer + 10.0 * row + head]])


class GroupsTest(unittest.TestCase):
    def setUp(self):
        self.ids = iter(range(1, 1000))

    def ask(self, port, op, **fields):
        answer = port.handle(dict(fields, id=next(self.ids), op=op))
        self.assertTrue(answer["ok"], answer)
        return answer

    def test_configs_carry_the_per_tensor_scales(self):
        port = kp.Port("p", [Grouped])
        config = {"kind": "flat", "capacity": 2, "d_k": 1, "d_v": 1}
        self.ask(port, "open", cache=1, config=config)
        self.ask(port, "open", cache=2, config=dict(config, k_scale=0.25, v_scale=4))  # a whole number may be an int
        for cache, value in ((1, 2.0), (2, 4.25)):
            self.ask(port, "append", cache=cache, k=codec.tensor([1.0]), v=codec.tensor([1.0]))
            self.assertEqual(self.ask(port, "observe", cache=cache)["streams"][0]["values"]["data"], [value])
        for bad in (0.0, 2.0 ** 41, "1", True, float("nan")):
            with self.assertRaises(kp.ProtocolError):
                port.handle({"id": 99, "op": "open", "cache": 3, "config": dict(config, k_scale=bad)})

    def test_group_scales_and_minima_are_observed_flat(self):
        port = kp.Port("p", [Grouped])
        self.ask(port, "open", cache=1, config={"kind": "flat", "capacity": 2, "d_k": 1, "d_v": 1})
        self.ask(port, "append", cache=1, k=codec.tensor([[1.0], [2.0]]), v=codec.tensor([[1.0], [2.0]]))
        stream = self.ask(port, "observe", cache=1)["streams"][0]
        self.assertEqual(stream["key_scales"], [0.5, 0.5])
        self.assertFalse({"key_zeros", "value_scales", "value_zeros"} & set(stream))  # None: not sent

    def test_a_port_declaring_groups_offers_no_digests(self):
        answer = self.ask(kp.Port("p", [Grouped]), "hello", protocol=2)
        self.assertEqual((answer["digest"], answer["kinds"]["flat"]["profile"]["keys"]), (False, GROUPS))
        self.assertFalse(Grouped.declares_groups() and kp.FlatAdapter.declares_groups())
        port = kp.Port("p", [Grouped])
        self.ask(port, "open", cache=1, config={"kind": "flat", "capacity": 2, "d_k": 1, "d_v": 1})
        self.assertIn("keys", self.ask(port, "observe", cache=1, digest=True)["streams"][0])

    def test_sequences_expose_groups_by_their_own_ids(self):
        port = kp.Port("p", [Sequences])
        self.ask(port, "open", cache=1, config={"kind": "paged", "capacity": 1, "block_size": 1, "d_k": 1, "d_v": 1})
        self.ask(port, "create", cache=1)
        self.ask(port, "create", cache=1)
        streams = self.ask(port, "observe", cache=1)["streams"]
        self.assertEqual([(s["name"], s["key_scales"], s["key_zeros"]) for s in streams],
                         [("seq 0", [10.0], [10.0]), ("seq 1", [11.0], [11.0])])

    def test_beam_streams_expose_groups_by_layer_row_and_head(self):
        port = kp.Port("p", [Beam])
        self.ask(port, "open", cache=1, config={"kind": "beam", "capacity": 1, "d_k": 1, "d_v": 1, "layers": 2,
                                                "batch": 2, "heads": 2, "q_heads": 2})
        streams = self.ask(port, "observe", cache=1)["streams"]
        self.assertEqual([(s["name"], s["value_scales"]) for s in streams][5], ("layer 1 row 0 head 1", [101.0]))
        self.assertEqual(len(streams), 8)


if __name__ == "__main__":
    unittest.main()
