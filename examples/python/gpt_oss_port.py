"""A kvconform port serving gpt-oss-style numpy attention (learned sinks, docs/numerics.md §7): a flat cache with a
sliding window, a paged cache and a hybrid cache of sliding and full layers; `--bug flat-sink-key0-bias` (or paged-,
hybrid-) serves the twin that adds the sink to key 0's score.

Usage: /usr/bin/python3 gpt_oss_port.py [--bug NAME] [--no-poison] [--no-digest]
"""
from kvconform_port import serve
from numpy_caches import gpt_oss

if __name__ == "__main__":
    serve("numpy-gpt-oss", [gpt_oss.SinksSlidingFlat, gpt_oss.GptOssPaged, gpt_oss.GptOssHybrid],
          {"flat-sink-key0-bias": gpt_oss.SinkKey0BiasFlat, "paged-sink-key0-bias": gpt_oss.SinkKey0BiasPaged,
           "hybrid-sink-key0-bias": gpt_oss.SinkKey0BiasHybrid})
