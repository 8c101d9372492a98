// Coverage events: every kind's list is well formed, and a trace is classified by what it did.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "properties/executor/coverage.h"
#include "properties/executor/executor.h"
#include "properties/executor/kind_table.h"
#include "properties/generate/input_classes.h"
#include "properties/generate/run_property.h"
#include "properties/runners/builtin.h"

namespace kv = kvconform;

namespace {
/// The names of the events a trace of `ops` on the built-in `impl` hit.
std::set<std::string> hit_by(const std::string& impl, const kv::cache_config& c, const std::vector<kv::op>& ops) {
  const kv::implementation* i = kv::find_implementation(impl);
  EXPECT_NE(i, nullptr) << impl;
  const kv::verdict v = kv::run_trace({c, ops}, *i);
  EXPECT_TRUE(v.ok()) << v.fail->signature() << ": " << v.fail->message;
  std::set<std::string> names;
  const auto& events = kv::events_of(c.kind);
  for (std::size_t e = 0; e < events.size(); ++e)
    if (v.events.test(e)) names.insert(events[e].name);
  return names;
}

/// An append of n rows of width d (rows-kind and paged ops), to sequence `seq`.
kv::op append(std::size_t n, std::size_t d, std::int64_t seq = 0) {
  return {.kind = kv::op_kind::append,
          .k = kv::tensor::matrix(n, d, std::vector<double>(n * d, 0.5)),
          .v = kv::tensor::matrix(n, d, std::vector<double>(n * d, 0.25)),
          .seq = seq};
}
}  // namespace

TEST(Coverage, EveryKindListsNamedEventsWithinTheLimit) {
  for (const kv::kind_descriptor* k : kv::all_kinds()) {
    const auto& events = kv::events_of(k->spec.kind);
    ASSERT_LE(events.size(), kv::max_events) << k->spec.name;
    std::set<std::string> names;
    for (const kv::event& e : events) {
      EXPECT_TRUE(e.name && *e.name && e.summary && *e.summary) << k->spec.name;
      EXPECT_TRUE(names.insert(e.name).second) << k->spec.name << ": \"" << e.name << "\" twice";
    }
    // Each kind requires events of its own besides the common ones, and has a probe that marks them.
    EXPECT_TRUE(std::any_of(k->coverage.events.begin(), k->coverage.events.end(), [](const kv::event& e) {
      return e.required;
    })) << k->spec.name;
    EXPECT_NE(k->coverage.probe, nullptr) << k->spec.name;
    EXPECT_EQ(std::string(events[kv::refused_event(k->spec.kind)].name), "refused op");
    EXPECT_EQ(std::string(events[kv::class_event(k->spec.kind, kv::input_class::ramp)].name), "class ramp");
  }
}

TEST(Coverage, FlatExactFillAndRefusals) {
  const kv::cache_config c{kv::cache_kind::flat, 3, 1, 1};
  const auto hit = hit_by("flat", c, {append(2, 1), append(1, 1), append(1, 1)});
  EXPECT_TRUE(hit.count("exact fill") && hit.count("refused: full") && hit.count("refused op"));
  EXPECT_TRUE(hit.count("one-wide keys"));  // a config event
  EXPECT_FALSE(hit_by("flat", {kv::cache_kind::flat, 3, 2, 2}, {append(2, 2)}).count("exact fill"));
}

TEST(Coverage, RingWrapsAndBulkAppends) {
  kv::cache_config c{kv::cache_kind::ring, 3, 2, 2};
  c.keep = 1;
  EXPECT_EQ(hit_by("ring", c, {append(2, 2)}), std::set<std::string>{});
  const auto hit = hit_by("ring", c, {append(3, 2), append(4, 2)});
  for (const char* e : {"exact fill", "ring wrap", "bulk append longer than the window", "sinks through a wrap"})
    EXPECT_TRUE(hit.count(e)) << e;
  // T = 7 after keep = 1: 6 is a multiple of W - keep = 2, the next write starts the window again.
  EXPECT_TRUE(hit.count("ends at the wrap point"));
}

TEST(Coverage, PagedCopyOnWriteAndBlockBoundaries) {
  kv::cache_config c{kv::cache_kind::paged, 4, 2, 2};
  c.block_size = 2;
  const kv::op create{.kind = kv::op_kind::create}, fork{.kind = kv::op_kind::fork, .seq = 0};
  const auto hit = hit_by("paged", c, {create, append(1, 2), fork, append(1, 2, 1), append(3, 2, 0)});
  EXPECT_TRUE(hit.count("copy-on-write") && hit.count("block boundary crossed"));
  EXPECT_FALSE(hit.count("exact fill"));  // one block is still free
  EXPECT_TRUE(hit_by("paged", c, {create, append(8, 2)}).count("exact fill"));
}

