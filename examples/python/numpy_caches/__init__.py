"""Numpy KV caches of every kvconform kind, each an adapter of the kvconform_port library, with seeded-bug twins."""
