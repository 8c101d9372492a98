// What a kind's fuzz strategy is written against: bounded integers from bytes, and structured ops sized from a model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "oracle/numeric/numeric_profile.h"
#include "properties/generate/input_classes.h"
#include "properties/trace/trace.h"

namespace kvconform {

namespace fuzz {
/// Limits that keep one fuzz input cheap enough for >= 1000 exec/s under sanitizers.
inline constexpr std::size_t max_capacity = 32, max_dim = 16, max_ops = 24, max_values = 4096;
}  // namespace fuzz

/// The one primitive of the fuzz byte format: an integer in [lo, hi]. The reader takes it from
/// the input; the writer records `value` (clamped) so that reading gives it back. Every config
/// field and literal op field is visited through it in a fixed order, for both directions.
class byte_io {
 public:
  virtual ~byte_io() = default;
  virtual std::uint64_t range(std::uint64_t lo, std::uint64_t hi, std::uint64_t value) = 0;
};

/// A kind's structured ops: sizes and handles drawn from a model that follows the trace, so that
/// appends land on capacity, window and block boundaries and ops name live sequences, with rows of
/// the input's class. The base reads the class and its anchor, and has the draws every kind uses.
class fuzz_ops {
 public:
  fuzz_ops(byte_io& io, const cache_config& c);
  virtual ~fuzz_ops() = default;
  /// A structured op of kind-specific flavour `which` in [1, 5].
  virtual op make(int which) = 0;
  /// Keeps the model in step with every op of the trace, literal ones included.
  virtual void follow(const op& o) = 0;

 protected:
  /// One of `choices`.
  std::size_t pick(const std::vector<std::size_t>& choices);
  std::uint64_t seed();
  /// n rows of the class at positions [first, first + n) as k and v; one row is 1-D half the time.
  void rows_of(op& o, std::int64_t first, std::size_t n);
  /// A wrong key or value width, a step mismatch, or one rank more.
  void break_shape(op& o);
  /// The append `o` as a prefill of its steps, each with the class's query.
  void as_prefill(op& o);

  byte_io& io_;
  cache_config c_;
  std::unique_ptr<row_source> src_;
};

/// A kind's structured ops whose model is a `Model`: the model follows every op but decodes (a
/// decode changes nothing, and building its attention problem would cost as much as the run).
template <class Model>
class model_fuzz_ops : public fuzz_ops {
 public:
  template <class... Rule>
  model_fuzz_ops(byte_io& io, const cache_config& c, Rule... rule)
      : fuzz_ops(io, c), model_(c, numeric_profile{}, rule...) {}
  void follow(const op& o) final {
    if (o.kind != op_kind::decode) model_.apply(o);
  }

 protected:
  /// `o` (its other fields kept) as a decode of the class's query.
  op decode_op(op o = {}) const {
    o.kind = op_kind::decode, o.q = tensor::vector(src_->query());
    return o;
  }
  Model model_;
};

/// Capacity, d_k and d_v within the fuzz limits, then the per-tensor scales: the config fields every kind reads first.
void fuzz_sizes(byte_io& io, cache_config& c);
/// The per-tensor scales k_scale and v_scale (docs/numerics.md §6.1), as codes of scale_of_code.
void fuzz_scales(byte_io& io, cache_config& c);

}  // namespace kvconform
