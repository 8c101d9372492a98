// The adapter every single-sequence kind shares (flat, ring): append, decode and the views of one stream.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "impls/common/array_view.h"
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

/// Absolute positions and the count of steps ever appended, as a sliding window reports them.
template <class C>
concept reports_positions = requires(const C& cc) {
  { cc.total() } -> std::convertible_to<std::int64_t>;
  { *std::begin(cc.positions()) } -> std::convertible_to<std::int64_t>;
  std::end(cc.positions());
};

/// Adapts a rows_cache to `subject` (with positions and total when it reports them).
template <rows_cache C>
class rows_subject final : public subject {
 public:
  explicit rows_subject(const cache_config& c) : cache_(c.capacity, c.d_k, c.d_v) {}

  op_outcome apply(const call& c) override {
    if (c.o.kind == op_kind::append) return call_cache([&] { return cache_.append(c.k, c.v); });
    if constexpr (rows_decoding<C>)
      return decode_outcome([&] { return decode_step(c.q, std::as_const(cache_)); });
    else
      return unsupported();
  }

  snapshot observe() override {
    const C& c = cache_;
    snapshot s;
    stream st;
    st.d_k = read_rows(c.keys(), st.keys);  // each view once: a ring's views are copies
    st.d_v = read_rows(c.values(), st.values);
    s.counters.emplace_back("size", static_cast<std::int64_t>(c.size()));
    if constexpr (reports_positions<C>) {
      for (const auto& p : c.positions()) st.positions.push_back(static_cast<std::int64_t>(p));
      s.counters.emplace_back("total", static_cast<std::int64_t>(c.total()));
    }
    s.streams.push_back(std::move(st));
    return s;
  }

 private:
  C cache_;
};

/// A registry entry for a rows_cache of `kind`.
template <rows_cache C>
implementation rows_implementation(implementation_info info, cache_kind kind) {
  capability_set caps;
  if (rows_decoding<C>) caps.add(capability::decode);
  return adapted_implementation<C, rows_subject<C>>(std::move(info), kind, caps);
}

}  // namespace kvconform
