// The paged_cache concept and its registration: a block-pool cache with bytes_in_use and optional preemption.
#pragma once

#include <concepts>
#include <cstddef>
#include <iterator>
#include <utility>

#include "properties/executor/block_pool_adapter.h"

namespace kvconform {

/// The sequence id type of a paged cache: what create() gives (directly or inside a result).
template <class C>
using sequence_id_t = unwrapped_t<decltype(std::declval<C&>().create())>;

/// paged(num_blocks, block_size, d_k, d_v): a block_pool_cache whose sequences come from create()
/// and grow by append(seq, k, v) (void, or a status), and which reports bytes_in_use().
template <class C>
concept paged_cache = block_pool_cache<C, sequence_id_t<C>> &&
    requires(C& c, const C& cc, sequence_id_t<C> s, array_view a) {
  c.append(s, a, a);
  { cc.bytes_in_use() } -> std::convertible_to<std::size_t>;
};

/// The optional decode capability: c.decode_step(seq, q) giving a decode result (or a result_like of one).
template <class C>
concept paged_decoding = block_pool_decoding<C, sequence_id_t<C>>;

/// The optional prefill capability: c.prefill(seq, k, v, q) appends as append does and gives the m causal
/// attentions (a decode result, or a result_like of one; a `preempted` member lists the ids it released).
template <class C>
concept paged_prefilling = requires(C& c, sequence_id_t<C> s, array_view a) {
  requires decode_result_like<unwrapped_t<decltype(c.prefill(s, a, a, a))>>;
};

/// The optional preempt policy: constructed with a fifth argument `preempt = true`, an append
/// that does not fit releases other sequences and gives their ids (directly or in a result).
template <class C>
concept paged_preempting = std::constructible_from<C, std::size_t, std::size_t, std::size_t, std::size_t, bool> &&
    requires(C& c, sequence_id_t<C> s, array_view a) {
  {
    *std::begin(std::declval<const unwrapped_t<decltype(c.append(s, a, a))>&>())
    } -> std::convertible_to<sequence_id_t<C>>;
};

/// The paged kind's part of the block-pool adapter (block_pool_subject).
template <paged_cache C>
struct paged_calls {
  using id = sequence_id_t<C>;
  static constexpr bool preempts = paged_preempting<C>;
  static C construct(const cache_config& c) {
    if constexpr (preempts)
      return C(c.capacity, c.block_size, c.d_k, c.d_v, c.preempt);
    else
      return C(c.capacity, c.block_size, c.d_k, c.d_v);
  }
  static bool supports(const cache_config& c) { return !c.preempt || preempts; }
  static auto create(C& c, const op&) { return c.create(); }
  static auto append(C& c, id s, const call& x) { return c.append(s, x.k, x.v); }
  /// Declared attention (docs/numerics.md §7): c.prefill(seq, k, v, q, sinks) with the op's sink logits.
  static constexpr bool sinks = (!profile_of<C>().attention.plain()) && requires(C & c, id s, array_view a) {
    requires decode_result_like<unwrapped_t<decltype(c.prefill(s, a, a, a, a))>>;
  };
  static constexpr bool prefills = paged_prefilling<C> || sinks;
  static auto prefill(C& c, id s, const call& x) requires prefills {
    if constexpr (sinks)
      return c.prefill(s, x.k, x.v, x.q, x.sinks);
    else
      return c.prefill(s, x.k, x.v, x.q);
  }
  static void count(const C& c, snapshot& s) {
    s.counters.emplace_back("bytes_in_use", static_cast<std::int64_t>(c.bytes_in_use()));
  }
};

/// A registry entry for a paged cache type; "decode" and "preempt" when it has them.
template <paged_cache C>
implementation make_implementation(implementation_info info) {
  if constexpr (requires { C::profile; })
    static_assert(C::profile.keys.chunk() == 1 && C::profile.values.chunk() == 1,
                  "a paged cache's blocks hold final rows: declare element formats or per-token groups without a "
                  "residual (docs/numerics.md §6.3)");
  capability_set caps;
  if (paged_preempting<C>) caps.add(capability::preempt);
  return block_pool_implementation<C, paged_calls<C>>(std::move(info), cache_kind::paged, caps);
}

}  // namespace kvconform
