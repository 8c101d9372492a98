// The C++ concepts a cache type satisfies per kind, and the adapter to the executor's interface.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <type_traits>
#include <utility>

#include "impls/common/errors.h"
#include "oracle/models/model.h"
#include "properties/executor/subject.h"

namespace kvconform {

/// flat(max_len, d_k, d_v) with append(k, v), size() and keys()/values() views (rows(),
/// cols(), (i, j)). Refusals are kvconform::error exceptions or a returned status (see
/// call_cache). No base class is needed.
template <class C>
concept flat_cache = std::constructible_from<C, std::size_t, std::size_t, std::size_t> &&
    requires(C& c, const C& cc, array_view a) {
      c.append(a, a);
      { cc.size() } -> std::convertible_to<std::size_t>;
      { cc.keys()(0, 0) } -> std::convertible_to<double>;
      { cc.values()(0, 0) } -> std::convertible_to<double>;
      { cc.keys().rows() } -> std::convertible_to<std::ptrdiff_t>;
    };

/// The optional decode capability: a free decode_step(q, cache) returning .output and .weights
/// (indexable, with size()), or an optional-like holding them (empty = refused).
template <class C>
concept decoding_cache = requires(const C& cc, array_view a) { decode_step(a, cc); };

/// A flat cache that evicts instead of refusing, and reports absolute positions and total().
template <class C>
concept ring_cache = flat_cache<C> && requires(const C& cc) {
  { cc.total() } -> std::convertible_to<std::int64_t>;
  cc.positions();
};

/// A flat cache that is not a ring (kvconform_add_suite's KIND flat).
template <class C>
concept flat_only_cache = flat_cache<C> && !ring_cache<C>;

/// A type's numeric profile (DESIGN 4), for types that cannot carry a member: specialise with
/// `static constexpr numeric_profile value`.
template <class C>
struct declared_profile {};

/// The profile a type declares (a `declared_profile` specialisation, or a `static constexpr
/// numeric_profile profile` member); double two-pass otherwise.
template <class C>
numeric_profile profile_of() {
  if constexpr (requires { declared_profile<C>::value; }) return declared_profile<C>::value;
  else if constexpr (requires { C::profile; }) return C::profile;
  else return {};
}

/// Maps the exception in flight to a refusal; rethrows anything that is not a kvconform::error.
op_outcome refusal_from_current_exception();

/// A returned status as an outcome: refused when `!s.ok()` (or `!s` for bool-like statuses),
/// with the reason an ADL `kvconform_refusal(s)` gives (a `refusal`), else unspecified.
template <class S>
op_outcome outcome_of_status(const S& s) {
  op_outcome r;
  if constexpr (requires { s.ok(); }) r.accepted = static_cast<bool>(s.ok());
  else r.accepted = static_cast<bool>(s);
  if (r.accepted) return r;
  r.reason = refuse_unspecified;
  if constexpr (requires { kvconform_refusal(s); }) r.reason = static_cast<unsigned>(kvconform_refusal(s));
  return r;
}

/// Runs one cache call under either error style: exceptions, or a returned status.
template <class F>
op_outcome call_cache(F&& f) {
  try {
    if constexpr (std::is_void_v<decltype(f())>) {
      f();
      return {};
    } else {
      return outcome_of_status(f());
    }
  } catch (...) {
    return refusal_from_current_exception();
  }
}

/// Runs `body(outcome)`; a kvconform::error it throws becomes the refusal (anything else escapes).
template <class F>
op_outcome outcome_of(F&& body) {
  op_outcome r;
  try {
    body(r);
  } catch (...) {
    return refusal_from_current_exception();
  }
  return r;
}

/// Appends a matrix view's rows (rows(), cols(), (i, j)) to `out`, row-major: how every adapter
/// reads a cache's views into a snapshot.
template <class M>
void copy_rows(const M& m, std::vector<double>& out) {
  for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(m.rows()); ++i)
    for (std::ptrdiff_t j = 0; j < static_cast<std::ptrdiff_t>(m.cols()); ++j) out.push_back(m(i, j));
}

/// Copies a decode result's .output and .weights (indexable, with size()) into an outcome.
template <class D>
void copy_decode(const D& d, op_outcome& r) {
  for (std::size_t i = 0; i < static_cast<std::size_t>(d.output.size()); ++i) r.output.push_back(d.output[i]);
  for (std::size_t i = 0; i < static_cast<std::size_t>(d.weights.size()); ++i) r.weights.push_back(d.weights[i]);
}

/// A decode result as an outcome; an empty optional-like result is a refusal.
template <class D>
op_outcome outcome_of_decode(const D& d) {
  if constexpr (requires { d.has_value(); *d; }) {
    if (!d.has_value()) return outcome_of_status(false);
    return outcome_of_decode(*d);
  } else {
    op_outcome r;
    copy_decode(d, r);
    return r;
  }
}

/// A registry entry for C of `kind`, whose caches `Subject` (the kind's adapter of C) wraps.
template <class C, class Subject>
implementation adapted_implementation(std::string name, cache_kind kind, std::string group, std::string note, bool decodes) {
  implementation i;
  i.name = std::move(name);
  i.kind = kind;
  i.group = std::move(group);
  i.note = std::move(note);
  i.profile = profile_of<C>();
  if (decodes) i.capabilities.push_back("decode");
  i.make = [](const cache_config& c) { return std::make_unique<Subject>(c); };
  return i;
}

/// Adapts any flat_cache (and, when it has them, ring positions) to `subject`.
template <flat_cache C>
class rows_subject final : public subject {
 public:
  explicit rows_subject(const cache_config& c) : cache_(c.capacity, c.d_k, c.d_v) {}

  op_outcome apply(const call& c) override {
    if (c.o.kind == op_kind::append) return call_cache([&] { return cache_.append(c.k, c.v); });
    if constexpr (decoding_cache<C>) {
      op_outcome r;
      const op_outcome refused = call_cache([&] {
        r = outcome_of_decode(decode_step(c.q, std::as_const(cache_)));
      });
      return refused.accepted ? r : refused;
    } else {
      op_outcome r;
      r.unsupported = true;
      return r;
    }
  }

  snapshot observe() override {
    const C& c = cache_;
    snapshot s;
    stream st;
    st.d_k = static_cast<std::size_t>(c.keys().cols());
    st.d_v = static_cast<std::size_t>(c.values().cols());
    copy_rows(c.keys(), st.keys);
    copy_rows(c.values(), st.values);
    s.counters.emplace_back("size", static_cast<std::int64_t>(c.size()));
    if constexpr (ring_cache<C>) {
      for (auto p : c.positions()) st.positions.push_back(static_cast<std::int64_t>(p));
      s.counters.emplace_back("total", static_cast<std::int64_t>(c.total()));
    }
    s.streams.push_back(std::move(st));
    return s;
  }

 private:
  C cache_;
};

/// A registry entry for a flat-kind type (ring when it is a ring_cache).
template <flat_cache C>
implementation make_implementation(std::string name, std::string group, std::string note) {
  return adapted_implementation<C, rows_subject<C>>(std::move(name), ring_cache<C> ? cache_kind::ring : cache_kind::flat,
                                                    std::move(group), std::move(note), decoding_cache<C>);
}

}  // namespace kvconform
