// A type with only what radix_cache requires compiles into a working adapter, with optional ids and statuses.
#include <gtest/gtest.h>

#include <optional>
#include <span>

#include <kvconform/plugin.h>

#include "properties/kinds/tests/archetypes.h"

namespace kv = kvconform;
namespace arch = kvconform::archetypes;

namespace {
struct minimal_radix : arch::pool {
  using pool::pool;
  std::optional<int> create(std::span<const std::int64_t>) { return 0; }
  std::optional<int> lookup(std::span<const std::int64_t>) { return 1; }
  arch::status admit(int, std::size_t) { return {false}; }
  arch::status retract(int) { return {}; }
  arch::status abort(int) { return {}; }
  arch::status append(int, kv::array_view, kv::array_view, std::span<const std::int64_t>) { return {}; }
  std::size_t evictable_blocks() const { return 0; }
  std::size_t hit_rows() const { return 0; }
  std::size_t protected_blocks() const { return 2; }
};
}  // namespace

static_assert(kv::radix_cache<minimal_radix> && !kv::prefix_decoding<minimal_radix>);

TEST(RadixArchetype, OptionalIdsStatusesAndCounters) {
  const kv::subject_ptr s = arch::one_block_pool<minimal_radix>(kv::cache_kind::radix);
  const kv::op lookup{.kind = kv::op_kind::lookup, .tokens = {1, 2}};
  const kv::op admit{.kind = kv::op_kind::admit, .seq = 0, .count = 1};
  EXPECT_TRUE(s->apply(kv::call{lookup, {}, {}, {}, {}}).accepted);
  EXPECT_FALSE(s->apply(kv::call{admit, {}, {}, {}, {}}).accepted);
  const kv::snapshot snap = s->observe();
  EXPECT_EQ(snap.streams.size(), 1u);
  EXPECT_EQ(snap.counters.back(), (std::pair<std::string, std::int64_t>{"protected_blocks", 2}));
}
