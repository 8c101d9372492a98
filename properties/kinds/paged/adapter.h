// The paged_cache concept and its adapter: trace handles to the implementation's sequence ids and back.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <kvconform/array_view.h>
#include "properties/executor/adapter.h"
#include "properties/executor/handles.h"

namespace kvconform {

/// The sequence id type of a paged cache: what create() gives (directly or inside a result).
template <class C>
using sequence_id_t = unwrapped_t<decltype(std::declval<C&>().create())>;

/// paged(num_blocks, block_size, d_k, d_v) whose sequences are integral ids from create() and
/// fork(seq) (directly, or inside a result_like: empty = refused); append(seq, k, v) and
/// release(seq) (void, or a status); keys(seq)/values(seq) matrix views; and the introspection the
/// block properties judge: num_blocks(), free_blocks(), block_table(seq) (block numbers in
/// [0, num_blocks)), ref_count(block) and bytes_in_use(). Refusals are kvconform::error
/// exceptions or returned statuses. No base class is needed.
template <class C>
concept paged_cache = std::constructible_from<C, std::size_t, std::size_t, std::size_t, std::size_t> &&
    std::integral<sequence_id_t<C>> &&
    requires(C& c, const C& cc, sequence_id_t<C> s, array_view a, std::size_t block) {
  requires std::same_as<unwrapped_t<decltype(c.fork(s))>, sequence_id_t<C>>;
  c.release(s);
  c.append(s, a, a);
  { cc.keys(s) } -> matrix_view;
  { cc.values(s) } -> matrix_view;
  { cc.num_blocks() } -> std::convertible_to<std::size_t>;
  { cc.free_blocks() } -> std::convertible_to<std::size_t>;
  { *std::begin(cc.block_table(s)) } -> std::convertible_to<std::size_t>;
  std::end(cc.block_table(s));
  { cc.ref_count(block) } -> std::convertible_to<std::size_t>;
  { cc.bytes_in_use() } -> std::convertible_to<std::size_t>;
};

/// The optional decode capability: c.decode_step(seq, q) giving a decode result (or a result_like of one).
template <class C>
concept paged_decoding = requires(const C& cc, sequence_id_t<C> s, array_view a) {
  requires decode_result_like<unwrapped_t<decltype(cc.decode_step(s, a))>>;
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

/// Adapts any paged_cache to `subject`, trace handles to ids (properties/executor/handles.h) and
/// preempted ids back to handles.
template <paged_cache C>
class paged_subject final : public subject {
 public:
  explicit paged_subject(const cache_config& c) : cache_(construct(c)), config_(c) { pass_scales(cache_, c); }

  op_outcome apply(const call& c) override {
    if (config_.preempt && !paged_preempting<C>) return unsupported();
    const op& o = c.o;
    switch (o.kind) {
      case op_kind::create:
        handles_.issue();  // the handle is used up even if create is refused
        return call_cache([&] { return cache_.create(); }, [&](op_outcome&, id s) { handles_.give(s); });
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
      case op_kind::append:
        return call_cache([&] { return cache_.append(handles_.id_of(o.seq), c.k, c.v); },
                          [&](op_outcome& r, const auto& victims) {
                            if constexpr (paged_preempting<C>)
                              for (const auto& v : victims) r.preempted.push_back(handles_.release_id(v));
                          });
      case op_kind::decode:
        if constexpr (paged_decoding<C>)
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
    s.counters.emplace_back("bytes_in_use", static_cast<std::int64_t>(cache_.bytes_in_use()));
    return s;
  }

 private:
  using id = sequence_id_t<C>;

  static C construct(const cache_config& c) {
    if constexpr (paged_preempting<C>)
      return C(c.capacity, c.block_size, c.d_k, c.d_v, c.preempt);
    else
      return C(c.capacity, c.block_size, c.d_k, c.d_v);
  }

  C cache_;
  cache_config config_;
  sequence_handles<id> handles_;
};

/// A registry entry for a paged cache type; "decode" and "preempt" when it has them.
template <paged_cache C>
implementation make_implementation(implementation_info info) {
  if constexpr (requires { C::profile; })
    static_assert(C::profile.keys.chunk() == 1 && C::profile.values.chunk() == 1,
                  "a paged cache's blocks hold final rows: declare element formats or per-token groups without a "
                  "residual (docs/numerics.md §6.3)");
  capability_set caps;
  if (paged_decoding<C>) caps.add(capability::decode);
  if (paged_preempting<C>) caps.add(capability::preempt);
  return adapted_implementation<C, paged_subject<C>>(std::move(info), cache_kind::paged, caps);
}

}  // namespace kvconform
