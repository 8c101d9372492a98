// The beam_cache concept and its adapter to the executor's interface.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include <kvconform/array_view.h>
#include "oracle/models/beam_model.h"
#include "properties/executor/adapter.h"

namespace kvconform {

/// A read-only (B, H, length, D) view: dimension(i) and (b, h, t, j), as Eigen::TensorMap has them.
template <class V>
concept tensor4_view = requires(const V& v, std::size_t i) {
  { v.dimension(i) } -> std::convertible_to<std::size_t>;
  { v(i, i, i, i) } -> std::convertible_to<double>;
};

/// The pair of views an update gives: std::get<0> keys, std::get<1> values.
template <class P>
concept view_pair = requires(const P& p) {
  { std::get<0>(p) } -> tensor4_view;
  { std::get<1>(p) } -> tensor4_view;
};

/// beam(layers, batch, kv_heads, max_len, head_dim) with update(layer, k, v, start) giving a
/// view_pair of the layer's filled positions (directly, or inside a result_like: empty = refused),
/// reorder(span of int64 indices) (void, or a status), length(layer), keys(layer)/values(layer)
/// tensor4 views of (B, H, length, D), and the memory helpers. Refusals are kvconform::error
/// exceptions or returned statuses. No base class is needed.
template <class C>
concept beam_cache = std::constructible_from<C, std::size_t, std::size_t, std::size_t, std::size_t, std::size_t> &&
    requires(C& c, const C& cc, array_view a, std::size_t i, std::span<const std::int64_t> index) {
  requires view_pair<unwrapped_t<decltype(c.update(i, a, a, i))>>;
  c.reorder(index);
  { cc.length(i) } -> std::convertible_to<std::size_t>;
  { cc.keys(i) } -> tensor4_view;
  { cc.values(i) } -> tensor4_view;
  { cc.bytes() } -> std::convertible_to<std::size_t>;
  { cc.bytes_per_token() } -> std::convertible_to<std::size_t>;
  { cc.max_batch_tokens(i) } -> std::convertible_to<std::size_t>;
};

/// The optional decode capability: decode(layer, q, mask) giving a decode result with .output
/// (B, Hq, D) and .weights (B, Hq, length) flattened, or a result_like of one.
template <class C>
concept beam_decoding = requires(const C& cc, array_view a, std::size_t i) {
  requires decode_result_like<unwrapped_t<decltype(cc.decode(i, a, a))>>;
};

/// The optional prefill capability: prefill(layer, k, v, q, mask) appends the m positions of k and v (B, H, m, D) at
/// the layer's length and gives a decode result with .output (B, Hq, m, D) and .weights (B, Hq, m, length + m)
/// flattened, query i attending causally up to its own position (docs/kinds/beam.md), or a result_like of one.
template <class C>
concept beam_prefilling = requires(C& c, array_view a, std::size_t i) {
  requires decode_result_like<unwrapped_t<decltype(c.prefill(i, a, a, a, a))>>;
};

/// Adapts any beam_cache to `subject`. Layer and start arrive as the trace's int64 and are
/// passed as size_t, so a negative one reaches the cache as out of range.
template <beam_cache C>
class beam_subject final : public subject {
 public:
  explicit beam_subject(const cache_config& c) : cache_(c.layers, c.batch, c.heads, c.capacity, c.d_k), config_(c) {
    pass_scales(cache_, c);
  }

  op_outcome apply(const call& c) override {
    const auto layer = static_cast<std::size_t>(c.o.layer);
    switch (c.o.kind) {
      case op_kind::update:
        return call_cache([&] { return cache_.update(layer, c.k, c.v, static_cast<std::size_t>(c.o.start)); },
                          [&](op_outcome&, const auto& views) {
                            // The views update gives must be those of the layer's filled positions.
                            same_view("keys", std::get<0>(views), std::as_const(cache_).keys(layer));
                            same_view("values", std::get<1>(views), std::as_const(cache_).values(layer));
                          });
      case op_kind::reorder:
        return call_cache([&] { return cache_.reorder(std::span<const std::int64_t>(c.o.index)); });
      case op_kind::decode:
        if constexpr (beam_decoding<C>)
          return decode_outcome([&] { return std::as_const(cache_).decode(layer, c.q, c.mask); });
        else
          return unsupported();
      case op_kind::prefill:
        if constexpr (beam_prefilling<C>)
          return decode_outcome([&] { return cache_.prefill(layer, c.k, c.v, c.q, c.mask); });
        else
          return unsupported();
      default: return unsupported();  // the vocabulary of other kinds
    }
  }

