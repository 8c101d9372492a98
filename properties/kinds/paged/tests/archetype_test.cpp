// A type with only what paged_cache requires compiles into a working adapter, with statuses and optional ids.
#include <gtest/gtest.h>

#include <optional>

#include <kvconform/plugin.h>

#include "properties/kinds/tests/archetypes.h"

namespace kv = kvconform;
namespace arch = kvconform::archetypes;

namespace {
struct minimal_paged : arch::pool {
  using pool::pool;
  std::optional<int> create() { return 0; }
  arch::status append(int, kv::array_view, kv::array_view) { return {}; }
  std::size_t bytes_in_use() const { return 0; }
};

kv::op_outcome run(const kv::subject_ptr& s, kv::op_kind kind) {
  const kv::op o{.kind = kind};
  return s->apply(kv::call{o, {}, {}, {}, {}});
}
}  // namespace

static_assert(kv::paged_cache<minimal_paged> && !kv::paged_decoding<minimal_paged> &&
              !kv::paged_preempting<minimal_paged>);

TEST(PagedArchetype, OptionalIdsAndStatusesAreOutcomes) {
  const kv::subject_ptr s = arch::one_block_pool<minimal_paged>(kv::cache_kind::paged);
  EXPECT_TRUE(run(s, kv::op_kind::create).accepted);
  EXPECT_FALSE(run(s, kv::op_kind::fork).accepted);     // an empty optional is a refusal
  EXPECT_FALSE(run(s, kv::op_kind::release).accepted);  // a false status too
  EXPECT_TRUE(run(s, kv::op_kind::decode).unsupported);
  EXPECT_EQ(s->observe().streams.size(), 1u);  // the created sequence only: the refused fork made none
}
