// The prefix_cache concept and its registration: a block-pool cache whose creates and appends carry tokens.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "properties/executor/block_pool_adapter.h"

namespace kvconform {

/// The sequence id type of a prefix cache: what create(tokens) gives (directly or inside a result).
template <class C>
using prefix_id_t = unwrapped_t<decltype(std::declval<C&>().create(std::span<const std::int64_t>{}))>;

/// prefix_pool: a block_pool_ops cache whose sequences come from
/// create(tokens) and grow by append(seq, k, v, tokens) (void, or a status), and which reports
/// evictable_blocks() and hit_rows() (rows every create found cached); a prefix_cache is one constructed as
/// prefix(num_blocks, block_size, d_k, d_v).
template <class C>
concept prefix_pool = block_pool_ops<C, prefix_id_t<C>> &&
    requires(C& c, const C& cc, prefix_id_t<C> s, array_view a, std::span<const std::int64_t> t) {
  c.append(s, a, a, t);
  { cc.evictable_blocks() } -> std::convertible_to<std::size_t>;
  { cc.hit_rows() } -> std::convertible_to<std::size_t>;
};
template <class C>
concept prefix_cache =
    std::constructible_from<C, std::size_t, std::size_t, std::size_t, std::size_t> && prefix_pool<C>;

/// The optional decode capability: c.decode_step(seq, q) giving a decode result (or a result_like of one).
template <class C>
concept prefix_decoding = block_pool_decoding<C, prefix_id_t<C>>;

/// The optional prefill capability: c.prefill(seq, k, v, tokens, q) appends as append does and gives the m causal
/// attentions (a decode result, or a result_like of one).
template <class C>
concept prefix_prefilling = requires(C& c, prefix_id_t<C> s, array_view a, std::span<const std::int64_t> t) {
  requires decode_result_like<unwrapped_t<decltype(c.prefill(s, a, a, t, a))>>;
};

/// The optional extra keys (capability extra_keys): create(tokens, key) whose key is part of every block's chain, so
/// that equal tokens under other keys share nothing (docs/kinds/prefix.md).
template <class C>
concept prefix_keyed = requires(C& c, std::span<const std::int64_t> t, std::int64_t key) {
  c.create(t, key);
};

/// The optional phases (capability phases): lookup(tokens) (and lookup(tokens, key) with extra keys) giving a waiting
/// sequence's id, admit(seq, count), retract(seq) and abort(seq), each void or a status (docs/kinds/prefix.md).
template <class C>
concept prefix_phased = requires(C& c, prefix_id_t<C> s, std::span<const std::int64_t> t, std::size_t n) {
  requires std::same_as<unwrapped_t<decltype(c.lookup(t))>, prefix_id_t<C>>;
  c.admit(s, n);
  c.retract(s);
  c.abort(s);
};

/// The prefix kind's part of the block-pool adapter (block_pool_subject): the op's tokens passed on.
template <prefix_pool C>
struct prefix_calls {
  using id = prefix_id_t<C>;
  static constexpr bool preempts = false;
  static C construct(const cache_config& c) { return C(c.capacity, c.block_size, c.d_k, c.d_v); }
  static bool supports(const cache_config&) { return true; }
  static bool supports_op(const op& o) { return prefix_keyed<C> || o.extra_key == 0; }
  static auto create(C& c, const op& o) {
    if constexpr (prefix_keyed<C>)
      return c.create(std::span<const std::int64_t>(o.tokens), o.extra_key);
    else
      return c.create(std::span<const std::int64_t>(o.tokens));
  }
  static auto append(C& c, id s, const call& x) {
    return c.append(s, x.k, x.v, std::span<const std::int64_t>(x.o.tokens));
  }
  static constexpr bool prefills = prefix_prefilling<C>;
  static auto prefill(C& c, id s, const call& x) requires prefills {
    return c.prefill(s, x.k, x.v, std::span<const std::int64_t>(x.o.tokens), x.q);
  }
  /// The phases, as the kind's own ops: a lookup names the next handle, as a create does.
  op_outcome own(C& c, sequence_handles<id>& handles, const call& x) requires prefix_phased<C> {
    const op& o = x.o;
    switch (o.kind) {
      case op_kind::lookup:
        handles.issue();
        return call_cache(
            [&] {
              if constexpr (prefix_keyed<C>)
                return c.lookup(std::span<const std::int64_t>(o.tokens), o.extra_key);
              else
                return c.lookup(std::span<const std::int64_t>(o.tokens));
            },
            [&](op_outcome&, id s) { handles.give(s); });
      case op_kind::admit:
        if (o.count < 0) return refused(refuse_index);  // a count the cache's size_t cannot carry
        return call_cache([&] { return c.admit(handles.id_of(o.seq), static_cast<std::size_t>(o.count)); });
      case op_kind::retract: return call_cache([&] { return c.retract(handles.id_of(o.seq)); });
      case op_kind::abort: {
        op_outcome r = call_cache([&] { return c.abort(handles.id_of(o.seq)); });
        if (r.accepted) handles.released(o.seq);
        return r;
      }
      default: return unsupported();
    }
  }
  static void count(const C& c, snapshot& s) {
    s.counters.emplace_back("evictable_blocks", static_cast<std::int64_t>(c.evictable_blocks()));
    s.counters.emplace_back("hit_rows", static_cast<std::int64_t>(c.hit_rows()));
  }
};

/// A registry entry for a prefix cache type; "decode" when it has it.
template <prefix_cache C>
implementation make_implementation(implementation_info info) {
  capability_set caps;
  if (prefix_keyed<C>) caps.add(capability::extra_keys);
  if (prefix_phased<C>) caps.add(capability::phases);
  return block_pool_implementation<C, prefix_calls<C>>(std::move(info), cache_kind::prefix, caps);
}

}  // namespace kvconform
