// The adapter of the rows family (flat, ring, growing): append, decode and the views of one stream.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <utility>

#include <kvconform/array_view.h>
#include "properties/executor/adapter.h"

namespace kvconform {

/// Constructed as C(capacity, d_k, d_v), with append(k, v) (void, or a status), size() and
/// keys()/values() matrix views of the held rows in order. No base class is needed.
template <class C>
concept rows_cache = std::constructible_from<C, std::size_t, std::size_t, std::size_t> &&
    requires(C& c, const C& cc, array_view a) {
  c.append(a, a);
  { cc.size() } -> std::convertible_to<std::size_t>;
  { cc.keys() } -> matrix_view;
  { cc.values() } -> matrix_view;
};

/// The optional decode capability: a free decode_step(q, cache) (found by ADL) returning a decode
/// result, or a result_like holding one (empty = refused).
template <class C>
concept rows_decoding = requires(const C& cc, array_view a) {
  requires decode_result_like<unwrapped_t<decltype(decode_step(a, cc))>>;
};

/// The optional prefill capability: c.prefill(k, v, q) appends the m steps of k and v and returns a decode result
/// (or a result_like holding one) whose output is (m, d_v) and weights (m, n + m) row-major, for n rows held
/// before: query i's weights over those rows and the chunk's, 0 where it does not see a row (docs/design.md §2.3).
template <class C>
concept rows_prefilling = requires(C& c, array_view a) {
  requires decode_result_like<unwrapped_t<decltype(c.prefill(a, a, a))>>;
};

/// Declared attention (docs/numerics.md §7): a cache whose profile declares it decodes with decode_step(q, sinks,
/// cache) and prefills with c.prefill(k, v, q, sinks), given each op's sink logits; one declaring plain attention keeps
/// the calls without them (a mutant's own two-argument decode_step is never bypassed).
template <class C>
concept rows_taking_sinks = (!profile_of<C>().attention.plain()) && requires(C& c, const C& cc, array_view a) {
  requires decode_result_like<unwrapped_t<decltype(decode_step(a, a, cc))>>;
  requires decode_result_like<unwrapped_t<decltype(c.prefill(a, a, a, a))>>;
};

/// Sparse top-k (docs/numerics.md §7.4): a cache whose profile declares it also takes each op's indexer inputs:
/// c.append(k, v, index), decode_step(q, sinks, index, cache) and c.prefill(k, v, q, sinks, index).
template <class C>
concept rows_taking_index = (profile_of<C>().attention.top_k > 0) &&
                            requires(C& c, const C& cc, array_view a, indexer_view x) {
  c.append(a, a, x);
  requires decode_result_like<unwrapped_t<decltype(decode_step(a, a, x, cc))>>;
  requires decode_result_like<unwrapped_t<decltype(c.prefill(a, a, a, a, x))>>;
};

/// The optional rollback capability: c.rollback(n) drops the newest n steps (void, or a status).
template <class C>
concept rolls_back = requires(C& c, std::size_t n) {
  c.rollback(n);
};

/// A window with a reserve, constructed as C(window, d_k, d_v, keep, reserve): it holds W + reserve rows and
/// attends the last W, so that a rollback of up to `reserve` steps restores the earlier window.
template <class C>
concept keeps_reserve = std::constructible_from<C, std::size_t, std::size_t, std::size_t, std::size_t, std::size_t>;

/// Absolute positions and the count of steps ever appended, as a sliding window reports them.
template <class C>
concept reports_positions = requires(const C& cc) {
  { cc.total() } -> std::convertible_to<std::int64_t>;
  { *std::begin(cc.positions()) } -> std::convertible_to<std::int64_t>;
  std::end(cc.positions());
};

/// The optional attention sinks of a window: constructed with a fourth argument `keep`, the first
/// `keep` steps ever appended are never evicted.
template <class C>
concept keeps_sinks = std::constructible_from<C, std::size_t, std::size_t, std::size_t, std::size_t>;

/// The rows a growing cache has reserved (whole steps of its configured growth step).
template <class C>
concept reports_reserved = requires(const C& cc) {
  { cc.reserved() } -> std::convertible_to<std::size_t>;
};

/// Adapts a rows_cache to `subject` (with positions and total, or the reserved rows, when it
/// reports them). A config with sinks on a type without them is NOT SUPPORTED.
template <rows_cache C>
class rows_subject final : public subject {
  static_assert(profile_of<C>().attention.top_k == 0 || rows_taking_index<C>,
                "a cache declaring sparse top-k takes append(k, v, indexer_view), decode_step(q, sinks, indexer_view, "
                "cache) and prefill(k, v, q, sinks, indexer_view) (docs/numerics.md §7.4)");

