// The err/bound histogram: its bins, merging, and that a run counts every numeric decode once, by input class.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "impls/flat/flat.h"
#include "properties/executor/executor.h"
#include "properties/executor/ratio_histogram.h"
#include "properties/generate/input_classes.h"
#include "properties/generate/run_property.h"
#include "properties/kinds/flat/adapter.h"
#include "properties/runners/builtin.h"

namespace kv = kvconform;
using hist = kv::ratio_histogram;

namespace {
/// A flat cache whose decode output starts with NaN: a failure with no meaningful ratio.
struct nan_output : kv::flat {
  using basic_flat::basic_flat;
};
kv::decode_result decode_step(kv::array_view q, const nan_output& c) {
  kv::decode_result r = decode_step(q, static_cast<const kv::flat&>(c));
  r.output[0] = std::numeric_limits<double>::quiet_NaN();
  return r;
}

kv::trace three_decodes() {
  kv::trace t;
  t.config = {kv::cache_kind::flat, 4, 2, 2};
  const kv::op a{.kind = kv::op_kind::append, .k = kv::tensor::vector({1, 0.5}), .v = kv::tensor::vector({5, 6})};
  const kv::op d{.kind = kv::op_kind::decode, .q = kv::tensor::vector({1, 0})};
  t.ops = {a, d, a, d, a, d};
  return t;
}
}  // namespace

TEST(RatioHistogram, HalfDecadeBinsFromOneMillionthToOneWithUnderAndOver) {
  EXPECT_EQ(hist::bins, 14u);
  EXPECT_EQ(hist::bin_of(0), 0u);  // an exact result
  EXPECT_EQ(hist::bin_of(9.9e-7), 0u);
  EXPECT_EQ(hist::bin_of(1e-6), 1u);
  EXPECT_EQ(hist::bin_of(3e-6), 1u);
  EXPECT_EQ(hist::bin_of(4e-6), 2u);
  EXPECT_EQ(hist::bin_of(0.05), 10u);
  EXPECT_EQ(hist::bin_of(0.35), 12u);
  EXPECT_EQ(hist::bin_of(1.0), 12u);  // err == bound passes: not in the failing bin
  EXPECT_EQ(hist::bin_of(std::nextafter(1.0, 2.0)), 13u);
  EXPECT_EQ(hist::bin_of(1e300), 13u);
  EXPECT_EQ(hist::bin_of(std::numeric_limits<double>::infinity()), 13u);
  EXPECT_EQ(hist::bin_of(std::numeric_limits<double>::quiet_NaN()), 0u);
  EXPECT_EQ(hist::bin_of(-1), 0u);
}

TEST(RatioHistogram, EachEdgeOpensItsBin) {
  for (std::size_t k = 0; k + 1 < hist::edges.size(); ++k) {
    EXPECT_EQ(hist::bin_of(hist::edges[k]), k + 1) << hist::edges[k];
    EXPECT_EQ(hist::bin_of(std::nextafter(hist::edges[k], 0.0)), k) << hist::edges[k];
    EXPECT_NEAR(hist::edges[k + 1] / hist::edges[k], std::sqrt(10.0), 1e-12);  // half decades
  }
}

TEST(RatioHistogram, MergeAddsCounts) {
  hist a, b;
  a.add(0), a.add(0.2), b.add(0.2), b.add(5);
  a.merge(b);
  EXPECT_EQ(a.total(), 4u);
  EXPECT_EQ(a.counts[0], 1u);
  EXPECT_EQ(a.counts[hist::bin_of(0.2)], 2u);
  EXPECT_EQ(a.counts[13], 1u);
  kv::class_histograms by;
  kv::add_histogram(by, "moderate", a);
  kv::add_histogram(by, "peaked", hist{});  // empty: not listed
  kv::add_histogram(by, "moderate", b);
  ASSERT_EQ(by.size(), 1u);
  EXPECT_EQ(by["moderate"].total(), 6u);
}

TEST(RatioHistogram, ASessionCountsEachNumericProblemOnce) {
  const kv::verdict v = kv::run_trace(three_decodes(), *kv::find_implementation("flat"));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v.stats.numeric, 3u);
  EXPECT_EQ(v.stats.ratios.total(), 3u);
  EXPECT_GE(v.stats.ratios.counts[hist::bin_of(v.stats.worst_ratio)], 1u);
  EXPECT_EQ(v.stats.ratios.counts[hist::bins - 1], 0u);
}

TEST(RatioHistogram, ADecodeThatFailsCountsAsAFailureWhateverItsRatio) {
  const kv::verdict v = kv::run_trace(three_decodes(), kv::make_implementation<nan_output>({"nan-output"}));
  ASSERT_TRUE(v.fail);
  EXPECT_EQ(v.fail->check, "decode-finite");
  EXPECT_EQ(v.stats.numeric, 1u);
  EXPECT_EQ(v.stats.ratios.total(), 1u);
  EXPECT_EQ(v.stats.ratios.counts[hist::bins - 1], 1u);
}

TEST(RatioHistogram, APropertyRunKeepsItsCasesHistogramsByInputClass) {
  const kv::implementation* flat = kv::find_implementation("flat");
  kv::run_options o;
  o.cases = 40, o.search = 0;
  const kv::property_run run = kv::run_property(*kv::find_property("decode_within_bound", flat->kind), *flat, o);
  ASSERT_FALSE(run.fail);
  std::set<std::string> classes;
  for (const kv::input_class c : kv::all_input_classes()) classes.insert(kv::to_string(c));
  hist all;
  for (const auto& [label, h] : run.ratios) {
    EXPECT_TRUE(classes.count(label)) << label;
    EXPECT_GT(h.total(), 0u) << label;
    all.merge(h);
  }
  EXPECT_GE(run.ratios.size(), 5u);
  // Without a failure (so no shrinking) every decode of the run is in exactly one class's histogram.
  EXPECT_EQ(all, run.stats.ratios);
  EXPECT_EQ(all.total(), run.stats.numeric);
  const kv::property_run loop = kv::run_property(*kv::find_property("ring_generation_slides", kv::cache_kind::ring),
                                                 *kv::find_implementation("ring"), o);
  ASSERT_EQ(loop.ratios.size(), 1u);
  EXPECT_EQ(loop.ratios.begin()->first, "(generation loop)");
}
