// The latent_cache concept and its registration: a paged pool of latent rows appended by k alone, decoded per head.
#pragma once

#include <concepts>
#include <cstddef>
#include <string>

#include "properties/executor/block_pool_adapter.h"
#include "properties/kinds/paged/adapter.h"

namespace kvconform {

/// latent(num_blocks, block_size, d_k, d_v): a block_pool_cache (d_k = d_c + d_r, d_v = d_c) whose sequences come
/// from create() and grow by append(seq, k) (void, or a status), which reports bytes_in_use() and declares its
/// latent_path in its profile. values(seq) are the first d_v entries of keys(seq), read from the same storage.
template <class C>
concept latent_cache = block_pool_cache<C, sequence_id_t<C>> &&
    requires(C& c, const C& cc, sequence_id_t<C> s, array_view a) {
  c.append(s, a);
  { cc.bytes_in_use() } -> std::convertible_to<std::size_t>;
};

/// The decode capability: c.decode_step(seq, q, w_uk, w_uv) giving each head's output and weights (a decode result
/// or a result_like of one).
template <class C>
concept latent_decoding = requires(const C& cc, sequence_id_t<C> s, array_view a) {
  requires decode_result_like<unwrapped_t<decltype(cc.decode_step(s, a, a, a))>>;
};

/// The prefill capability: c.prefill(seq, k, q, w_uk, w_uv) appending k (m, d_k) as append does and giving step i's
/// heads (q (m, Hq, d_nope + d_r)) over the rows up to its own: output (m, Hq, d_vh), weights (m, Hq, rows).
template <class C>
concept latent_prefilling = requires(C& c, sequence_id_t<C> s, array_view a) {
  requires decode_result_like<unwrapped_t<decltype(c.prefill(s, a, a, a, a))>>;
};

/// The latent kind's part of the block-pool adapter (block_pool_subject). A decode is the kind's own call, so that
/// the pool adapter's one-query decode is never reached.
template <latent_cache C>
struct latent_calls {
  using id = sequence_id_t<C>;
  static constexpr bool preempts = false, prefills = latent_prefilling<C>;
  /// Checked before the cache exists: a type's constructor may throw for a config it cannot take (the references do
  /// for integer groups), which the session would report as an exception; it is NOT SUPPORTED (docs/kinds/latent.md).
  static C construct(const cache_config& c) {
    if (const std::string why = why_unsupported(c); !why.empty())
      throw subject_failure("not-supported", "latent: " + why);
    return C(c.capacity, c.block_size, c.d_k, c.d_v);
  }
  static bool supports(const cache_config& c) { return why_unsupported(c).empty(); }
  /// Why the type cannot take config c; empty if it can.
  static std::string why_unsupported(const cache_config& c) {
    if constexpr (requires { C::profile.keys.groups; })  // integer groups: a value row is its key row's first groups
      if (C::profile.keys.groups && c.d_v % C::profile.keys.group != 0)
        return "integer groups of " + std::to_string(C::profile.keys.group) +
               " need d_v (d_c) a multiple of them, not " + std::to_string(c.d_v);
    return c.preempt ? "no preemption" : "";
  }
  static auto create(C& c, const op&) { return c.create(); }
  static auto append(C& c, id s, const call& x) {
    no_values(x);
    return c.append(s, x.k);
  }
  static auto prefill(C& c, id s, const call& x) requires prefills {
    no_values(x);
    return c.prefill(s, x.k, x.q, x.w_uk, x.w_uv);
  }
  /// A latent append or prefill carries no v (its values are the rows'): one given is malformed.
  static void no_values(const call& x) {
    if (!x.o.v.shape.empty() || !x.o.v.data.empty()) throw shape_error("latent append: no v");
  }
  static void count(const C& c, snapshot& s) {
    s.counters.emplace_back("bytes_in_use", static_cast<std::int64_t>(c.bytes_in_use()));
  }
  static constexpr bool decodes = latent_decoding<C>;
  static auto decode(const C& c, id s, const call& x) requires decodes { return c.decode_step(s, x.q, x.w_uk, x.w_uv); }
};

/// A registry entry for a latent cache type; "decode", "rollback" and "prefill" when it has them.
template <latent_cache C>
implementation make_implementation(implementation_info info) {
  capability_set caps;
  if (latent_decoding<C>) caps.add(capability::decode);
  if (block_pool_rolling_back<C, sequence_id_t<C>>) caps.add(capability::rollback);
  if (latent_prefilling<C>) caps.add(capability::prefill);
  return adapted_implementation<C, block_pool_subject<C, latent_calls<C>>>(std::move(info), cache_kind::latent, caps);
}

}  // namespace kvconform
