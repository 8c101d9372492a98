// The prefix_cache concept and its adapter: trace handles, tokens and the cache's counters.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <string>
#include <utility>

#include <kvconform/array_view.h>
#include "properties/executor/adapter.h"
#include "properties/executor/handles.h"

namespace kvconform {

/// The sequence id type of a prefix cache: what create(tokens) gives (directly or inside a result).
template <class C>
using prefix_id_t = unwrapped_t<decltype(std::declval<C&>().create(std::span<const std::int64_t>{}))>;

/// prefix(num_blocks, block_size, d_k, d_v) whose sequences are integral ids from create(tokens)
/// and fork(seq) (directly, or inside a result_like: empty = refused); append(seq, k, v, tokens)
/// and release(seq) (void, or a status); keys(seq)/values(seq) matrix views; and the
/// introspection the properties judge: num_blocks(), free_blocks(), evictable_blocks(),
/// hit_rows() (rows every create found cached), block_table(seq) and ref_count(block).
template <class C>
concept prefix_cache = std::constructible_from<C, std::size_t, std::size_t, std::size_t, std::size_t> &&
    std::integral<prefix_id_t<C>> &&
    requires(C& c, const C& cc, prefix_id_t<C> s, array_view a, std::span<const std::int64_t> t, std::size_t block) {
  requires std::same_as<unwrapped_t<decltype(c.fork(s))>, prefix_id_t<C>>;
  c.release(s);
  c.append(s, a, a, t);
  { cc.keys(s) } -> matrix_view;
  { cc.values(s) } -> matrix_view;
  { cc.num_blocks() } -> std::convertible_to<std::size_t>;
  { cc.free_blocks() } -> std::convertible_to<std::size_t>;
  { cc.evictable_blocks() } -> std::convertible_to<std::size_t>;
  { cc.hit_rows() } -> std::convertible_to<std::size_t>;
  { *std::begin(cc.block_table(s)) } -> std::convertible_to<std::size_t>;
  std::end(cc.block_table(s));
  { cc.ref_count(block) } -> std::convertible_to<std::size_t>;
};

/// The optional decode capability: c.decode_step(seq, q) giving a decode result (or a result_like of one).
template <class C>
concept prefix_decoding = requires(const C& cc, prefix_id_t<C> s, array_view a) {
  requires decode_result_like<unwrapped_t<decltype(cc.decode_step(s, a))>>;
};

/// Adapts any prefix_cache to `subject`, trace handles to ids (properties/executor/handles.h).
template <prefix_cache C>
class prefix_subject final : public subject {
 public:
  explicit prefix_subject(const cache_config& c) : cache_(c.capacity, c.block_size, c.d_k, c.d_v), config_(c) {}

  op_outcome apply(const call& c) override {
    const op& o = c.o;
    const std::span<const std::int64_t> tokens(o.tokens);
    switch (o.kind) {
      case op_kind::create:
        handles_.issue();  // the handle is used up even if create is refused
        return call_cache([&] { return cache_.create(tokens); }, [&](op_outcome&, id s) { handles_.give(s); });
      case op_kind::fork: {
        const id from = handles_.id_of(o.seq);
        handles_.issue();
        return call_cache([&] { return cache_.fork(from); }, [&](op_outcome&, id s) { handles_.give(s); });
      }
      case op_kind::release: {
        op_outcome r = call_cache([&] { return cache_.release(handles_.id_of(o.seq)); });
        if (r.accepted) handles_.released(o.seq);
        return r;
      }
      case op_kind::append: return call_cache([&] { return cache_.append(handles_.id_of(o.seq), c.k, c.v, tokens); });
      case op_kind::decode:
        if constexpr (prefix_decoding<C>)
          return decode_outcome([&] { return std::as_const(cache_).decode_step(handles_.id_of(o.seq), c.q); });
        else
          return unsupported();
      default: return unsupported();  // the vocabulary of other kinds
    }
  }

  snapshot observe() override {
    snapshot s;
    observe_sequences(std::as_const(cache_), handles_, config_, s);
    s.counters.emplace_back("free_blocks", static_cast<std::int64_t>(cache_.free_blocks()));
    s.counters.emplace_back("evictable_blocks", static_cast<std::int64_t>(cache_.evictable_blocks()));
    s.counters.emplace_back("hit_rows", static_cast<std::int64_t>(cache_.hit_rows()));
    return s;
  }

 private:
  using id = prefix_id_t<C>;
  C cache_;
  cache_config config_;
  sequence_handles<id> handles_;
};

/// A registry entry for a prefix cache type; "decode" when it has it.
template <prefix_cache C>
implementation make_implementation(implementation_info info) {
  capability_set caps;
  if (prefix_decoding<C>) caps.add(capability::decode);
  return adapted_implementation<C, prefix_subject<C>>(std::move(info), cache_kind::prefix, caps);
}

}  // namespace kvconform
