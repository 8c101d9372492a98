// The parts of the beam kind that its sources share: its op mix, generators and fuzz strategy.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "properties/generate/fuzz_ops.h"
#include "properties/generate/property.h"

namespace kvconform::kinds {

/// Relative weights of the ops a beam property draws (0 = never). An "append" is an update at a
/// layer's length.
struct beam_mix {
  int append = 6;     ///< up to max_steps positions at the length, never past max_len
  int fill = 0;       ///< exactly to max_len
  int overfill = 0;   ///< 1 to 3 positions past max_len
  int empty = 1;      ///< 0 positions
  int bad_shape = 0;  ///< wrong widths, heads, batch, steps or rank; a layer or start out of range
  int decode = 2;
  int bad_decode = 0;   ///< q of the wrong rank, heads or width, a mask of the wrong shape, a layer out of range
  int rollback = 0;     ///< an update starting below the layer's length (truncates first)
  int reorder = 0;      ///< a gather along the batch axis (repeats, drops, permutations, identity)
  int bad_reorder = 0;  ///< an index out of range, or not one index per batch row
  /// 1, 2, max_steps or the room positions appended by a prefill (capability prefill), never past max_len, with a
  /// mask half the time
  int prefill = 0;
  int bad_prefill = 0;  ///< q of the wrong positions, heads, width or rank, a mask of the length alone, past max_len
  /// Every prefill carries a mask (all ones when none is drawn), whose width tells a rewrite the layer's length.
  bool mask_prefills = false;
};

/// The cases of a beam property drawn from `mix`.
case_generator beam_cases(beam_mix mix);
void add_beam_properties(std::vector<property>& ps);
/// The prefill properties (properties/kinds/beam/prefill.cpp): chunked prefill, prefill as decode steps.
void add_prefill_properties(std::vector<property>& ps);
void beam_fuzz_config(byte_io& io, cache_config& c);
/// The kind's boundary events and their probe (properties/kinds/beam/coverage.cpp).
coverage_spec beam_coverage();
std::unique_ptr<fuzz_ops> beam_fuzz_ops(byte_io& io, const cache_config& c);
/// The targeted search's lengthening (kind_descriptor::lengthen): an update of the decoded layer at
/// its length, the rows the same in every batch row and kv head; max_len grows so that every
/// update fits, and a mask grows by live positions.
std::optional<trace> beam_lengthen(const trace& t, const tensor& k, const tensor& v);

}  // namespace kvconform::kinds
