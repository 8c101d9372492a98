// The caller buffers one stream of a C ABI observation is read into (include/kvconform/c_port.h, kvc_observe).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <kvconform/c_port.h>
#include "properties/executor/subject.h"

namespace kvconform {

/// Observations larger than this many doubles are a broken library, not a cache.
inline constexpr std::size_t max_cells = std::size_t{1} << 26;

/// One stream's caller buffers: a kvc_stream points into them, they grow to the sizes the library asks for, and
/// they read back as a stream.
class stream_buffers {
 public:
  void point(kvc_stream& s) {
    s = kvc_stream{};
    s.keys = keys_.data(), s.keys_cap = keys_.size(), s.values = values_.data(), s.values_cap = values_.size();
    s.positions = positions_.data(), s.positions_cap = positions_.size();
    s.blocks = blocks_.data(), s.blocks_cap = blocks_.size();
    for (std::size_t g = 0; g < 4; ++g) s.*group_fields[g] = kvc_numbers{groups_[g].data(), groups_[g].size(), 0};
  }
  /// After KVC_MORE: room for the sizes `s` asks for.
  void grow(const kvc_stream& s) {
    if (s.rows * (s.d_k + s.d_v) > max_cells || s.n_positions > max_cells || s.n_blocks > max_cells)
      throw subject_failure("port", "kvc_observe: a stream beyond the limit");
    keys_.resize(std::max(keys_.size(), s.rows * s.d_k)), values_.resize(std::max(values_.size(), s.rows * s.d_v));
    positions_.resize(std::max(positions_.size(), s.n_positions)), blocks_.resize(std::max(blocks_.size(), s.n_blocks));
    for (std::size_t g = 0; g < 4; ++g) {
      const std::size_t n = (s.*group_fields[g]).n;
      if (n > max_cells) throw subject_failure("port", "kvc_observe: a stream beyond the limit");
      groups_[g].resize(std::max(groups_[g].size(), n));
    }
  }
  /// The stream `s` describes, once the library answered KVC_OK.
  stream read(const kvc_stream& s) const {
    bool fits = s.rows * s.d_k <= s.keys_cap && s.rows * s.d_v <= s.values_cap && s.n_positions <= s.positions_cap &&
                s.n_blocks <= s.blocks_cap;
    for (std::size_t g = 0; g < 4; ++g) fits = fits && (s.*group_fields[g]).n <= (s.*group_fields[g]).cap;
    if (!fits) throw subject_failure("port", "kvc_observe answered KVC_OK with a stream larger than its buffers");
    stream x;
    x.name = std::string(s.name, ::strnlen(s.name, sizeof s.name));
    x.d_k = s.d_k, x.d_v = s.d_v;
    x.keys = std::vector<double>(s.keys, s.keys + s.rows * s.d_k);
    x.values = std::vector<double>(s.values, s.values + s.rows * s.d_v);
    x.positions.assign(s.positions, s.positions + s.n_positions), x.blocks.assign(s.blocks, s.blocks + s.n_blocks);
    std::vector<double>* groups[] = {&x.key_groups.scales, &x.key_groups.zeros, &x.value_groups.scales,
                                     &x.value_groups.zeros};
    for (std::size_t g = 0; g < 4; ++g) {
      const kvc_numbers& n = s.*group_fields[g];
      groups[g]->assign(n.data, n.data + n.n);
    }
    return x;
  }

 private:
  static constexpr kvc_numbers kvc_stream::*group_fields[] = {&kvc_stream::key_scales, &kvc_stream::key_zeros,
                                                              &kvc_stream::value_scales, &kvc_stream::value_zeros};
  std::vector<double> keys_, values_, groups_[4];
  std::vector<std::int64_t> positions_, blocks_;
};

}  // namespace kvconform