TEST(Coverage, BeamReorderShapesPerBatchSizeAndMasks) {
  kv::cache_config c{kv::cache_kind::beam, 4, 1, 1};
  c.layers = 1, c.batch = 3, c.heads = 1, c.q_heads = 2;
  const kv::op update{.kind = kv::op_kind::update,
                      .k = {{3, 1, 3, 1}, std::vector<double>(9, 0.5)},
                      .v = {{3, 1, 3, 1}, std::vector<double>(9, 0.5)}};
  const kv::op cycle{.kind = kv::op_kind::reorder, .index = {1, 2, 0}};
  const kv::op decode{.kind = kv::op_kind::decode,
                      .q = {{3, 2, 1}, std::vector<double>(6, 1.0)},
                      .mask = {{3, 3}, {1, 0, 1, 0, 0, 0, 0, 1, 0}}};
  const auto hit = hit_by("beam", c, {update, cycle, decode});
  for (const char* e : {"reorder 3-cycle", "reorder at B=3: 3-cycle", "GQA group > 1", "mask hole",
                        "mask hides the newest", "fully masked row", "single live key"})
    EXPECT_TRUE(hit.count(e)) << e;
  EXPECT_FALSE(hit.count("repeated beam") || hit.count("reorder 2-cycle") || hit.count("rollback") ||
               hit.count("mask left padding"));
  kv::op rollback = update;
  rollback.start = 1;
  const auto back = hit_by("beam", c, {update, rollback, {.kind = kv::op_kind::reorder, .index = {0, 0, 2}}});
  EXPECT_TRUE(back.count("rollback") && back.count("exact fill") && back.count("repeated beam"));
  EXPECT_TRUE(back.count("reorder at B=3: repeated beam") && back.count("reorder at B=3: fixed point"));
}

TEST(Coverage, BeamPrefillsWithGroupedHeadsMasksAndHeldPositions) {
  kv::cache_config c{kv::cache_kind::beam, 4, 1, 1};
  c.layers = 1, c.batch = 1, c.heads = 1, c.q_heads = 2;
  auto prefill = [](std::size_t m, std::size_t q_heads, std::vector<double> mask) {
    kv::op p{.kind = kv::op_kind::prefill,
             .k = {{1, 1, m, 1}, std::vector<double>(m, 0.5)},
             .v = {{1, 1, m, 1}, std::vector<double>(m, 0.25)},
             .q = {{1, q_heads, m, 1}, std::vector<double>(q_heads * m, 1.0)}};
    if (!mask.empty()) p.mask = {{1, mask.size()}, mask};
    return p;
  };
  const auto first = hit_by("beam", c, {prefill(2, 2, {})});
  EXPECT_TRUE(first.count("prefill with GQA group > 1"));
  EXPECT_FALSE(first.count("prefill after held positions") || first.count("prefill with a masked position"));
  const auto later = hit_by("beam", c, {prefill(1, 1, {}), prefill(2, 1, {0, 1, 1})});
  EXPECT_TRUE(later.count("prefill after held positions") && later.count("prefill with a masked position"));
  EXPECT_FALSE(later.count("prefill with GQA group > 1"));
}

TEST(Coverage, CountsAddAndMerge) {
  kv::event_set a, b;
  a.set(0), a.set(2), b.set(2);
  kv::coverage_counts x, y;
  x.add(a, 3), x.add(b, 3), y.add(b, 3);
  x.merge(y);
  EXPECT_EQ(x.traces, 3u);
  EXPECT_EQ(x.count(0), 1u);
  EXPECT_EQ(x.count(1), 0u);
  EXPECT_EQ(x.count(2), 3u);
  EXPECT_EQ(x.count(99), 0u);
}

TEST(Coverage, APropertyRunCountsEachCaseOnceWithItsInputClass) {
  const kv::implementation* flat = kv::find_implementation("flat");
  kv::run_options o;
  o.cases = 60;
  const kv::property_run run = kv::run_property(*kv::find_property("decode_within_bound", flat->kind), *flat, o);
  ASSERT_FALSE(run.fail);
  EXPECT_EQ(run.coverage.traces, 60u);
  std::size_t with_class = 0;
  for (const kv::input_class c : kv::all_input_classes()) {
    EXPECT_LE(run.coverage.count(kv::class_event(flat->kind, c)), 60u);
    with_class += run.coverage.count(kv::class_event(flat->kind, c));
  }
  // Each trace draws one class; it counts when a decode of it was accepted (most traces decode).
  EXPECT_LE(with_class, 60u);
  EXPECT_GE(with_class, 30u);
  const auto fixed = kv::run_property(*kv::find_property("seed_worked_example", flat->kind), *flat, o);
  EXPECT_EQ(fixed.coverage.traces, 1u);
  EXPECT_EQ(fixed.coverage.count(kv::refused_event(flat->kind)), 1u);
}
