// The C ABI driver (properties/port/library.cpp) against a paged C cache built for this test: the config's
// per-tensor scales arrive, and the library ids an append preempted come back as released trace handles.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <kvconform/c_port.h>

#include "properties/port/library.h"

namespace kv = kvconform;

namespace {
/// Runs `o` with k and v of `rows` rows of width 1 (appends read them, other ops nothing).
kv::op_outcome run(kv::subject& s, const kv::op& o, std::size_t rows = 1) {
  const std::vector<double> data(rows, 1.0);
  const kv::array_view k(data.data(), {rows, 1});
  return s.apply(kv::call{o, k, k, {}, {}});
}

kv::op create() { return kv::op{.kind = kv::op_kind::create}; }
kv::op append(std::int64_t seq) { return kv::op{.kind = kv::op_kind::append, .seq = seq}; }

std::int64_t counter(const kv::snapshot& s, const std::string& name) {
  const auto at = std::find_if(s.counters.begin(), s.counters.end(), [&](const auto& c) { return c.first == name; });
  return at == s.counters.end() ? -1 : at->second;
}
}  // namespace

TEST(CLibrary, ScalesArriveAndPreemptedIdsComeBackAsHandles) {
  // The test library's path comes from tests/CMakeLists.txt, which builds it.
  const kv::implementation impl = kv::make_library_implementation(kv::cache_kind::paged, KVCONFORM_PREEMPTING_LIBRARY);
  EXPECT_TRUE(impl.capabilities.has(kv::capability::preempt));
  kv::cache_config c{.kind = kv::cache_kind::paged, .capacity = 4, .d_k = 1, .d_v = 1, .block_size = 1, .preempt = true};
  c.k_scale = 0.5, c.v_scale = 4;
  const kv::subject_ptr s = impl.make(c);
  EXPECT_EQ(counter(s->observe(), "k_scale_milli"), 500);
  EXPECT_EQ(counter(s->observe(), "v_scale_milli"), 4000);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(run(*s, create()).accepted);  // handles 0, 1, 2: library ids 100, 101, 102
  ASSERT_TRUE(run(*s, append(0)).accepted);
  ASSERT_TRUE(run(*s, append(1)).accepted);
  ASSERT_TRUE(run(*s, append(2), 2).accepted);
  EXPECT_EQ(counter(s->observe(), "free_blocks"), 0);
  // Handle 0 needs a block: the newest other sequence, handle 2, makes room.
  const kv::op_outcome r = run(*s, append(0));
  ASSERT_TRUE(r.accepted);
  EXPECT_EQ(r.preempted, std::vector<std::int64_t>{2});
  // A preempted handle is released: the library refuses it as an unknown sequence.
  const kv::op_outcome gone = run(*s, append(2));
  EXPECT_FALSE(gone.accepted);
  EXPECT_EQ(gone.reason, static_cast<unsigned>(KVC_INDEX));
  // Two blocks, one free: handle 1 goes too.
  const kv::op_outcome both = run(*s, append(0), 2);
  ASSERT_TRUE(both.accepted);
  EXPECT_EQ(both.preempted, std::vector<std::int64_t>{1});
  EXPECT_EQ(counter(s->observe(), "free_blocks"), 0);
  // Nothing left to release: refused, and nothing preempted.
  const kv::op_outcome full = run(*s, append(0));
  EXPECT_FALSE(full.accepted);
  EXPECT_TRUE(full.preempted.empty());
}
