// The hybrid_cache concept and its registration: layer groups of several attention types over one block pool.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <string>
#include <utility>

#include <kvconform/hybrid.h>
#include "properties/executor/block_pool_adapter.h"

namespace kvconform {

/// The sequence id type of a hybrid cache: what create(k, v) gives (directly or inside a result).
template <class C>
using hybrid_id_t =
    unwrapped_t<decltype(std::declval<C&>().create(std::declval<array_view>(), std::declval<array_view>()))>;

/// hybrid(num_blocks, block_size, d_k, d_v, hybrid_layers): sequences from create(encoder k, encoder v) and
/// fork(seq), grown by append(seq, k, v) with k (writing layers, n, d_k), ended by release(seq); per layer,
/// keys(seq, layer)/values(seq, layer) views of the rows the layer reads and block_table(seq, layer) (the blocks
/// of its group, none for a shared layer); and the pool's num_blocks(), free_blocks(), ref_count(block) and
/// group_blocks(hybrid_group). Refusals are kvconform::error exceptions or returned statuses.
template <class C>
concept hybrid_cache = std::constructible_from<C, std::size_t, std::size_t, std::size_t, std::size_t, hybrid_layers> &&
    std::integral<hybrid_id_t<C>> && requires(C& c, const C& cc, hybrid_id_t<C> s, array_view a, std::size_t n) {
  requires std::same_as<unwrapped_t<decltype(c.fork(s))>, hybrid_id_t<C>>;
  c.release(s);
  c.append(s, a, a);
  { cc.keys(s, n) } -> matrix_view;
  { cc.values(s, n) } -> matrix_view;
  { *std::begin(cc.block_table(s, n)) } -> std::convertible_to<std::size_t>;
  std::end(cc.block_table(s, n));
  { cc.num_blocks() } -> std::convertible_to<std::size_t>;
  { cc.free_blocks() } -> std::convertible_to<std::size_t>;
  { cc.ref_count(n) } -> std::convertible_to<std::size_t>;
  { cc.group_blocks(hybrid_group::full) } -> std::convertible_to<std::size_t>;
};

/// Attention sinks of the sliding layers (config `keep`): a cache without them declares `static constexpr bool sinks =
/// false` (vLLM's sliding-window manager has none) and is given no sinks; its configs with sinks are NOT SUPPORTED.
template <class C>
concept hybrid_sinks = !requires {
  requires !C::sinks;
};

/// The optional decode capability: c.decode_step(seq, layer, q) giving a decode result (or a result_like of one).
template <class C>
concept hybrid_decoding = requires(const C& cc, hybrid_id_t<C> s, std::size_t l, array_view a) {
  requires decode_result_like<unwrapped_t<decltype(cc.decode_step(s, l, a))>>;
};

/// The optional prefix capability: constructed with a sixth argument `prefix_caching`, create(k, v, tokens) and
/// append(seq, k, v, tokens) take the steps' tokens (a span of const int64), and with prefix caching on a create
/// holds the blocks live sequences hold for the longest prefix of its tokens every writing group has.
template <class C>
concept hybrid_prefixing =
    std::constructible_from<C, std::size_t, std::size_t, std::size_t, std::size_t, hybrid_layers, bool> &&
    requires(C& c, hybrid_id_t<C> s, array_view a, std::span<const std::int64_t> t) {
  c.create(a, a, t);
  c.append(s, a, a, t);
};

/// The optional prefill capability: c.prefill(seq, k, v, q) appends as append does, q (layers, n, d_k) holding each
/// layer's query of each step, and gives every layer's causal attentions (docs/kinds/hybrid.md); with the prefix
/// capability c.prefill(seq, k, v, q, tokens).
template <class C>
concept hybrid_prefilling = requires(C& c, hybrid_id_t<C> s, array_view a) {
  requires decode_result_like<unwrapped_t<decltype(c.prefill(s, a, a, a))>>;
};

/// Declared attention (docs/numerics.md §7.1): a cache whose profile declares it takes each decode's sink logits in
/// c.decode_step(seq, layer, q, sinks) and c.prefill(seq, k, v, q, tokens, sinks) (the decoded layer's one; a
/// prefill's one per layer); one declaring plain attention keeps the calls without them.
template <class C>
concept hybrid_sink_logits = (!profile_of<C>().attention.plain()) &&
                             requires(C& c, const C& cc, hybrid_id_t<C> s, std::size_t l, array_view a,
                                      std::span<const std::int64_t> t) {
  requires decode_result_like<unwrapped_t<decltype(cc.decode_step(s, l, a, a))>>;
  requires decode_result_like<unwrapped_t<decltype(c.prefill(s, a, a, a, t, a))>>;
};

/// The layers of a hybrid config, as its caches are constructed with.
inline hybrid_layers hybrid_layers_of(const cache_config& c) {
  return {c.layers, c.window, c.keep, c.global_every, c.shared, c.cross};
}

/// Adapts a hybrid cache to `subject`: handles to its ids, the calls, and one stream per live handle and layer.
template <hybrid_cache C>
class hybrid_subject final : public subject {
  using id = hybrid_id_t<C>;
  static constexpr bool prefixes = hybrid_prefixing<C>;

