// A type with only what ring_cache requires compiles into a working adapter that reports positions and total.
#include <gtest/gtest.h>

#include <vector>

#include <kvconform/plugin.h>

#include "properties/kinds/tests/archetypes.h"

namespace kv = kvconform;
namespace arch = kvconform::archetypes;

namespace {
struct minimal_ring {
  minimal_ring(std::size_t, std::size_t, std::size_t) {}
  bool append(kv::array_view, kv::array_view) { return true; }
  std::size_t size() const { return 1; }
  arch::matrix keys() const { return {1, 1}; }
  arch::matrix values() const { return {1, 1}; }
  long total() const { return 5; }
  std::vector<int> positions() const { return {4}; }
};
}  // namespace

static_assert(kv::ring_cache<minimal_ring> && !kv::flat_cache<minimal_ring>);

TEST(RingArchetype, AdapterReadsPositionsAndTotal) {
  const kv::implementation impl = kv::make_implementation<minimal_ring>({"archetype"});
  EXPECT_EQ(impl.kind, kv::cache_kind::ring);
  EXPECT_FALSE(impl.capabilities.has(kv::capability::decode));
  const auto subject = impl.make({kv::cache_kind::ring, 2, 1, 1});
  const kv::op o{.kind = kv::op_kind::append};
  EXPECT_TRUE(subject->apply(kv::call{o, {}, {}, {}, {}}).accepted);
  const kv::snapshot s = subject->observe();
  EXPECT_EQ(s.streams.at(0).positions, std::vector<std::int64_t>{4});
  EXPECT_EQ(s.counters.at(1), (std::pair<std::string, std::int64_t>{"total", 5}));
}
