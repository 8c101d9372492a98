"""Caches written to the designs real engines chose where the kvconform contract lets them differ (docs/design.md
§2.4), each declaring its policies: vLLM v1's block pool and hybrid allocator, SGLang's radix cache, mlx-lm's
rotating cache."""
