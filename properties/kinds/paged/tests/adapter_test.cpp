// The paged adapter: handles map to the implementation's ids and back, and the executor judges every paged op.
#include <gtest/gtest.h>

#include <algorithm>

#include "impls/paged/paged.h"
#include "properties/executor/executor.h"
#include <kvconform/plugin.h>

namespace kv = kvconform;

static_assert(kv::paged_cache<kv::paged> && !kv::flat_cache<kv::paged> && !kv::beam_cache<kv::paged>,
              "paged is a paged_cache only");
static_assert(kv::paged_decoding<kv::paged> && kv::paged_preempting<kv::paged>);

namespace {
kv::op seq_op(kv::op_kind kind, std::int64_t seq = 0) {
  kv::op o;
  o.kind = kind, o.seq = seq;
  return o;
}
kv::op append(std::int64_t seq, std::size_t n) {
  kv::op o = seq_op(kv::op_kind::append, seq);
  for (std::size_t i = 0; i < n; ++i) o.k.data.push_back(double(i)), o.v.data.push_back(-double(i));
  o.k.shape = {n, 1}, o.v.shape = {n, 1};
  return o;
}
kv::trace trace_of(std::size_t blocks, std::size_t block_size, bool preempt, std::vector<kv::op> ops) {
  kv::trace t;
  t.config = {kv::cache_kind::paged, blocks, 1, 1};
  t.config.block_size = block_size, t.config.preempt = preempt;
  t.ops = std::move(ops);
  return t;
}
std::string failing_check(const kv::implementation& impl, const kv::trace& t) {
  const kv::verdict v = kv::run_trace(t, impl);
  return v.ok() ? "" : v.fail->check + ": " + v.fail->message;
}

/// Reports the creator of a preempted sequence instead of the sequence itself.
struct wrong_victim : kv::paged {
  using kv::paged::basic_paged;
  std::vector<seq_id> append(seq_id s, kv::array_view k, kv::array_view v) {
    auto victims = kv::paged::append(s, k, v);
    for (auto& x : victims) x = 0;
    return victims;
  }
};
/// Has no preempt policy.
struct refuse_only : kv::paged {
  refuse_only(std::size_t n, std::size_t bs, std::size_t dk, std::size_t dv) : kv::paged(n, bs, dk, dv) {}
  void append(seq_id s, kv::array_view k, kv::array_view v) { kv::paged::append(s, k, v); }
};
}  // namespace

TEST(PagedSubject, RefusedForksReleasedAndUnknownHandlesMapAsTheModelSays) {
  const auto impl = kv::make_implementation<kv::paged>({"paged"});
  const auto t = trace_of(4, 2, false,
                          {seq_op(kv::op_kind::create), seq_op(kv::op_kind::fork, 7), seq_op(kv::op_kind::fork, 0),
                           append(2, 3), seq_op(kv::op_kind::release, 0), append(0, 1), seq_op(kv::op_kind::fork, 1),
                           seq_op(kv::op_kind::release, 9), seq_op(kv::op_kind::decode, 2)});
  EXPECT_EQ(failing_check(impl, t), "");
}

TEST(PagedSubject, PreemptedIdsComeBackAsHandles) {
  const auto impl = kv::make_implementation<kv::paged>({"paged"});
  const auto t = trace_of(2, 1, true,
                          {seq_op(kv::op_kind::create), seq_op(kv::op_kind::create), append(0, 1), append(1, 1),
                           append(0, 1), append(1, 1)});
  EXPECT_EQ(failing_check(impl, t), "");
  const auto wrong = kv::make_implementation<wrong_victim>({"wrong-victim"});
  EXPECT_EQ(failing_check(wrong, t).substr(0, 10), "preemption");
}

TEST(PagedSubject, APreemptingTraceOnACacheWithoutThePolicyIsNotSupported) {
  const auto impl = kv::make_implementation<refuse_only>({"refuse-only"});
  EXPECT_FALSE(impl.capabilities.has(kv::capability::preempt));
  EXPECT_EQ(failing_check(impl, trace_of(2, 1, false, {seq_op(kv::op_kind::create), append(0, 2)})), "");
  EXPECT_EQ(failing_check(impl, trace_of(2, 1, true, {seq_op(kv::op_kind::create)})).substr(0, 13), "not-supported");
}