 public:
  explicit hybrid_subject(const cache_config& c) : cache_(construct(c)), config_(c) { pass_scales(cache_, c); }

  op_outcome apply(const call& c) override {
    if ((config_.prefix_caching && !prefixes) || (config_.keep > 0 && !hybrid_sinks<C>)) return unsupported();
    const op& o = c.o;
    const std::span<const std::int64_t> tokens(o.tokens);
    auto create = [&] {
      if constexpr (prefixes)
        return cache_.create(c.k, c.v, tokens);
      else
        return cache_.create(c.k, c.v);
    };
    if (auto r = sequence_outcome(cache_, handles_, o, create)) return *r;
    switch (o.kind) {
      case op_kind::append:
        return call_cache([&] {
          if constexpr (prefixes)
            return cache_.append(handles_.id_of(o.seq), c.k, c.v, tokens);
          else
            return cache_.append(handles_.id_of(o.seq), c.k, c.v);
        });
      case op_kind::prefill:
        if constexpr (hybrid_prefilling<C>) {
          return decode_outcome([&] {
            if constexpr (hybrid_sink_logits<C>)
              return cache_.prefill(handles_.id_of(o.seq), c.k, c.v, c.q, tokens, c.sinks);
            else if constexpr (prefixes)
              return cache_.prefill(handles_.id_of(o.seq), c.k, c.v, c.q, tokens);
            else
              return cache_.prefill(handles_.id_of(o.seq), c.k, c.v, c.q);
          });
        } else {
          return unsupported();
        }
      case op_kind::decode:
        if constexpr (hybrid_decoding<C>) {
          if (o.layer < 0) return refused(refuse_index);  // a layer the cache's size_t cannot carry
          return decode_outcome([&] {
            const auto layer = static_cast<std::size_t>(o.layer);
            if constexpr (hybrid_sink_logits<C>)
              return std::as_const(cache_).decode_step(handles_.id_of(o.seq), layer, c.q, c.sinks);
            else
              return std::as_const(cache_).decode_step(handles_.id_of(o.seq), layer, c.q);
          });
        } else {
          return unsupported();
        }
      default: return unsupported();  // the vocabulary of other kinds
    }
  }

  snapshot observe() override {
    snapshot s;
    const C& c = cache_;
    const std::size_t layers = config_.layers + (config_.cross > 0 ? 1 : 0);
    handles_.for_each_live([&](std::int64_t h, id sid) {
      for (std::size_t l = 0; l < layers; ++l) {
        stream st;
        st.name = "seq " + std::to_string(h) + " layer " + std::to_string(l);
        st.d_k = config_.d_k, st.d_v = config_.d_v;
        read_rows(c.keys(sid, l), st.keys);
        read_rows(c.values(sid, l), st.values);
        for (const auto& b : c.block_table(sid, l)) st.blocks.push_back(static_cast<std::int64_t>(b));
        s.streams.push_back(std::move(st));
      }
    });
    for (std::size_t b = 0; b < static_cast<std::size_t>(c.num_blocks()); ++b)
      if (const auto refs = static_cast<std::int64_t>(c.ref_count(b)); refs > 0)
        s.block_refs.emplace_back(static_cast<std::int64_t>(b), refs);
    s.counters.emplace_back("free_blocks", static_cast<std::int64_t>(c.free_blocks()));
    for (const auto& [name, g] : {std::pair{"blocks_full", hybrid_group::full},
                                  {"blocks_sliding", hybrid_group::sliding},
                                  {"blocks_cross", hybrid_group::cross}})
      s.counters.emplace_back(name, static_cast<std::int64_t>(c.group_blocks(g)));
    return s;
  }

 private:
  static C construct(const cache_config& c) {
    if constexpr (prefixes)
      return C(c.capacity, c.block_size, c.d_k, c.d_v, hybrid_layers_of(c), c.prefix_caching);
    else
      return C(c.capacity, c.block_size, c.d_k, c.d_v, hybrid_layers_of(c));
  }

  C cache_;
  cache_config config_;
  sequence_handles<id> handles_;
};

/// A registry entry for a hybrid cache type; "decode" when it has it.
template <hybrid_cache C>
implementation make_implementation(implementation_info info) {
  capability_set caps;
  if (hybrid_sinks<C>) caps.add(capability::sinks);
  if (hybrid_decoding<C>) caps.add(capability::decode);
  if (hybrid_prefixing<C>) caps.add(capability::prefix);
  if (hybrid_prefilling<C>) caps.add(capability::prefill);
  return adapted_implementation<C, hybrid_subject<C>>(std::move(info), cache_kind::hybrid, caps);
}

}  // namespace kvconform
