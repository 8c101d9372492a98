"""python/README.md's table of what each adapter calls agrees with the library: every kind's base has a row, its ops
and optional ones are the class's ops, and every observation it names is one the library calls."""
import pathlib
import re
import unittest

import kvconform_port.adapters as adapters

PACKAGE = pathlib.Path(adapters.__file__).resolve().parent
README = pathlib.Path(__file__).resolve().parents[3] / "python" / "README.md"


def table():
    rows = {}
    for line in README.read_text().splitlines():
        m = re.fullmatch(r"\| `(\w+Adapter)` \| ([^|]*) \| ([^|]*) \| ([^|]*) \|", line)
        if m:
            rows[m[1]] = [set(filter(None, (name.strip() for name in cell.split(",")))) for cell in m.groups()[1:]]
    return rows


class AdapterTable(unittest.TestCase):
    def test_every_kind_has_a_row(self):
        self.assertEqual(set(table()), {cls.__name__ for cls in adapters.KIND_BASES})

    def test_ops_are_the_class_ops(self):
        for name, (ops, observations, optional) in table().items():
            cls = getattr(adapters, name)
            with self.subTest(adapter=name):
                self.assertEqual(ops | (optional & set(cls.ops)), set(cls.ops))
                self.assertFalse(ops & optional)

    def test_observations_are_called(self):
        source = "".join(p.read_text() for p in (PACKAGE / "adapters.py", PACKAGE / "drivers.py"))
        called = set(re.findall(r"\b(?:self|a)\.(\w+)\(", source))
        for name, (ops, observations, optional) in table().items():
            with self.subTest(adapter=name):
                self.assertLessEqual(observations | (optional - set(getattr(adapters, name).ops)), called)


if __name__ == "__main__":
    unittest.main()
