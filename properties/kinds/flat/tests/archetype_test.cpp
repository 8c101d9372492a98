// A type with only what flat_cache (and decode) require compiles into a working adapter, in either error style.
#include <gtest/gtest.h>

#include <kvconform/plugin.h>

#include "properties/kinds/tests/archetypes.h"

namespace kv = kvconform;
namespace arch = kvconform::archetypes;

namespace {
struct throwing_flat {
  throwing_flat(std::size_t, std::size_t, std::size_t) {}
  void append(kv::array_view, kv::array_view) { throw kv::capacity_error("full"); }
  std::size_t size() const { return 0; }
  arch::matrix keys() const { return {}; }
  arch::matrix values() const { return {}; }
};
struct status_flat {
  status_flat(std::size_t, std::size_t, std::size_t) {}
  arch::status append(kv::array_view, kv::array_view) { return {false}; }
  std::size_t size() const { return 0; }
  arch::matrix keys() const { return {}; }
  arch::matrix values() const { return {}; }
};
arch::result<arch::decoded> decode_step(kv::array_view, const status_flat&) { return {}; }

template <class C>
kv::op_outcome first_append() {
  const kv::implementation impl = kv::make_implementation<C>({"archetype"});
  EXPECT_EQ(impl.kind, kv::cache_kind::flat);
  const auto subject = impl.make({kv::cache_kind::flat, 2, 1, 1});
  const kv::op o{.kind = kv::op_kind::append};
  EXPECT_EQ(subject->observe().streams.size(), 1u);
  return subject->apply(kv::call{o, {}, {}, {}, {}});
}
}  // namespace

static_assert(kv::flat_cache<throwing_flat> && !kv::ring_cache<throwing_flat> && !kv::rows_decoding<throwing_flat>);
static_assert(kv::flat_cache<status_flat> && kv::rows_decoding<status_flat>);

TEST(FlatArchetype, ThrowingAndStatusStylesBothRefuseWithTheirReason) {
  const kv::op_outcome thrown = first_append<throwing_flat>(), returned = first_append<status_flat>();
  EXPECT_FALSE(thrown.accepted);
  EXPECT_EQ(thrown.reason, kv::refuse_capacity);
  EXPECT_FALSE(returned.accepted);
  EXPECT_EQ(returned.reason, kv::refuse_capacity);  // from the ADL kvconform_refusal
}