 public:
  explicit rows_subject(const cache_config& c)
      : cache_(construct(c)),
        unsupported_config_((c.keep > 0 && !keeps_sinks<C>) || (c.reserve > 0 && !keeps_reserve<C>)) {
    pass_scales(cache_, c);
  }

  op_outcome apply(const call& c) override {
    if (unsupported_config_) return unsupported();
    switch (c.o.kind) {
      case op_kind::append:
        if constexpr (rows_taking_index<C>) return call_cache([&] { return cache_.append(c.k, c.v, index_of(c)); });
        return call_cache([&] { return cache_.append(c.k, c.v); });
      case op_kind::decode:
        if constexpr (rows_taking_index<C>)
          return decode_outcome([&] { return decode_step(c.q, c.sinks, index_of(c), std::as_const(cache_)); });
        else if constexpr (rows_taking_sinks<C>)
          return decode_outcome([&] { return decode_step(c.q, c.sinks, std::as_const(cache_)); });
        else if constexpr (rows_decoding<C>)
          return decode_outcome([&] { return decode_step(c.q, std::as_const(cache_)); });
        break;
      case op_kind::prefill:
        if constexpr (rows_taking_index<C>)
          return decode_outcome([&] { return cache_.prefill(c.k, c.v, c.q, c.sinks, index_of(c)); });
        else if constexpr (rows_taking_sinks<C>)
          return decode_outcome([&] { return cache_.prefill(c.k, c.v, c.q, c.sinks); });
        else if constexpr (rows_prefilling<C>)
          return decode_outcome([&] { return cache_.prefill(c.k, c.v, c.q); });
        break;
      case op_kind::rollback:
        // A negative count is a refusal the model states (`index`); a size_t cannot carry it.
        if (c.o.count < 0) return refused(refuse_index);
        if constexpr (rolls_back<C>)
          return call_cache([&] { return cache_.rollback(static_cast<std::size_t>(c.o.count)); });
        break;
      default: break;
    }
    return unsupported();
  }

  snapshot observe() override {
    const C& c = cache_;
    snapshot s;
    stream st;
    st.d_k = read_rows(c.keys(), st.keys);  // each view once: a ring's views are copies, long on a long window
    st.d_v = read_rows(c.values(), st.values);
    if constexpr (requires { c.key_scales(); })
      copy_groups(
          st.key_groups, [&] { return c.key_scales(); },
          [&] {
            if constexpr (requires { c.key_zeros(); }) return c.key_zeros();
          });
    if constexpr (requires { c.value_scales(); })
      copy_groups(
          st.value_groups, [&] { return c.value_scales(); },
          [&] {
            if constexpr (requires { c.value_zeros(); }) return c.value_zeros();
          });
    s.counters.emplace_back("size", static_cast<std::int64_t>(c.size()));
    if constexpr (reports_positions<C>) {
      const auto& positions = c.positions();
      st.positions.assign(std::begin(positions), std::end(positions));
      s.counters.emplace_back("total", static_cast<std::int64_t>(c.total()));
    }
    if constexpr (reports_reserved<C>)
      s.counters.emplace_back("reserved_rows", static_cast<std::int64_t>(c.reserved()));
    s.streams.push_back(std::move(st));
    return s;
  }

 private:
  static indexer_view index_of(const call& c) { return {c.index_k, c.index_q, c.index_w}; }
  static C construct(const cache_config& c) {
    if constexpr (keeps_reserve<C>)
      return C(c.capacity, c.d_k, c.d_v, c.keep, c.reserve);
    else if constexpr (keeps_sinks<C>)
      return C(c.capacity, c.d_k, c.d_v, c.keep);
    else
      return C(c.capacity, c.d_k, c.d_v);
  }
  C cache_;
  bool unsupported_config_;  ///< sinks or a reserve the type cannot take: NOT SUPPORTED
};

/// A registry entry for a rows_cache of `kind`.
template <rows_cache C>
implementation rows_implementation(implementation_info info, cache_kind kind) {
  capability_set caps;
  if (rows_decoding<C> || rows_taking_sinks<C> || rows_taking_index<C>) caps.add(capability::decode);
  if (keeps_sinks<C>) caps.add(capability::sinks);
  if (rows_prefilling<C> || rows_taking_sinks<C> || rows_taking_index<C>) caps.add(capability::prefill);
  if (rolls_back<C>) caps.add(capability::rollback);
  return adapted_implementation<C, rows_subject<C>>(std::move(info), kind, caps);
}

}  // namespace kvconform
