"""kvconform_port: write a kvconform port (docs/port-protocol.md) as one adapter class per kind, then serve() it."""
from .adapters import (BEAM_MEMORY_BUDGET, Adapter, BeamAdapter, FlatAdapter, GrowingAdapter, HybridAdapter,
                       LatentAdapter, PagedAdapter, PrefixAdapter, RadixAdapter, RecurrentAdapter, RingAdapter,
                       TieredAdapter)
from .arrays import to_numpy
from .codec import ProtocolError
from .digest import digest_words, stream_digest
from .glue import CowBlocks, HitRows, free_and_evictable, undo_on_refusal
from .protocol import POISON, PROTOCOL, Port, run, serve
from .refusals import (CapacityRefusal, EmptyRefusal, IndexRefusal, OrderRefusal, PendingRefusal, Refusal,
                       ShapeRefusal, Unsupported)
from .program import ProgramNotFound, find_program
from .testing import conformance

__all__ = ["conformance", "find_program", "ProgramNotFound", "Adapter", "FlatAdapter", "RingAdapter", "GrowingAdapter", "PagedAdapter", "PrefixAdapter", "BeamAdapter",
           "HybridAdapter", "LatentAdapter", "TieredAdapter", "RecurrentAdapter", "RadixAdapter",
           "BEAM_MEMORY_BUDGET", "Refusal", "CapacityRefusal", "ShapeRefusal", "EmptyRefusal", "IndexRefusal",
           "PendingRefusal", "OrderRefusal",
           "Unsupported", "ProtocolError", "Port", "run", "serve", "PROTOCOL", "POISON", "digest_words",
           "stream_digest", "CowBlocks", "free_and_evictable", "HitRows", "undo_on_refusal", "to_numpy"]
