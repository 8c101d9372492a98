// The op builders the generators share: appends (well-formed or with a shape error) and decodes of a row source.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "properties/generate/input_classes.h"
#include "properties/trace/trace.h"

namespace kvconform {

/// Where a generated op goes: its rows continue a stream at position `first` (several input
/// classes depend on the position), in sequence `seq` (paged; 0 for the other kinds).
struct op_target {
  std::shared_ptr<const row_source> src;
  std::int64_t first = 0;
  std::int64_t seq = 0;
};

/// An append of n rows of the target's input class; for n = 1, bit 0 of `ranks` makes k 1-D
/// and bit 1 makes v 1-D (mixed ranks are valid: both are one step).
op append_op(const op_target& t, std::size_t n, int ranks, std::uint64_t seed);
/// An append with shape error `variant` in [0, 6): a wrong key or value width, k and v that
/// differ in steps, rank 3, rank 0, or a 1-D k with a 2-row v.
op bad_shape_op(const op_target& t, int variant, std::uint64_t seed);
/// A prefill of n rows of the target's input class, each step's query the class's query.
op prefill_op(const op_target& t, std::size_t n, std::uint64_t seed);
/// A rollback of the target's sequence by `count` steps.
op rollback_op(const op_target& t, std::int64_t count);
/// A decode of the class's query; with `bad`, variant 0 has rank 2 and variant 1 the wrong width.
op decode_op(const op_target& t, bool bad, int variant);
/// Gives a decode or prefill at `position` the source's sink logits, one per head of `heads`, when the cache declares
/// learned sinks (docs/numerics.md §7.1); other ops and other caches are left as they are.
void attach_sinks(op& o, const row_source& src, std::int64_t position, std::size_t heads = 1);
/// Gives an append, prefill or decode whose first step is at `position` the source's indexer inputs when the cache
/// declares sparse top-k (docs/numerics.md §7.4): index keys shaped as k's steps, a prefill's and a decode's index
/// queries and weights.
void attach_index(op& o, const row_source& src, std::int64_t position);

}  // namespace kvconform
