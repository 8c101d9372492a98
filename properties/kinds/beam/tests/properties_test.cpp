// The beam properties can fail: each small broken beam cache here is caught by the property meant for it.
#include <gtest/gtest.h>

#include <cmath>

#include "impls/beam/beam.h"
#include "properties/generate/run_property.h"
#include "properties/kinds/beam/adapter.h"
#include "properties/kinds/beam/generation.h"

namespace kv = kvconform;

namespace {
/// The check a property fails with on C, or "" when it passes.
template <class C>
std::string failing_check(const std::string& property) {
  const auto impl = kv::make_implementation<C>({"under-test"});
  const kv::property* p = kv::find_property(property, kv::cache_kind::beam);
  EXPECT_NE(p, nullptr) << property;
  const kv::property_run r = kv::run_property(*p, impl, kv::run_options{});
  EXPECT_TRUE(r.error.empty()) << r.error;
  return r.fail ? r.fail->check : "";
}

/// Decodes as if there were no mask: padding takes weight.
struct ignores_mask : kv::beam {
  using basic_beam::basic_beam;
  kv::decode_result decode(std::size_t layer, kv::array_view q, kv::array_view) const {
    return basic_beam::decode(layer, q, {});
  }
};

/// Query head h reads kv head h % H instead of h / (Hq / H): the reference fed a permuted query.
struct interleaved_heads : kv::beam {
  using basic_beam::basic_beam;
  kv::decode_result decode(std::size_t layer, kv::array_view q, kv::array_view mask) const {
    if (q.rank != 3 || q.dims[1] % kv_heads() != 0) return basic_beam::decode(layer, q, mask);
    const std::size_t b = q.dims[0], hq = q.dims[1], d = q.dims[2], group = hq / kv_heads();
    auto slot = [&](std::size_t h) {
      return (h % kv_heads()) * group + h / kv_heads();
    };  // where the reference reads kv head h % H
    std::vector<double> permuted(q.size());
    for (std::size_t r = 0; r < b; ++r)
      for (std::size_t h = 0; h < hq; ++h)
        for (std::size_t j = 0; j < d; ++j) permuted[(r * hq + slot(h)) * d + j] = q.data[(r * hq + h) * d + j];
    const auto at = basic_beam::decode(layer, {permuted.data(), {b, hq, d}}, mask);
    const std::size_t len = static_cast<std::size_t>(at.weights.size()) / (b * hq);
    kv::decode_result out{at.output, at.weights};
    for (std::size_t r = 0; r < b; ++r)
      for (std::size_t h = 0; h < hq; ++h) {
        const auto from = static_cast<Eigen::Index>(r * hq + slot(h)), to = static_cast<Eigen::Index>(r * hq + h);
        out.output.segment(to * static_cast<Eigen::Index>(d), static_cast<Eigen::Index>(d)) =
            at.output.segment(from * static_cast<Eigen::Index>(d), static_cast<Eigen::Index>(d));
        out.weights.segment(to * static_cast<Eigen::Index>(len), static_cast<Eigen::Index>(len)) =
            at.weights.segment(from * static_cast<Eigen::Index>(len), static_cast<Eigen::Index>(len));
      }
    return out;
  }
};

/// Writes every update into layer 0 (one shared buffer for all layers).
struct one_layer_buffer : kv::beam {
  using basic_beam::basic_beam;
  auto update(std::size_t, kv::array_view k, kv::array_view v, std::size_t start) {
    return basic_beam::update(0, k, v, start);
  }
};

/// Counts T - 1 positions of storage per row.
struct bytes_one_short : kv::beam {
  using basic_beam::basic_beam;
  std::size_t bytes() const { return bytes_per_token() * batch() * (max_len() - 1); }
};

/// Decodes one ulp off (a fully masked row stays exactly 0) once it has seen more updates than
/// layers: far inside the bound, but a cached generation no longer matches its recompute bit for bit.
struct drifts_with_history : kv::beam {
  using basic_beam::basic_beam;
  std::size_t updates = 0;
  auto update(std::size_t layer, kv::array_view k, kv::array_view v, std::size_t start) {
    ++updates;
    return basic_beam::update(layer, k, v, start);
  }
  kv::decode_result decode(std::size_t layer, kv::array_view q, kv::array_view mask) const {
    kv::decode_result d = basic_beam::decode(layer, q, mask);
    if (updates > layers() && d.output.size() > 0 && d.output[0] != 0)
      d.output[0] = std::nextafter(d.output[0], HUGE_VAL);
    return d;
  }
};

/// A prefill whose queries see the whole chunk, later positions included (no causal mask within it).
struct sees_whole_chunk_rules : kv::beam_rules {
  static bool sees(std::size_t, std::size_t, std::size_t) { return true; }
};
using sees_whole_chunk = kv::basic_beam<sees_whole_chunk_rules>;

/// A prefill that checks its mask's shape, then attends as if every position were live.
struct prefill_ignores_mask : kv::beam {
  using basic_beam::basic_beam;
  kv::decode_result prefill(std::size_t layer, kv::array_view k, kv::array_view v, kv::array_view q,
                            kv::array_view mask) {
    const std::vector<double> live(mask.size(), 1.0);
    return basic_beam::prefill(layer, k, v, q,
                               mask.rank == 2 ? kv::array_view{live.data(), {mask.dims[0], mask.dims[1]}} : mask);
  }
};

/// Returns views of the layer as it was before the write.
struct returns_old_views : kv::beam {
  using basic_beam::basic_beam;
  std::pair<kv::beam_view, kv::beam_view> update(std::size_t layer, kv::array_view k, kv::array_view v,
                                                 std::size_t start) {
    auto before = std::pair{keys(layer % layers()), values(layer % layers())};
    basic_beam::update(layer, k, v, start);
    return before;
  }
};
}  // namespace

