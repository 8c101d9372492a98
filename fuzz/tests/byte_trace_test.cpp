// The fuzz byte format: every input decodes to a well-formed trace, and encoding inverts decoding.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "fuzz/byte_trace.h"
#include "properties/generate/run_property.h"
#include "properties/runners/builtin.h"

namespace kv = kvconform;

TEST(ByteTrace, RandomBytesDecodeToBoundedConsistentTraces) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 500; ++i) {
    std::vector<std::uint8_t> bytes(rng() % 4096);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
    for (auto kind : {kv::cache_kind::flat, kv::cache_kind::ring, kv::cache_kind::paged, kv::cache_kind::beam}) {
      const kv::trace t = kv::fuzz::decode_bytes(kind, bytes.data(), bytes.size());
      EXPECT_LE(t.config.capacity, kv::fuzz::max_capacity);
      EXPECT_LE(t.ops.size(), kv::fuzz::max_ops);
      for (const auto& o : t.ops)
        for (const kv::tensor* x : {&o.k, &o.v, &o.q, &o.mask}) {
          if (x->shape.empty() && x->data.empty()) continue;  // a field the op does not use
          EXPECT_TRUE(x->consistent());
          // Literal values fold into +-1e5; class rows (750 per position for max_last) may go further.
          for (double v : x->data) EXPECT_TRUE(std::isfinite(v) && std::fabs(v) <= 1e7) << v;
        }
    }
  }
}

TEST(ByteTrace, EncodingInvertsDecodingOnGeneratedTraces) {
  kv::run_options o;
  o.cases = 30;
  o.max_size = 12;
  std::map<kv::cache_kind, int> exact;
  o.on_trace = [&](const kv::trace& t) {
    if (t.ops.size() <= kv::fuzz::max_ops && kv::fuzz::encodable(t)) ++exact[t.config.kind];
  };
  for (const char* name : {"flat", "ring", "paged", "beam"}) {
    const kv::implementation& impl = *kv::find_implementation(name);
    kv::run_property(*kv::find_property("refused_append_unchanged", impl.kind), impl, o);
  }
  // Most short generated traces fit the fuzz limits and come back bit for bit; the gate's beam
  // shapes (up to 3 layers, rows and heads) mostly exceed the fuzzer's smaller ones.
  for (auto kind : {kv::cache_kind::flat, kv::cache_kind::ring, kv::cache_kind::paged})
    EXPECT_GE(exact[kind], 10) << kv::to_string(kind);
  EXPECT_GE(exact[kv::cache_kind::beam], 1);
}

TEST(ByteTrace, EncodingKeepsEveryOpField) {
  kv::trace t;
  t.config = {.kind = kv::cache_kind::beam,
              .capacity = 4,
              .d_k = 2,
              .d_v = 2,
              .layers = 2,
              .batch = 2,
              .heads = 1,
              .q_heads = 2};
  t.ops = {kv::op{.kind = kv::op_kind::update,
                  .k = {{2, 1, 1, 2}, {1, -0.0, 3, 4}},
                  .v = {{2, 1, 1, 2}, {5, 6, 7, 8}},
                  .layer = 1,
                  .start = 0},
           kv::op{.kind = kv::op_kind::reorder, .index = {1, 1}},
           kv::op{.kind = kv::op_kind::decode,
                  .q = {{2, 2, 2}, std::vector<double>(8, 0.25)},
                  .layer = 1,
                  .mask = {{2, 1}, {1, 0}}}};
  EXPECT_TRUE(kv::fuzz::encodable(t));
  kv::trace p;
  p.config = {.kind = kv::cache_kind::paged, .capacity = 3, .d_k = 1, .d_v = 1, .block_size = 2, .preempt = true};
  p.ops = {kv::op{.kind = kv::op_kind::create}, kv::op{.kind = kv::op_kind::fork, .seq = 0},
           kv::op{.kind = kv::op_kind::append, .k = kv::tensor::vector({1}), .v = kv::tensor::vector({2}), .seq = 1},
           kv::op{.kind = kv::op_kind::release, .seq = 0}};
  EXPECT_TRUE(kv::fuzz::encodable(p));
  p.ops[2].k.data[0] = 1e300;  // outside the numeric domain: folded, so not encodable
  EXPECT_FALSE(kv::fuzz::encodable(p));
}
