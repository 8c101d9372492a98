// A type with only what recurrent_cache requires compiles into a working adapter, with optional ids and statuses.
#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <span>
#include <vector>

#include <kvconform/plugin.h>

#include "properties/kinds/tests/archetypes.h"

namespace kv = kvconform;
namespace arch = kvconform::archetypes;

namespace {
struct minimal_recurrent {
  minimal_recurrent(std::size_t, std::size_t, std::size_t, std::size_t, std::size_t, bool, std::size_t) {}
  std::optional<int> create(std::span<const std::int64_t>) { return 0; }
  std::optional<int> fork(int) { return std::nullopt; }
  arch::status release(int) { return {}; }
  std::optional<arch::numbers> append(int, kv::array_view, kv::array_view, kv::array_view, kv::array_view,
                                      kv::array_view, std::span<const std::int64_t>) {
    return arch::numbers{2};
  }
  void evict(std::size_t) {}
  std::size_t length(int) const { return 1; }
  arch::numbers state(int) const { return {4}; }
  arch::numbers window(int) const { return {0}; }
  arch::numbers keys(int) const { return {2}; }
  arch::numbers values(int) const { return {2}; }
  std::size_t hit_tokens() const { return 3; }
  void for_each_checkpoint(const std::function<void(std::vector<std::int64_t>, arch::numbers, arch::numbers)>&) const {}
  void for_each_block(const std::function<void(std::vector<std::int64_t>, arch::numbers, arch::numbers)>& f) const {
    f({1}, {2}, {2});
  }
};
}  // namespace

static_assert(kv::recurrent_cache<minimal_recurrent> && !kv::recurrent_rolling_back<minimal_recurrent>);

TEST(RecurrentArchetype, OptionalIdsStatusesAndObservation) {
  const kv::implementation impl = kv::make_implementation<minimal_recurrent>({"minimal"});
  kv::cache_config c{kv::cache_kind::recurrent, 1, 2, 2};
  c.block_size = 1, c.conv_width = 1;
  const kv::subject_ptr s = impl.make(c);
  const kv::op create{.kind = kv::op_kind::create, .tokens = {1}}, fork{.kind = kv::op_kind::fork},
      append{.kind = kv::op_kind::append}, rollback{.kind = kv::op_kind::rollback};
  EXPECT_TRUE(s->apply(kv::call{create, {}, {}, {}, {}}).accepted);
  EXPECT_FALSE(s->apply(kv::call{fork, {}, {}, {}, {}}).accepted);
  EXPECT_EQ(s->apply(kv::call{append, {}, {}, {}, {}}).output.size(), 2u);
  EXPECT_TRUE(s->apply(kv::call{rollback, {}, {}, {}, {}}).unsupported);  // no rollback: NOT SUPPORTED
  const kv::snapshot snap = s->observe();
  ASSERT_EQ(snap.streams.size(), 2u);  // the sequence's state and window
  EXPECT_EQ(snap.streams[0].name, "seq 0 state");
  EXPECT_EQ(snap.streams[0].rows(), 2u);
  EXPECT_EQ(snap.counters.back(), (std::pair<std::string, std::int64_t>{"hit_tokens", 3}));
  c.layers = 1;  // with an attention layer: the sequence's rows and the block's, and the blocks counted
  const kv::subject_ptr with_layers = impl.make(c);
  with_layers->apply(kv::call{create, {}, {}, {}, {}});
  const kv::snapshot rows = with_layers->observe();
  ASSERT_EQ(rows.streams.size(), 4u);
  EXPECT_EQ(rows.streams[2].name, "seq 0 rows");
  EXPECT_EQ(rows.streams[3].name, "block 1 rows");
  EXPECT_EQ(rows.streams[3].rows(), 1u);
  EXPECT_EQ(rows.counters[rows.counters.size() - 2], (std::pair<std::string, std::int64_t>{"blocks", 1}));
}
