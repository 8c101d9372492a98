// The targeted numeric search: deterministic for a seed, finds planted bugs the random cases miss, lengthens every
// kind.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>

#include "impls/flat/flat.h"
#include "impls/flat/mutants/kernel_bugs.h"
#include "properties/executor/kind_table.h"
#include "properties/executor/stop.h"
#include "properties/generate/numeric_search.h"
#include "properties/kinds/flat/adapter.h"
#include "properties/runners/builtin.h"
#include "properties/trace/trace_json.h"

namespace kv = kvconform;

namespace {
const kv::property& decode_property(kv::cache_kind k) {
  const kv::property* p = kv::find_property("decode_within_bound", k);
  EXPECT_NE(p, nullptr);
  return *p;
}

kv::run_options options(std::uint64_t seed, int search) {
  kv::run_options o;
  o.seed = seed, o.search = search;
  return o;
}

/// A flat cache whose decode is exact but for a weight below 1e-280, which it reports 1.5 times too
/// large: a violation of the weight bound that only a decode with such a weight shows.
struct inflates_tiny_weights : kv::flat {
  using basic_flat::basic_flat;
};
kv::decode_result decode_step(kv::array_view q, const inflates_tiny_weights& c) {
  kv::decode_result r = decode_step(q, static_cast<const kv::flat&>(c));
  for (Eigen::Index i = 0; i < r.weights.size(); ++i)
    if (r.weights[i] > 0 && r.weights[i] < 1e-280) r.weights[i] *= 1.5;
  return r;
}

/// A correct flat cache whose decodes over more than 32 rows (only the search's traces have them in
/// quick runs) take so long that the property's deadline passes.
struct deadline_on_long_decode : kv::flat {
  using basic_flat::basic_flat;
};
kv::decode_result decode_step(kv::array_view q, const deadline_on_long_decode& c) {
  if (c.size() > 32) kv::set_property_deadline(kv::deadline_clock::now() - std::chrono::seconds(1));
  return decode_step(q, static_cast<const kv::flat&>(c));
}
}  // namespace

TEST(NumericSearch, SameSeedSameSearch) {
  const auto impl = kv::make_implementation<kv::flat>({"flat"});
  const kv::property& p = decode_property(kv::cache_kind::flat);
  const kv::property_run a = kv::run_property(p, impl, options(3, 12)), b = kv::run_property(p, impl, options(3, 12));
  ASSERT_FALSE(a.fail) << a.fail->message;
  EXPECT_EQ(a.search_cases, 12);
  EXPECT_EQ(a.search_cases, b.search_cases);
  EXPECT_EQ(a.search_stats.decodes, b.search_stats.decodes);
  EXPECT_GT(a.search_stats.numeric, 0u);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(a.search_stats.worst_ratio),
            std::bit_cast<std::uint64_t>(b.search_stats.worst_ratio));
  EXPECT_LT(a.search_stats.worst_ratio, 1);  // correct code stays within the bound
}

TEST(NumericSearch, FindsAPlantedBoundViolationTheRandomCasesMiss) {
  const auto impl = kv::make_implementation<inflates_tiny_weights>({"planted"});
  const auto reference = kv::make_implementation<kv::flat>({"flat"});
  const kv::property& p = decode_property(kv::cache_kind::flat);
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const kv::property_run random_only = kv::run_property(p, impl, options(seed, 0));
    EXPECT_FALSE(random_only.fail) << "seed " << seed << ": the random cases found it after all";
    const kv::property_run searched = kv::run_property(p, impl, options(seed, 12));
    ASSERT_TRUE(searched.fail) << "seed " << seed;
    EXPECT_TRUE(searched.searched);
    EXPECT_EQ(searched.fail->check, "decode-weights");
    EXPECT_LE(searched.cases, 30);
    // The saved trace is an ordinary trace: it fails the same way on replay, and passes on the reference.
    const kv::trace t = kv::trace_from_json(kv::to_json(*searched.counterexample, -1));
    const kv::verdict v = kv::run_trace(t, impl);
    ASSERT_TRUE(v.fail);
    EXPECT_EQ(v.fail->check, "decode-weights");
    EXPECT_TRUE(kv::run_trace(t, reference).ok());
    // The same seed finds the same trace.
    const kv::property_run again = kv::run_property(p, impl, options(seed, 12));
    ASSERT_TRUE(again.counterexample);
    EXPECT_EQ(kv::to_json(*again.counterexample, -1), kv::to_json(*searched.counterexample, -1));
    EXPECT_EQ(again.cases, searched.cases);
  }
}

