// A type with only what beam_cache requires compiles into a working adapter, with a StatusOr-like update.
#include <gtest/gtest.h>

#include <span>
#include <utility>

#include <kvconform/plugin.h>

#include "properties/kinds/tests/archetypes.h"

namespace kv = kvconform;
namespace arch = kvconform::archetypes;

namespace {
struct minimal_beam {
  minimal_beam(std::size_t, std::size_t, std::size_t, std::size_t, std::size_t) {}
  arch::result<std::pair<arch::tensor4, arch::tensor4>> update(std::size_t, kv::array_view, kv::array_view,
                                                               std::size_t) {
    return {std::pair<arch::tensor4, arch::tensor4>{}};
  }
  arch::status reorder(std::span<const std::int64_t>) { return {false}; }
  std::size_t length(std::size_t) const { return 0; }
  arch::tensor4 keys(std::size_t) const { return {}; }
  arch::tensor4 values(std::size_t) const { return {}; }
  std::size_t bytes() const { return 0; }
  std::size_t bytes_per_token() const { return 1; }
  std::size_t max_batch_tokens(std::size_t) const { return 0; }
  arch::decoded decode(std::size_t, kv::array_view, kv::array_view) const { return {}; }
};
/// With the optional prefill, whose result is a result_like of a decode result.
struct prefilling_beam : minimal_beam {
  using minimal_beam::minimal_beam;
  arch::result<arch::decoded> prefill(std::size_t, kv::array_view, kv::array_view, kv::array_view, kv::array_view) {
    return {arch::decoded{}};
  }
};
}  // namespace

static_assert(kv::beam_cache<minimal_beam> && kv::beam_decoding<minimal_beam> && !kv::beam_prefilling<minimal_beam>);
static_assert(kv::beam_cache<prefilling_beam> && kv::beam_prefilling<prefilling_beam>);

TEST(BeamArchetype, ResultAndStatusAreOutcomes) {
  const kv::implementation impl = kv::make_implementation<minimal_beam>({"archetype"});
  EXPECT_EQ(impl.kind, kv::cache_kind::beam);
  kv::cache_config c{kv::cache_kind::beam, 1, 1, 1};
  c.layers = c.batch = c.heads = c.q_heads = 1;
  const kv::subject_ptr s = impl.make(c);
  const kv::op update{.kind = kv::op_kind::update}, reorder{.kind = kv::op_kind::reorder},
      decode{.kind = kv::op_kind::decode};
  EXPECT_TRUE(s->apply(kv::call{update, {}, {}, {}, {}}).accepted);  // its views match the layer's (both empty)
  EXPECT_FALSE(s->apply(kv::call{reorder, {}, {}, {}, {}}).accepted);
  EXPECT_TRUE(s->apply(kv::call{decode, {}, {}, {}, {}}).accepted);
  EXPECT_EQ(s->observe().streams.size(), 1u);
  const kv::op prefill{.kind = kv::op_kind::prefill};
  EXPECT_TRUE(s->apply(kv::call{prefill, {}, {}, {}, {}}).unsupported);
  EXPECT_FALSE(impl.capabilities.has(kv::capability::prefill));
  const kv::implementation with = kv::make_implementation<prefilling_beam>({"archetype with prefill"});
  EXPECT_TRUE(with.capabilities.has(kv::capability::prefill));
  EXPECT_TRUE(with.make(c)->apply(kv::call{prefill, {}, {}, {}, {}}).accepted);
}
