// The fuzz byte format: every input decodes to a well-formed trace, and encoding inverts decoding.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "fuzz/byte_trace.h"
#include "properties/generators.h"
#include "properties/registry.h"

namespace kv = kvconform;

TEST(ByteTrace, RandomBytesDecodeToBoundedConsistentTraces) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 500; ++i) {
    std::vector<std::uint8_t> bytes(rng() % 4096);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
    for (auto kind : {kv::cache_kind::flat, kv::cache_kind::ring}) {
      const kv::trace t = kv::fuzz::decode_bytes(kind, bytes.data(), bytes.size());
      EXPECT_LE(t.config.capacity, kv::fuzz::max_capacity);
      EXPECT_LE(t.ops.size(), kv::fuzz::max_ops);
      for (const auto& o : t.ops)
        for (const kv::tensor* x : {&o.k, &o.v, &o.q}) {
          if (x->shape.empty() && x->data.empty()) continue;  // a field the op does not use
          EXPECT_TRUE(x->consistent());
          for (double v : x->data) EXPECT_TRUE(std::isfinite(v) && std::fabs(v) <= 1e5) << v;
        }
    }
  }
}

TEST(ByteTrace, EncodingInvertsDecodingOnGeneratedTraces) {
  kv::run_options o;
  o.cases = 20;
  int checked = 0;
  o.on_trace = [&](const kv::trace& t) {
    const auto bytes = kv::fuzz::encode_trace(t);
    const kv::trace back = kv::fuzz::decode_bytes(t.config.kind, bytes.data(), bytes.size());
    ASSERT_EQ(back.config, t.config);
    ASSERT_EQ(back.ops.size(), std::min(t.ops.size(), kv::fuzz::max_ops));
    for (std::size_t i = 0; i < back.ops.size(); ++i) {
      EXPECT_EQ(back.ops[i].kind, t.ops[i].kind);
      EXPECT_EQ(back.ops[i].k, t.ops[i].k);
      EXPECT_EQ(back.ops[i].v, t.ops[i].v);
      EXPECT_EQ(back.ops[i].q, t.ops[i].q);
    }
    ++checked;
  };
  for (const char* name : {"flat", "ring"})
    kv::run_property(*kv::find_property("refused_append_unchanged"), *kv::find_implementation(name), o);
  EXPECT_EQ(checked, 40);
}