TEST(NumericSearch, KillsTheFirstTileMaxWithinTheFirstRound) {
  const auto impl = kv::make_implementation<kv::mutants::flat_max_first_32_rows>({"tile"});
  const kv::property& p = decode_property(kv::cache_kind::flat);
  const kv::property_run random_only = kv::run_property(p, impl, options(1, 0));
  EXPECT_FALSE(random_only.fail);  // quick flat caches hold at most 10 rows: no row past 32
  const kv::property_run searched = kv::run_property(p, impl, options(1, 12));
  ASSERT_TRUE(searched.fail);
  EXPECT_EQ(searched.fail->check, "decode-finite");
  EXPECT_EQ(searched.cases, kv::numeric_search::probe_after + 1);  // the first move of the first round
}

TEST(NumericSearch, StopsAtADeadlineLikeAnyCase) {
  const auto impl = kv::make_implementation<deadline_on_long_decode>({"slow"});
  const kv::property_run r = kv::run_property(decode_property(kv::cache_kind::flat), impl, options(1, 12));
  kv::set_property_deadline(std::nullopt);
  EXPECT_TRUE(kv::take_stop_seen());
  EXPECT_FALSE(r.fail);          // a stop is no finding
  EXPECT_EQ(r.search_cases, 2);  // the lengthened trace that passed the deadline, then the one it stopped
}

// Every kind's lengthening gives a decode over more than a tile of rows, the newest one the maximum
// by more than exp's overflow threshold: the move that exposes a kernel whose max forgets later tiles.
TEST(NumericSearch, EveryKindLengthensPastATile) {
  for (const kv::kind_descriptor* k : kv::all_kinds()) {
    SCOPED_TRACE(k->spec.name);
    // The search's rows are a head's keys, which a latent row reaches only through that head's W_uk: none lengthens.
    if (k->spec.kind == kv::cache_kind::latent) continue;
    // A kind without a decode has no attention to lengthen (recurrent: its state's numbers, docs/numerics.md §3.9).
    if (!k->spec.find(kv::op_kind::decode)) continue;
    ASSERT_NE(k->lengthen, nullptr);
    const kv::implementation* impl = nullptr;
    for (const kv::implementation& i : kv::builtin_implementations())
      // Plain attention: a top-k cache's lengthened rows would need index keys (docs/numerics.md §7.4).
      if (i.kind == k->spec.kind && i.group == kv::impl_group::reference && !i.profile.rounds_storage() &&
          i.profile.attention.plain())
        impl = &i;
    ASSERT_NE(impl, nullptr);
    int lengthened = 0;
    kv::run_options o = options(1, 0);
    o.cases = 30;
    o.on_trace = [&](const kv::trace& t) {
      for (std::size_t at = 0; at < t.ops.size(); ++at) {
        kv::search::candidate c;
        c.t = kv::search::focus(t.config, t.ops, at);
        if (t.ops[at].kind != kv::op_kind::decode || !kv::search::examine(c, impl->profile)) continue;
        const std::size_t before = c.problems.front().n;
        kv::search::random_engine rng(at);
        ASSERT_TRUE(kv::search::apply(kv::search::move::max_past_tile, c, rng, impl->profile, true));
        const kv::attention_problem& a = c.problems.front();
        ASSERT_GE(a.n, before + 33);
        std::vector<double> s(a.n);
        for (std::size_t i = 0; i < a.n; ++i)
          for (std::size_t j = 0; j < a.d_k; ++j) s[i] += a.keys[i * a.d_k + j] * a.q[j];
        for (std::size_t i = 0; i + 1 < a.n; ++i)
          if (a.is_live(i)) {
            EXPECT_GT((s.back() - s[i]) / std::sqrt(double(a.d_k)), 709.78);
          }
        EXPECT_TRUE(kv::run_trace(c.t, *impl).ok());
        ++lengthened;
        return;
      }
    };
    (void)kv::run_property(decode_property(k->spec.kind), *impl, o);
    EXPECT_GT(lengthened, 0);
  }
}
