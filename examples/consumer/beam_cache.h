// acme's beam-search KV cache (kvconform kind beam): layers x batch x kv heads x positions, with status returns.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "acme_support.h"

namespace acme {

/// A layer's filled positions as a (B, H, length, D) array, named as Eigen::TensorMap names
/// them so that kvconform's tensor4_view fits. Valid until the next update or reorder.
struct beam_view {
  const double* data;  // the layer's (B, H, T, D) storage
  std::size_t batch, heads, max_len, length, head_dim;
  std::size_t dimension(std::size_t i) const {
    const std::size_t d[] = {batch, heads, length, head_dim};
    return d[i];
  }
  const double* row(std::size_t b, std::size_t h, std::size_t t) const {
    return data + ((b * heads + h) * max_len + t) * head_dim;
  }
  double operator()(std::size_t b, std::size_t h, std::size_t t, std::size_t j) const { return row(b, h, t)[j]; }
};

/// K and V of L layers, each (B, H, T, D) reserved up front (the memory formulas below promise
/// it), with one length per layer because layers are filled one after another in a forward pass.
/// Every refusal is decided before the first write, so a refused call changes nothing.
class beam_cache {
 public:
  beam_cache(std::size_t layers, std::size_t batch, std::size_t kv_heads, std::size_t max_len, std::size_t head_dim)
      : L_(layers),
        B_(batch),
        H_(kv_heads),
        T_(max_len),
        D_(head_dim),
        length_(layers, 0),
        keys_(layers, std::vector<double>(batch * kv_heads * max_len * head_dim)),
        values_(layers, std::vector<double>(batch * kv_heads * max_len * head_dim)) {}

  /// Writes positions [start, start + n) of `layer` from k and v shaped (B, H, n, D). start equal
  /// to the length appends (prefill or one decode step); a start below it first drops the tail
  /// (rejected draft tokens of speculative decoding); n = 0 only drops. Empty when refused.
  std::optional<std::pair<beam_view, beam_view>> update(std::size_t layer, kvconform::array_view k,
                                                        kvconform::array_view v, std::size_t start) {
    if (layer >= L_ || !is_block(k) || !is_block(v) || k.dims[2] != v.dims[2] || start > length_[layer])
      return std::nullopt;
    const std::size_t n = k.dims[2];
    if (n > T_ - start) return std::nullopt;
    for (std::size_t b = 0; b < B_; ++b)
      for (std::size_t h = 0; h < H_; ++h)
        for (std::size_t t = 0; t < n; ++t) {
          const std::size_t from = ((b * H_ + h) * n + t) * D_, to = ((b * H_ + h) * T_ + start + t) * D_;
          std::copy(k.data + from, k.data + from + D_, keys_[layer].begin() + static_cast<std::ptrdiff_t>(to));
          std::copy(v.data + from, v.data + from + D_, values_[layer].begin() + static_cast<std::ptrdiff_t>(to));
        }
    length_[layer] = start + n;
    return std::pair{keys(layer), values(layer)};
  }

  /// Row b of every layer becomes old row index[b] (surviving beams, repeats allowed). Rows are
  /// copied by value into fresh storage, so two rows never share memory afterwards.
  status reorder(std::span<const std::int64_t> index) {
    if (index.size() != B_) return status(code::bad_shape);
    for (std::int64_t i : index)
      if (i < 0 || static_cast<std::size_t>(i) >= B_) return status(code::no_such);
    const std::size_t row = H_ * T_ * D_;
    for (auto* part : {&keys_, &values_})
      for (std::vector<double>& layer : *part) {
        std::vector<double> gathered(layer.size());
        for (std::size_t b = 0; b < B_; ++b) {
          const auto from = layer.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(index[b]) * row);
          std::copy(from, from + static_cast<std::ptrdiff_t>(row),
                    gathered.begin() + static_cast<std::ptrdiff_t>(b * row));
        }
        layer.swap(gathered);
      }
    return {};
  }

  /// q is (B, Hq, D) with Hq a multiple of H: query head h reads kv head h / (Hq / H) (grouped-query
  /// attention). mask is absent (rank 0) or (B, length) with 0 for left padding, which takes no
  /// weight. Output (B, Hq, D) and weights (B, Hq, length), row-major; a fully padded row gives zeros.
  result<decoded> decode(std::size_t layer, kvconform::array_view q, kvconform::array_view mask) const {
    if (layer >= L_) return code::no_such;
    const std::size_t len = length_[layer];
    if (q.rank != 3 || q.dims[0] != B_ || q.dims[1] == 0 || q.dims[1] % H_ != 0 || q.dims[2] != D_)
      return code::bad_shape;
    if (mask.rank != 0 && (mask.rank != 2 || mask.dims[0] != B_ || mask.dims[1] != len)) return code::bad_shape;
    if (len == 0) return code::empty;
    const std::size_t q_heads = q.dims[1], group = q_heads / H_;
    const beam_view k = keys(layer), v = values(layer);
    decoded out{std::vector<double>(B_ * q_heads * D_), std::vector<double>(B_ * q_heads * len)};
    for (std::size_t b = 0; b < B_; ++b)
      for (std::size_t h = 0; h < q_heads; ++h) {
        const std::size_t at = b * q_heads + h;
        const decoded d = attend(
            len, D_, D_, q.data + at * D_, [&](std::size_t t) { return k.row(b, h / group, t); },
            [&](std::size_t t) { return v.row(b, h / group, t); },
            [&](std::size_t t) { return mask.rank == 0 || mask.data[b * len + t] != 0; });
        std::copy(d.output.begin(), d.output.end(), out.output.begin() + static_cast<std::ptrdiff_t>(at * D_));
        std::copy(d.weights.begin(), d.weights.end(), out.weights.begin() + static_cast<std::ptrdiff_t>(at * len));
      }
    return out;
  }

  /// 0 for a layer that does not exist: it holds nothing.
  std::size_t length(std::size_t layer) const { return layer < L_ ? length_[layer] : 0; }
  beam_view keys(std::size_t layer) const { return view(keys_, layer); }
  beam_view values(std::size_t layer) const { return view(values_, layer); }

  /// All storage is reserved at construction: 2 L B H T D doubles.
  std::size_t bytes() const { return bytes_per_token() * B_ * T_; }
  /// One position of one beam across every layer, K and V: 2 L H D doubles.
  std::size_t bytes_per_token() const { return 2 * L_ * H_ * D_ * sizeof(double); }
  /// The largest B x T a device with `budget` bytes can hold, for sizing the batch.
  std::size_t max_batch_tokens(std::size_t budget) const { return budget / bytes_per_token(); }

 private:
  bool is_block(const kvconform::array_view& a) const {
    return a.rank == 4 && a.dims[0] == B_ && a.dims[1] == H_ && a.dims[3] == D_;
  }
  beam_view view(const std::vector<std::vector<double>>& part, std::size_t layer) const {
    if (layer >= L_) return {nullptr, B_, H_, T_, 0, D_};
    return {part[layer].data(), B_, H_, T_, length_[layer], D_};
  }

  std::size_t L_, B_, H_, T_, D_;
  std::vector<std::size_t> length_;
  std::vector<std::vector<double>> keys_, values_;  // per layer, (B, H, T, D) row-major
};

}  // namespace acme
