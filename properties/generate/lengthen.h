// Lengthening a trace for the targeted numeric search: the kind table's `lengthen` entries of the kinds that share a
// model.
#pragma once

#include <optional>

#include "oracle/models/rows_model.h"
#include "properties/trace/trace.h"

namespace kvconform {

/// A rows kind (kind_descriptor::lengthen): an append of the rows right before the final decode; a
/// flat cache's capacity grows by them and by every earlier append's steps (so nothing before is
/// refused for room either), a window by them, a growing cache not at all.
std::optional<trace> rows_lengthen(const trace& t, const tensor& k, const tensor& v, rows_model::full rule);

/// A block pool (kind_descriptor::lengthen of paged, prefix): an append of the rows to the decoded
/// sequence right before the decode, with tokens of their own when the kind's appends carry them
/// (so that they extend no prefix another sequence holds); the pool grows by every block any append
/// of the trace could take, copies on write included, so nothing is refused for room and no
/// sequence is preempted.
std::optional<trace> pool_lengthen(const trace& t, const tensor& k, const tensor& v);

}  // namespace kvconform
