// A type with only what growing_cache requires compiles into a working adapter that reports its reserved rows.
#include <gtest/gtest.h>

#include <kvconform/plugin.h>

#include "properties/kinds/tests/archetypes.h"

namespace kv = kvconform;
namespace arch = kvconform::archetypes;

namespace {
struct minimal_growing {
  minimal_growing(std::size_t, std::size_t, std::size_t) {}
  arch::status append(kv::array_view, kv::array_view) { return {}; }
  std::size_t size() const { return 0; }
  arch::matrix keys() const { return {}; }
  arch::matrix values() const { return {}; }
  std::size_t reserved() const { return 8; }
};
}  // namespace

static_assert(kv::growing_cache<minimal_growing> && kv::flat_cache<minimal_growing>);

TEST(GrowingArchetype, TheMoreConstrainedRegistrationWins) {
  const kv::implementation impl = kv::make_implementation<minimal_growing>({"archetype"});
  EXPECT_EQ(impl.kind, kv::cache_kind::growing);
  const auto counters = impl.make({kv::cache_kind::growing, 4, 1, 1})->observe().counters;
  ASSERT_EQ(counters.size(), 2u);
  EXPECT_EQ(counters[1], (std::pair<std::string, std::int64_t>{"reserved_rows", 8}));
}
