// What every kind's adapter shares: views, decode results, both error styles, profiles and registration.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include <kvconform/errors.h>
#include "oracle/numeric/numeric_profile.h"
#include "properties/executor/subject.h"
#include "properties/trace/kind_spec.h"
#include "properties/trace/refusal.h"

namespace kvconform {

/// A read-only matrix view: rows(), cols() and (i, j) (Eigen matrices and maps have them).
template <class M>
concept matrix_view = requires(const M& m, std::ptrdiff_t i) {
  { m.rows() } -> std::convertible_to<std::ptrdiff_t>;
  { m.cols() } -> std::convertible_to<std::ptrdiff_t>;
  { m(i, i) } -> std::convertible_to<double>;
};

/// A decode result: `.output` and `.weights`, each with size() and [i].
template <class D>
concept decode_result_like = requires(const D& d, std::ptrdiff_t i) {
  { d.output.size() } -> std::convertible_to<std::ptrdiff_t>;
  { d.output[i] } -> std::convertible_to<double>;
  { d.weights.size() } -> std::convertible_to<std::ptrdiff_t>;
  { d.weights[i] } -> std::convertible_to<double>;
};

/// A returned status: `bool`, or a class with ok() and no value() (absl::Status-like). A false
/// status is a refusal, with the reason an ADL `kvconform_refusal(status)` gives, if any.
template <class S>
concept status_like = std::same_as < std::remove_cvref_t<S>,
bool > || (
              requires(const S& s) {
                { s.ok() } -> std::convertible_to<bool>;
              } &&
              !requires(const S& s) { s.value(); });

/// A returned value that may be absent: optional- or expected-like (has_value(), *r) or
/// StatusOr-like (ok(), value()). An absent value is a refusal, as for a status.
template <class R>
concept result_like = requires(const R& r) {
  { r.has_value() } -> std::convertible_to<bool>;
  *r;
}
|| requires(const R& r) {
  { r.ok() } -> std::convertible_to<bool>;
  r.value();
};

/// What a cache call gives when it succeeds: R itself, or the value inside a result_like R.
template <class R>
struct unwrapped {
  using type = R;
};
template <result_like R>
requires requires(const R& r) { *r; }
struct unwrapped<R> {
  using type = std::remove_cvref_t<decltype(*std::declval<const R&>())>;
};
template <result_like R>
requires(!requires(const R& r) { *r; }) struct unwrapped<R> {
  using type = std::remove_cvref_t<decltype(std::declval<const R&>().value())>;
};
template <class R>
using unwrapped_t = typename unwrapped<std::remove_cvref_t<R>>::type;

/// A type's numeric profile (docs/numerics.md §2), for types that cannot carry a member:
/// specialise with `static constexpr numeric_profile value`.
template <class C>
struct declared_profile {};

/// The profile a type declares (a `declared_profile` specialisation, or a `static constexpr
/// numeric_profile profile` member); double two-pass otherwise.
template <class C>
constexpr numeric_profile profile_of() {
  if constexpr (requires { declared_profile<C>::value; })
    return declared_profile<C>::value;
  else if constexpr (requires { C::profile; })
    return C::profile;
  else
    return {};
}

/// A type's policies (docs/design.md §2.4), for types that cannot carry a member: specialise with
/// `static constexpr kvconform::policy value[]`.
template <class C>
struct declared_policies {};

/// The policies a type declares (a `declared_policies` specialisation, or a `static constexpr kvconform::policy
/// policies[]` member); none otherwise: the kind's contract. Checked against its kind by registry_problems.
template <class C>
policy_set policies_of() {
  policy_set out;
  auto add = [&](const auto& declared) {
    for (const policy& p : declared) out.declare(p.name, p.choice);
  };
  if constexpr (requires { declared_policies<C>::value; })
    add(declared_policies<C>::value);
  else if constexpr (requires { C::policies; })
    add(C::policies);
  return out;
}

/// Maps the exception in flight to a refusal; rethrows anything that is not a kvconform::error.
op_outcome refusal_from_current_exception();

template <status_like S>
bool status_ok(const S& s) {
  if constexpr (std::same_as<std::remove_cvref_t<S>, bool>)
    return s;
  else
    return static_cast<bool>(s.ok());
}

/// The refusal a false status or an absent result stands for.
template <class S>
op_outcome refusal_of(const S& s) {
  op_outcome r;
  r.accepted = false;
  r.reason = refuse_unspecified;
  if constexpr (requires { kvconform_refusal(s); }) r.reason = static_cast<unsigned>(kvconform_refusal(s));
  return r;
}

/// Runs one cache call under either error style and returns its outcome: a kvconform::error
/// thrown, a false status or an absent result is a refusal (anything else thrown escapes, for
/// the executor to report). When the call succeeds with a value (the value inside a result),
/// `use(outcome, value)` reads it (a decode's numbers, a new sequence id, preempted victims).
template <class Call, class Use>
op_outcome call_cache(Call&& call, Use&& use) {
  op_outcome r;
  try {
    using R = decltype(call());
    if constexpr (std::is_void_v<R>) {
      call();
    } else {
      decltype(auto) got = call();
      if constexpr (status_like<R>) {
        if (!status_ok(got)) return refusal_of(got);
      } else if constexpr (result_like<R>) {
        if constexpr (requires { got.has_value(); }) {
          if (!got.has_value()) return refusal_of(got);
          use(r, *got);
        } else {
          if (!got.ok()) return refusal_of(got);
          use(r, got.value());
        }
      } else {
        use(r, got);
      }
    }
  } catch (...) {
    return refusal_from_current_exception();
  }
  return r;
}
/// A call whose value, if any, is not needed.
template <class Call>
op_outcome call_cache(Call&& call) {
  return call_cache(std::forward<Call>(call), [](op_outcome&, const auto&) {});
}

/// Appends a matrix view's rows to `out`, row-major: how every adapter reads a cache's views.
template <matrix_view M>
void copy_rows(const M& m, std::vector<double>& out) {
  const auto rows = static_cast<std::ptrdiff_t>(m.rows()), cols = static_cast<std::ptrdiff_t>(m.cols());
  // A dense row-major view (an Eigen matrix or map) is one block copy; a copy per element would
  // dominate observing a long window after every op.
  if constexpr (requires {
                  m.data();
                  m.innerStride();
                  m.outerStride();
                  M::IsRowMajor;
                }) {
    if (M::IsRowMajor && m.innerStride() == 1 && (rows < 2 || m.outerStride() == cols)) {
      if (rows * cols > 0) out.insert(out.end(), m.data(), m.data() + rows * cols);
      return;
    }
  }
  std::size_t at = out.size();
  out.resize(at + static_cast<std::size_t>(rows * cols));
  for (std::ptrdiff_t i = 0; i < rows; ++i)
    for (std::ptrdiff_t j = 0; j < cols; ++j) out[at++] = m(i, j);
}

/// Passes the config's per-tensor scales (docs/numerics.md §6.1) to a cache that takes them with
/// set_scales(k_scale, v_scale); a cache without the member never sees them.
template <class C>
void pass_scales(C& c, const cache_config& g) {
  if constexpr (requires { c.set_scales(1.0, 1.0); }) c.set_scales(g.k_scale, g.v_scale);
}

/// Copies what a cache with integer groups exposes (docs/numerics.md §6.2) into a snapshot side:
/// `scales()` and, when the cache has them, `zeros()` (the minima of asymmetric groups), each a
/// matrix view (one row per quantized row or per group) or absent.
template <class Scales, class Zeros>
void copy_groups(group_view& g, Scales scales, Zeros zeros) {
  if constexpr (!std::is_same_v<decltype(scales()), void>) copy_rows(scales(), g.scales);
  if constexpr (!std::is_same_v<decltype(zeros()), void>) copy_rows(zeros(), g.zeros);
}

/// A matrix view stored as row-major doubles with rows adjacent (an Eigen row-major matrix or
/// map of double): its rows can be compared where they lie.
template <class M>
concept row_major_doubles = matrix_view<M> && requires(const M& m) {
  { m.data() } -> std::convertible_to<const double*>;
  { m.outerStride() } -> std::convertible_to<std::ptrdiff_t>;
  { m.innerStride() } -> std::convertible_to<std::ptrdiff_t>;
  requires bool(M::IsRowMajor);
};

/// A view a cache returned, kept for as long as rows read from it are: a temporary (a view object
/// or a gathered copy) is moved into shared storage, a reference to the cache's own is not copied.
template <class R>
std::shared_ptr<const std::remove_cvref_t<R>> hold(R&& r) {
  using V = std::remove_cvref_t<R>;
  if constexpr (std::is_lvalue_reference_v<R>)
    return std::shared_ptr<const V>(std::shared_ptr<const V>(), &r);  // non-owning
  else
    return std::make_shared<const V>(std::forward<R>(r));
}

/// Reads a matrix view's rows into `out` and gives its width. Row-major doubles are read in place
/// (a view the cache returned by value, such as a gathered copy, is kept alive with them, so it is
/// made once per observation); any other view is copied element by element.
template <class M>
requires matrix_view<std::remove_cvref_t<M>> std::size_t read_rows(M&& m, row_data& out) {
  using V = std::remove_cvref_t<M>;
  const auto rows = static_cast<std::size_t>(m.rows()), cols = static_cast<std::size_t>(m.cols());
  if constexpr (row_major_doubles<V>) {
    if (m.innerStride() == 1 && (rows <= 1 || static_cast<std::size_t>(m.outerStride()) == cols)) {
      const auto held = hold(std::forward<M>(m));
      out.add(held->data(), rows * cols, held);
      return cols;
    }
  }
  auto copied = std::make_shared<std::vector<double>>();
  copied->reserve(rows * cols);
  copy_rows(m, *copied);
  out.add(copied->data(), copied->size(), copied);
  return cols;
}

/// Copies a decode result's numbers into an outcome.
template <decode_result_like D>
void copy_decode(const D& d, op_outcome& r) {
  for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(d.output.size()); ++i) r.output.push_back(d.output[i]);
  for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(d.weights.size()); ++i) r.weights.push_back(d.weights[i]);
}

/// The outcome of a decode call: its numbers, or its refusal.
template <class Call>
op_outcome decode_outcome(Call&& call) {
  return call_cache(std::forward<Call>(call), [](op_outcome& r, const auto& d) { copy_decode(d, r); });
}

/// An op the implementation cannot do: NOT SUPPORTED, never a pass.
inline op_outcome unsupported() {
  op_outcome r;
  r.unsupported = true;
  return r;
}

/// A refusal the adapter decides before calling the cache (an argument the cache's types cannot carry).
inline op_outcome refused(unsigned reason) {
  op_outcome r;
  r.accepted = false;
  r.reason = reason;
  return r;
}

/// A registry entry for C of `kind`, whose caches `Subject` (the kind's adapter of C) wraps.
template <class C, class Subject>
implementation adapted_implementation(implementation_info info, cache_kind kind, capability_set capabilities) {
  implementation i;
  static_cast<implementation_info&>(i) = std::move(info);
  i.kind = kind;
  i.profile = profile_of<C>();
  i.policies = normalised(spec_of(kind), policies_of<C>());
  i.capabilities = capabilities;
  i.make = [](const cache_config& c) { return std::make_unique<Subject>(c); };
  return i;
}

}  // namespace kvconform
