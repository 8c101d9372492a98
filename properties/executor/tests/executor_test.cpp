// The executor's checks can fail: each small broken cache here trips exactly the check meant for it.
#include <gtest/gtest.h>

#include "impls/flat/flat.h"
#include "properties/executor/executor.h"
#include "properties/generate/property.h"
#include "properties/kinds/flat/adapter.h"

namespace kv = kvconform;

namespace {
kv::trace base_trace() {
  kv::trace t;
  t.config = {kv::cache_kind::flat, 4, 2, 2};
  const kv::op a1{.kind = kv::op_kind::append,
                  .k = kv::tensor::matrix(2, 2, {1, 0, 0, 1}),
                  .v = kv::tensor::matrix(2, 2, {1, 2, 3, 4})};
  const kv::op a2{.kind = kv::op_kind::append, .k = kv::tensor::vector({1, 1}), .v = kv::tensor::vector({5, 6})};
  const kv::op d{.kind = kv::op_kind::decode, .q = kv::tensor::vector({1, 0})};
  t.ops = {a1, a2, d, a2, d};
  return t;
}

template <class C>
std::string failing_check(const kv::trace& t = base_trace()) {
  const auto impl = kv::make_implementation<C>({"under-test"});
  const kv::verdict v = kv::run_trace(t, impl);
  return v.ok() ? "" : v.fail->check;
}

/// Keeps a pointer to the caller's keys instead of a copy.
struct aliasing : kv::flat {
  using basic_flat::basic_flat;
  const double* first = nullptr;
  void append(kv::array_view k, kv::array_view v) {
    if (!first) first = k.data;
    basic_flat::append(k, v);
  }
  Eigen::Map<const row_matrix> keys() const {
    return first ? Eigen::Map<const row_matrix>(first, 1, 2) : basic_flat::keys();
  }
};
struct modifies_input : kv::flat {
  using basic_flat::basic_flat;
  void append(kv::array_view k, kv::array_view v) {
    basic_flat::append(k, v);
    const_cast<double*>(k.data)[0] = 0;
  }
};
struct writes_past_input : kv::flat {
  using basic_flat::basic_flat;
  void append(kv::array_view k, kv::array_view v) {
    basic_flat::append(k, v);
    const_cast<double*>(k.data)[k.size()] = 0;
  }
};
struct whole_buffer_views : kv::flat {
  using basic_flat::basic_flat;
  view keys() const {
    return {basic_flat::keys().data(), static_cast<Eigen::Index>(max_len()), static_cast<Eigen::Index>(d_k())};
  }
};
/// A flat cache with no decode of its own.
struct storage_only {
  kv::flat inner;
  storage_only(std::size_t n, std::size_t dk, std::size_t dv) : inner(n, dk, dv) {}
  void append(kv::array_view k, kv::array_view v) { inner.append(k, v); }
  std::size_t size() const { return inner.size(); }
  auto keys() const { return inner.keys(); }
  auto values() const { return inner.values(); }
};
struct no_scale : storage_only {
  using storage_only::storage_only;
};
/// Declares bf16 storage but keeps doubles.
struct stores_more_than_bf16 : kv::flat {
  using basic_flat::basic_flat;
  static constexpr kv::numeric_profile profile{.keys = kv::formats::bf16, .values = kv::formats::bf16};
};
kv::decode_result decode_step(kv::array_view q, const no_scale& c) {  // forgets 1/sqrt(d_k)
  std::vector<double> q2(q.data, q.data + q.size());
  for (double& x : q2) x *= std::sqrt(double(c.inner.d_k()));
  return kv::decode_step(kv::array_view(q2.data(), {q2.size()}), c.inner);
}
}  // namespace

TEST(Executor, ReferencePassesWithWorstRatioBelowPointOne) {
  const auto impl = kv::make_implementation<kv::flat>({"flat"});
  const kv::verdict v = kv::run_trace(base_trace(), impl);
  ASSERT_TRUE(v.ok()) << v.fail->message;
  EXPECT_EQ(v.stats.decodes, 2u);
  EXPECT_LT(v.stats.worst_ratio, 0.1);
}

TEST(Executor, EachCheckCatchesItsBug) {
  EXPECT_EQ(failing_check<aliasing>(), "state");
  EXPECT_EQ(failing_check<modifies_input>(), "input-modified");
  EXPECT_EQ(failing_check<writes_past_input>(), "stray-write");
  EXPECT_EQ(failing_check<whole_buffer_views>(), "state");
  EXPECT_EQ(failing_check<no_scale>(), "decode-weights");  // the seed example's output is scale-invariant
}

TEST(Executor, MissingDecodeIsNotSupportedNeverAPass) {
  const auto impl = kv::make_implementation<storage_only>({"storage-only"});
  EXPECT_FALSE(impl.capabilities.has(kv::capability::decode));
  EXPECT_EQ(kv::run_trace(base_trace(), impl).fail->check, "not-supported");
}

TEST(Executor, OutcomeMismatchNamesBothSides) {
  kv::trace t = base_trace();
  t.config.capacity = 2;  // the 1-D append must now be refused
  struct never_full : kv::flat {
    never_full(std::size_t, std::size_t dk, std::size_t dv) : basic_flat(8, dk, dv) {}
  };
  const auto impl = kv::make_implementation<never_full>({"never-full"});
  const kv::verdict v = kv::run_trace(t, impl);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.fail->check, "outcome");
  EXPECT_EQ(v.fail->op_index, 1u);
  EXPECT_NE(v.fail->message.find("accepted, expected refused (capacity)"), std::string::npos) << v.fail->message;
}

TEST(Executor, ElementFormatFailureNamesTheFormatAndTheFirstDifference) {
  kv::trace t;
  t.config = {kv::cache_kind::flat, 4, 5, 1};
  t.ops = {{.kind = kv::op_kind::append,
            .k = kv::tensor::vector({1, 1, 1, 1, 1 + 0x1p-10}),
            .v = kv::tensor::vector({1})}};
  const kv::verdict v = kv::run_trace(t, kv::make_implementation<stores_more_than_bf16>({"under-test"}));
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.fail->check, "state");
  EXPECT_NE(v.fail->message.find("(keys are declared bf16: key row 0 value 4 is 1.0009765625, where bf16 stores 1)"),
            std::string::npos)
      << v.fail->message;
}

TEST(Executor, PinnedValuesAreChecked) {
  const auto impl = kv::make_implementation<kv::flat>({"flat"});
  const auto* p = kv::find_property("seed_worked_example", kv::cache_kind::flat);
  ASSERT_NE(p, nullptr);
  kv::trace t = p->fixed();
  EXPECT_TRUE(kv::check_trace(p, t, impl).ok());
  t.ops[2].expect->weights[1] = 0.19777582;
  EXPECT_EQ(kv::check_trace(p, t, impl).fail->check, "pinned");
}
