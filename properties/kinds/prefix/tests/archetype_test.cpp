// A type with only what prefix_cache requires compiles into a working adapter, with optional ids and statuses.
#include <gtest/gtest.h>

#include <optional>
#include <span>

#include <kvconform/plugin.h>

#include "properties/kinds/tests/archetypes.h"

namespace kv = kvconform;
namespace arch = kvconform::archetypes;

namespace {
struct minimal_prefix : arch::pool {
  using pool::pool;
  std::optional<int> create(std::span<const std::int64_t>) { return 0; }
  arch::status append(int, kv::array_view, kv::array_view, std::span<const std::int64_t>) { return {}; }
  std::size_t evictable_blocks() const { return 0; }
  std::size_t hit_rows() const { return 3; }
};
}  // namespace

static_assert(kv::prefix_cache<minimal_prefix> && !kv::prefix_decoding<minimal_prefix> &&
              !kv::paged_cache<minimal_prefix>);

TEST(PrefixArchetype, OptionalIdsStatusesAndCounters) {
  const kv::subject_ptr s = arch::one_block_pool<minimal_prefix>(kv::cache_kind::prefix);
  const kv::op create{.kind = kv::op_kind::create, .tokens = {1, 2}}, fork{.kind = kv::op_kind::fork};
  EXPECT_TRUE(s->apply(kv::call{create, {}, {}, {}, {}}).accepted);
  EXPECT_FALSE(s->apply(kv::call{fork, {}, {}, {}, {}}).accepted);
  const kv::snapshot snap = s->observe();
  EXPECT_EQ(snap.streams.size(), 1u);
  EXPECT_EQ(snap.counters.back(), (std::pair<std::string, std::int64_t>{"hit_rows", 3}));
}
