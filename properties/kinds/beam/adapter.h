// The beam_cache concept and its adapter to the executor's interface.
#pragma once

#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "oracle/models/beam_model.h"
#include "properties/executor/adapter.h"

namespace kvconform {

/// beam(layers, batch, kv_heads, max_len, head_dim) with update(layer, k, v, start) returning a
/// pair of views, reorder(span of int64 indices), length(layer), keys(layer)/values(layer)
/// views of (B, H, length, D) (`dimension(i)`, `(b, h, t, j)`, as Eigen::TensorMap has them),
/// and the memory helpers. Refusals are kvconform::error exceptions. No base class is needed.
template <class C>
concept beam_cache = std::constructible_from<C, std::size_t, std::size_t, std::size_t, std::size_t, std::size_t> &&
    requires(C& c, const C& cc, array_view a, std::size_t i, std::span<const std::int64_t> index) {
      std::get<0>(c.update(i, a, a, i)).dimension(2);
      std::get<1>(c.update(i, a, a, i)).dimension(2);
      c.reorder(index);
      { cc.length(i) } -> std::convertible_to<std::size_t>;
      { cc.keys(i)(i, i, i, i) } -> std::convertible_to<double>;
      { cc.values(i)(i, i, i, i) } -> std::convertible_to<double>;
      { cc.keys(i).dimension(i) } -> std::convertible_to<std::size_t>;
      { cc.bytes() } -> std::convertible_to<std::size_t>;
      { cc.bytes_per_token() } -> std::convertible_to<std::size_t>;
      { cc.max_batch_tokens(i) } -> std::convertible_to<std::size_t>;
    };

/// The optional decode capability: decode(layer, q, mask) with .output (B, Hq, D) and .weights (B, Hq, length).
template <class C>
concept beam_decoding_cache = requires(const C& cc, array_view a, std::size_t i) {
  cc.decode(i, a, a).output;
  cc.decode(i, a, a).weights;
};

/// Adapts any beam_cache to `subject`. Layer and start arrive as the trace's int64 and are
/// passed as size_t, so a negative one reaches the cache as out of range.
template <beam_cache C>
class beam_subject final : public subject {
 public:
  explicit beam_subject(const cache_config& c) : cache_(c.layers, c.batch, c.heads, c.capacity, c.d_k), config_(c) {}

  op_outcome apply(const call& c) override {
    op_outcome r;
    try {
      const auto layer = static_cast<std::size_t>(c.o.layer);
      switch (c.o.kind) {
        case op_kind::update: {
          const auto views = cache_.update(layer, c.k, c.v, static_cast<std::size_t>(c.o.start));
          // The views update returns must be those of the layer's filled positions.
          same_view("keys", std::get<0>(views), std::as_const(cache_).keys(layer));
          same_view("values", std::get<1>(views), std::as_const(cache_).values(layer));
          break;
        }
        case op_kind::reorder: cache_.reorder(std::span<const std::int64_t>(c.o.index)); break;
        case op_kind::decode:
          if constexpr (beam_decoding_cache<C>) {
            const auto d = std::as_const(cache_).decode(layer, c.q, c.mask);
            for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(d.output.size()); ++i) r.output.push_back(d.output[i]);
            for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(d.weights.size()); ++i) r.weights.push_back(d.weights[i]);
          } else {
            r.unsupported = true;
          }
          break;
        default: throw shape_error(std::string("beam: no ") + to_string(c.o.kind) + " op");
      }
    } catch (...) {
      return refusal_from_current_exception();
    }
    return r;
  }

  snapshot observe() override {
    const C& c = cache_;
    const cache_config& g = config_;
    snapshot s;
    for (std::size_t l = 0; l < g.layers; ++l) {
      s.counters.emplace_back("layer " + std::to_string(l) + " length", static_cast<std::int64_t>(c.length(l)));
      const auto k = c.keys(l);
      const auto v = c.values(l);
      check_dims("keys", k), check_dims("values", v);
      for (std::size_t b = 0; b < g.batch; ++b)
        for (std::size_t h = 0; h < g.heads; ++h) {
          stream st;
          st.name = "layer " + std::to_string(l) + " row " + std::to_string(b) + " head " + std::to_string(h);
          st.d_k = st.d_v = g.d_k;
          for (std::size_t t = 0; t < static_cast<std::size_t>(k.dimension(2)); ++t)
            for (std::size_t j = 0; j < g.d_k; ++j) st.keys.push_back(k(b, h, t, j));
          for (std::size_t t = 0; t < static_cast<std::size_t>(v.dimension(2)); ++t)
            for (std::size_t j = 0; j < g.d_k; ++j) st.values.push_back(v(b, h, t, j));
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
    if (static_cast<std::size_t>(v.dimension(0)) != config_.batch || static_cast<std::size_t>(v.dimension(1)) != config_.heads ||
        static_cast<std::size_t>(v.dimension(3)) != config_.d_k)
      throw std::logic_error(std::string(what) + " view is not (B, H, length, D)");
  }
  /// Throws unless `returned` shows exactly what the layer's own view shows, bit for bit.
  template <class V, class W>
  void same_view(const char* what, const V& returned, const W& layer) const {
    check_dims(what, returned), check_dims(what, layer);
    bool same = returned.dimension(2) == layer.dimension(2);
    for (std::size_t b = 0; same && b < config_.batch; ++b)
      for (std::size_t h = 0; h < config_.heads; ++h)
        for (std::size_t t = 0; same && t < static_cast<std::size_t>(layer.dimension(2)); ++t)
          for (std::size_t j = 0; j < config_.d_k; ++j)
            same = same && std::bit_cast<std::uint64_t>(static_cast<double>(returned(b, h, t, j))) ==
                               std::bit_cast<std::uint64_t>(static_cast<double>(layer(b, h, t, j)));
    if (!same) throw std::logic_error(std::string("update returned ") + what + " views that differ from the layer's filled positions");
  }
  C cache_;
  cache_config config_;
};

/// A registry entry for a beam-kind type.
template <beam_cache C>
implementation make_implementation(std::string name, std::string group, std::string note) {
  return adapted_implementation<C, beam_subject<C>>(std::move(name), cache_kind::beam, std::move(group), std::move(note),
                                                    beam_decoding_cache<C>);
}

}  // namespace kvconform