TEST(BeamProperties, ReferencePassesEveryOneOfThem) {
  const auto impl = kv::make_implementation<kv::beam>({"beam"});
  for (const kv::property* pp : kv::properties_of(kv::cache_kind::beam)) {
    const kv::property& p = *pp;
    EXPECT_FALSE(kv::run_property(p, impl, kv::run_options{}).fail) << p.name;
  }
}

TEST(BeamProperties, EachCatchesItsBug) {
  EXPECT_EQ(failing_check<ignores_mask>("beam_mask_left_padding"), "decode-masked");
  EXPECT_EQ(failing_check<interleaved_heads>("beam_gqa_heads"), "decode-bound");
  // Its first failing case is the long one, whose first update writes the last layer: the views that update
  // returns show layer 0, which the adapter's check reports as an exception (ordinary cases fail the state check).
  EXPECT_EQ(failing_check<one_layer_buffer>("beam_layers_independent"), "exception");
  EXPECT_EQ(failing_check<bytes_one_short>("beam_memory_formulas"), "state");
  EXPECT_EQ(failing_check<drifts_with_history>("decode_within_bound"), "") << "one ulp is inside the bound";
  EXPECT_EQ(failing_check<drifts_with_history>("beam_generation_equals_recompute"), "recompute");
  EXPECT_EQ(failing_check<drifts_with_history>("beam_search_equals_recompute"), "recompute");
  EXPECT_EQ(failing_check<sees_whole_chunk>("beam_prefill_chunked_equals_whole"), "decode-masked");
  EXPECT_EQ(failing_check<prefill_ignores_mask>("beam_prefill_equals_decode_steps"), "decode-masked");
}

TEST(BeamProperties, TheAdapterChecksTheViewsAnUpdateReturns) {
  kv::trace t;
  t.config = {kv::cache_kind::beam, 2, 1, 1};
  t.config.layers = t.config.batch = t.config.heads = t.config.q_heads = 1;
  t.ops = {{.kind = kv::op_kind::update, .k = {{1, 1, 1, 1}, {1}}, .v = {{1, 1, 1, 1}, {2}}, .layer = 0, .start = 0}};
  const auto impl = kv::make_implementation<returns_old_views>({"old-views"});
  const kv::verdict v = kv::run_trace(t, impl);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.fail->check, "exception");
  EXPECT_NE(v.fail->message.find("update returned keys views"), std::string::npos) << v.fail->message;
}

TEST(BeamGeneration, SeedCountsSevenKvComputationsWithTheCacheAndTwentyTwoWithout) {
  kv::cache_config c{kv::cache_kind::beam, 7, 2, 2};
  c.layers = 2, c.batch = 2, c.heads = 1, c.q_heads = 2;
  const auto impl = kv::make_implementation<kv::beam>({"beam"});
  for (const auto mode : {kv::kinds::search_mode::greedy, kv::kinds::search_mode::beam}) {
    kv::session s(c, impl);
    const auto cached = kv::kinds::generate_cached(s, c, 5, 4, 3, mode);
    const auto fresh = kv::kinds::generate_recomputed(impl, c, 5, 4, 3, mode);
    ASSERT_TRUE(cached.failure.empty() && fresh.failure.empty()) << cached.failure << fresh.failure;
    EXPECT_EQ(cached.kv_computations, 7u);  // 4 prompt positions + 3 fed-back tokens
    EXPECT_EQ(fresh.kv_computations, 22u);  // 4 + 5 + 6 + 7
    EXPECT_EQ(cached.tokens, fresh.tokens);
    EXPECT_EQ(cached.tokens[0].size(), 8u);  // prompt, 3 fed back, and the last choice
    EXPECT_EQ(cached.logits, fresh.logits);
  }
}
