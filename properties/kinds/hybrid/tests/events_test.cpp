// The hybrid kind's events on hand-made traces, each run through the reference and judged by the model.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "properties/executor/coverage.h"
#include "properties/executor/executor.h"
#include "properties/runners/builtin.h"

namespace kv = kvconform;

namespace {
/// Layer 0 slides (window 2), layer 1 keeps every row, and a cross layer reads 3 encoder rows; blocks of 2 rows.
kv::cache_config config(std::size_t blocks, std::size_t shared = 0) {
  kv::cache_config c{kv::cache_kind::hybrid, blocks, 1, 1};
  c.block_size = 2, c.layers = 2 + shared, c.window = 2, c.global_every = 2, c.shared = shared, c.cross = 3;
  return c;
}
kv::op op(kv::op_kind kind, std::int64_t seq = 0) { return {.kind = kind, .seq = seq}; }
kv::op create() {
  kv::op o = op(kv::op_kind::create);
  o.k = kv::tensor::matrix(3, 1, {1, 2, 3}), o.v = kv::tensor::matrix(3, 1, {-1, -2, -3});
  return o;
}
/// n steps onto both writing layers of seq, each row its own value.
kv::op append(std::int64_t seq, std::size_t n, double from) {
  kv::op o = op(kv::op_kind::append, seq);
  for (std::size_t i = 0; i < 2 * n; ++i) o.k.data.push_back(from + double(i)), o.v.data.push_back(-from - double(i));
  o.k.shape = {2, n, 1}, o.v.shape = {2, n, 1};
  return o;
}
kv::op decode(std::int64_t seq, std::int64_t layer) {
  kv::op o = op(kv::op_kind::decode, seq);
  o.layer = layer, o.q = kv::tensor::vector({0.5});
  return o;
}
std::set<std::string> hit_by(const kv::cache_config& c, const std::vector<kv::op>& ops) {
  const kv::verdict v = kv::run_trace({c, ops}, *kv::find_implementation("hybrid"));
  EXPECT_TRUE(v.ok()) << v.fail->signature() << ": " << v.fail->message;
  std::set<std::string> names;
  const auto& events = kv::events_of(kv::cache_kind::hybrid);
  for (std::size_t e = 0; e < events.size(); ++e)
    if (v.events.test(e)) names.insert(events[e].name);
  return names;
}
}  // namespace

TEST(HybridEvents, ABlockTheWindowFreedGoesToTheFullGroup) {
  // The fork's last sliding block alone goes back at its release; the parent's next block boundary takes it.
  const auto hit = hit_by(config(7), {create(), append(0, 4, 0), op(kv::op_kind::fork, 0), append(0, 2, 10),
                                      op(kv::op_kind::release, 1), append(0, 2, 20)});
  EXPECT_TRUE(hit.count("sliding block reused by the full group"));
  EXPECT_TRUE(hit.count("copy-on-write") == 0);
}

TEST(HybridEvents, WindowStraddlingCrossAfterTheSlideAndPoolExhausted) {
  const auto hit = hit_by(config(6), {create(), append(0, 3, 0), decode(0, 0), decode(0, 2), append(0, 4, 10)});
  EXPECT_TRUE(hit.count("window straddling a block boundary"));
  EXPECT_TRUE(hit.count("cross layer read after the window slid"));
  EXPECT_TRUE(hit.count("refused: pool exhausted"));
}

TEST(HybridEvents, SharedLayerReadAfterItsProducersCopy) {
  // Layer 2 is shared and reads layer 0 (the last sliding writer); the append to the fork copies both groups' block.
  const auto hit =
      hit_by(config(12, 1), {create(), append(0, 3, 0), op(kv::op_kind::fork, 0), append(1, 1, 10), decode(1, 2)});
  EXPECT_TRUE(hit.count("copy-on-write"));
  EXPECT_TRUE(hit.count("shared layer read after copy-on-write"));
}
