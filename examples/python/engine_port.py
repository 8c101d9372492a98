"""A kvconform port serving one cache written to a real engine's design, declaring the policies that engine chose
(docs/design.md §2.4); `--undeclare POLICY` leaves one declaration out, to show that the gate then fails.

Usage: /usr/bin/python3 engine_port.py CACHE [--undeclare POLICY]... [--no-digest]
CACHE: vllm-prefix, vllm-prefix-eagle, sglang-prefix, vllm-hybrid, mlx-ring.
"""
import sys

from kvconform_port import serve
from engine_caches import mlx_ring, sglang_prefix, vllm_hybrid, vllm_prefix

CACHES = {"vllm-prefix": vllm_prefix.VllmPrefixCache, "vllm-prefix-eagle": vllm_prefix.VllmEaglePrefixCache,
          "sglang-prefix": sglang_prefix.SglangPrefixCache,
          "vllm-hybrid": vllm_hybrid.VllmHybridCache, "mlx-ring": mlx_ring.MlxRotatingCache}


def undeclared(cls, names):
    """cls with the policies `names` no longer declared (it still makes them)."""
    unknown = set(names) - set(cls.policies)
    if unknown:
        sys.exit(f"engine_port.py: {cls.__name__} declares no {sorted(unknown)} (it declares {sorted(cls.policies)})")
    return type(cls.__name__, (cls,), {"policies": {k: v for k, v in cls.policies.items() if k not in names}})


if __name__ == "__main__":
    args, drop = sys.argv[1:], []
    if not args or args[0] not in CACHES:
        sys.exit(f"usage: engine_port.py {{{','.join(CACHES)}}} [--undeclare POLICY]... [--no-digest]")
    cache = CACHES[args.pop(0)]
    while "--undeclare" in args:
        at = args.index("--undeclare")
        drop.append(args[at + 1] if at + 1 < len(args) else "")
        del args[at:at + 2]
    serve("engine-" + cache.__name__, [undeclared(cache, drop) if drop else cache], argv=args)