  snapshot observe() override {
    const C& c = cache_;
    const cache_config& g = config_;
    snapshot s;
    for (std::size_t l = 0; l < g.layers; ++l) {
      s.counters.emplace_back("layer " + std::to_string(l) + " length", static_cast<std::int64_t>(c.length(l)));
      const auto k = hold(c.keys(l));  // each view once, read in place where it allows
      const auto v = hold(c.values(l));
      check_dims("keys", *k), check_dims("values", *v);
      for (std::size_t b = 0; b < g.batch; ++b)
        for (std::size_t h = 0; h < g.heads; ++h) {
          stream st;
          st.name = "layer " + std::to_string(l) + " row " + std::to_string(b) + " head " + std::to_string(h);
          st.d_k = st.d_v = g.d_k;
          read_head(*k, b, h, st.keys, k);
          read_head(*v, b, h, st.values, v);
          if constexpr (requires { c.key_scales(l, b, h); })
            copy_groups(
                st.key_groups, [&] { return c.key_scales(l, b, h); },
                [&] {
                  if constexpr (requires { c.key_zeros(l, b, h); }) return c.key_zeros(l, b, h);
                });
          if constexpr (requires { c.value_scales(l, b, h); })
            copy_groups(
                st.value_groups, [&] { return c.value_scales(l, b, h); },
                [&] {
                  if constexpr (requires { c.value_zeros(l, b, h); }) return c.value_zeros(l, b, h);
                });
          s.streams.push_back(std::move(st));
        }
    }
    s.counters.emplace_back("bytes", static_cast<std::int64_t>(c.bytes()));
    s.counters.emplace_back("bytes_per_token", static_cast<std::int64_t>(c.bytes_per_token()));
    s.counters.emplace_back("max_batch_tokens", static_cast<std::int64_t>(c.max_batch_tokens(beam_memory_budget)));
    return s;
  }

 private:
  /// A view whose batch, head or width extent is not the config's cannot be read safely.
  template <class V>
  void check_dims(const char* what, const V& v) const {
    if (static_cast<std::size_t>(v.dimension(0)) != config_.batch ||
        static_cast<std::size_t>(v.dimension(1)) != config_.heads ||
        static_cast<std::size_t>(v.dimension(3)) != config_.d_k)
      throw std::logic_error(std::string(what) + " view is not (B, H, length, D)");
  }
  /// Appends positions [0, length) of row b, head h of view `v` to `out`: in place when the view
  /// gives row pointers (row(b, h, t), as the reference's does), else element by element.
  template <class V>
  void read_head(const V& v, std::size_t b, std::size_t h, row_data& out, std::shared_ptr<const void> keep) const {
    const auto length = static_cast<std::size_t>(v.dimension(2)), d = config_.d_k;
    if constexpr (requires {
                    { v.row(b, h, b) } -> std::convertible_to<const double*>;
                  }) {
      for (std::size_t t = 0; t < length; ++t) out.add(v.row(b, h, t), d, t == 0 ? keep : nullptr);
    } else {
      auto copied = std::make_shared<std::vector<double>>();
      for (std::size_t t = 0; t < length; ++t)
        for (std::size_t j = 0; j < d; ++j) copied->push_back(v(b, h, t, j));
      out.add(copied->data(), copied->size(), copied);
    }
  }
  /// Throws unless `returned` shows exactly what the layer's own view shows, bit for bit.
  template <class V, class W>
  void same_view(const char* what, const V& returned, const W& layer) const {
    check_dims(what, returned), check_dims(what, layer);
    bool same = returned.dimension(2) == layer.dimension(2);
    for (std::size_t b = 0; same && b < config_.batch; ++b)
      for (std::size_t h = 0; same && h < config_.heads; ++h) {
        row_data x, y;
        read_head(returned, b, h, x, nullptr), read_head(layer, b, h, y, nullptr);
        same = x.mismatch(y) == x.size();
      }
    if (!same)
      throw std::logic_error(std::string("update returned ") + what +
                             " views that differ from the layer's filled positions");
  }
  C cache_;
  cache_config config_;
};

/// A registry entry for a beam cache type; "decode" and "prefill" when it has them.
template <beam_cache C>
implementation make_implementation(implementation_info info) {
  capability_set caps;
  if (beam_decoding<C>) caps.add(capability::decode);
  if (beam_prefilling<C>) caps.add(capability::prefill);
  return adapted_implementation<C, beam_subject<C>>(std::move(info), cache_kind::beam, caps);
}

}  // namespace kvconform
