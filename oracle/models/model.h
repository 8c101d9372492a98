// The executable specification: a model per cache kind decides every expected outcome.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "oracle/numeric/attention_problem.h"
#include "oracle/numeric/numeric_profile.h"
#include "properties/trace/refusal.h"
#include "properties/trace/trace.h"

namespace kvconform {

/// What the model says an op must do. A refused op changes nothing in the model.
struct expectation {
  bool accepted = true;
  unsigned reasons = refuse_none;           ///< acceptable refusal reasons when !accepted
  std::vector<attention_problem> problems;  ///< a decode: one problem per output block
  std::vector<std::int64_t> preempted;      ///< paged: handles an accepted append must preempt
};

/// The model interface the executor drives. Each kind implements it with plain, obviously
/// correct state; its inputs are rounded to the implementation's storage format first.
class model {
 public:
  virtual ~model() = default;
  virtual expectation apply(const op& o) = 0;
  virtual snapshot observe() const = 0;
};

/// Steps of a well-formed append: k and v 1-D (one step) or 2-D (rows are steps) of widths
/// d_k and d_v with as many steps each; nullopt otherwise.
std::optional<std::size_t> append_steps(const op& o, std::size_t d_k, std::size_t d_v);
/// Step i of a well-formed 1-D or 2-D k or v, rounded to the storage format as a cache stores it.
std::vector<double> stored_row(const tensor& t, std::size_t i, precision storage);
/// The oracle's problem for a decode of q (1-D, width d_k) over exact rows in order.
template <class Rows>
attention_problem decode_problem(const Rows& keys, const Rows& values, const tensor& q, std::size_t d_v,
                                 precision storage) {
  attention_problem p;
  p.n = keys.size(), p.d_k = q.data.size(), p.d_v = d_v;
  for (const auto& k : keys) p.keys.insert(p.keys.end(), k.begin(), k.end());
  for (const auto& v : values) p.values.insert(p.values.end(), v.begin(), v.end());
  for (double x : q.data) p.q.push_back(round_to(storage, x));
  return p;
}

}  // namespace kvconform
