// The decode of one sequence of a block cache (paged, prefix): its refusals and its oracle problem.
#pragma once

#include <iterator>
#include <vector>

#include "oracle/models/model.h"
#include "oracle/numeric/numeric_profile.h"

namespace kvconform {

/// The expectation of a decode of sequence `o.seq` among `seqs` (handle -> a sequence with `rows`,
/// in handle order, which is the snapshot's stream order): refused for a sequence not live, a query
/// of another width than `d_k` or a sequence without rows; else the oracle's problem over its rows.
template <class Sequences>
expectation sequence_decode(const op& o, const Sequences& seqs, std::size_t d_k, const numeric_profile& p) {
  expectation e;
  auto refuse = [&](unsigned why) { e.accepted = false, e.reasons |= why; };
  const auto it = seqs.find(o.seq);
  if (it == seqs.end()) refuse(refuse_index);
  if (o.q.shape.size() != 1 || o.q.shape[0] != d_k) refuse(refuse_shape);
  if (it != seqs.end() && it->second.rows.size() == 0) refuse(refuse_empty);
  if (!e.accepted) return e;
  std::vector<double> q;
  for (double x : o.q.data) q.push_back(round_to(p.storage, x));
  add_decode(e, it->second.rows, static_cast<std::size_t>(std::distance(seqs.begin(), it)), std::move(q), p);
  return e;
}

}  // namespace kvconform
