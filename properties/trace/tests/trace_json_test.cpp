// The trace codec: bit-exact round trips of every double, and clear errors for malformed input.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

#include "properties/trace/digest.h"
#include "properties/trace/json_codec.h"
#include "properties/trace/trace_json.h"

namespace kv = kvconform;

namespace {
kv::trace sample(std::vector<double> data) {
  kv::trace t;
  t.config = {kv::cache_kind::flat, 8, 1, 1};
  kv::op a;
  a.k = kv::tensor::matrix(data.size(), 1, data);
  a.v = kv::tensor::matrix(data.size(), 1, data);
  kv::op d;
  d.kind = kv::op_kind::decode;
  d.q = kv::tensor::vector({0.5});
  d.expect = kv::pinned{true, 2, {1.5}, {0.25, 0.75}, 8};
  t.ops = {a, d};
  t.implementation = "flat", t.property = "p", t.note = "n";
  return t;
}

void expect_rejected(const std::string& text, const std::string& fragment) {
  try {
    kv::trace_from_json(text);
    ADD_FAILURE() << "accepted: " << text.substr(0, 300);
  } catch (const kv::trace_format_error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

const std::string good =
    R"({"schema":"kvconform-trace","version":1,"config":{"kind":"flat","capacity":2,"d_k":1,"d_v":1},"ops":[)";
}  // namespace

TEST(TraceJson, EveryDoubleRoundTripsBitExactly) {
  std::mt19937_64 rng(42);
  std::vector<double> xs = {0.0, -0.0, 0.1, 1e300, -1e-300, 5e-324, -2.2250738585072014e-308, INFINITY, -INFINITY, NAN};
  for (int i = 0; i < 2000; ++i) {
    const double x = std::bit_cast<double>(rng());
    if (!std::isnan(x)) xs.push_back(x);
  }
  const kv::trace back = kv::trace_from_json(kv::to_json(sample(xs)));
  ASSERT_EQ(back.ops.size(), 2u);
  ASSERT_EQ(back.ops[0].k.data.size(), xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i)
    EXPECT_EQ(std::bit_cast<std::uint64_t>(back.ops[0].k.data[i]), std::bit_cast<std::uint64_t>(xs[i])) << i;
  EXPECT_EQ(back.ops[0].k.shape, (std::vector<std::size_t>{xs.size(), 1}));
  ASSERT_TRUE(back.ops[1].expect);
  EXPECT_EQ(back.ops[1].expect->weights, (std::vector<double>{0.25, 0.75}));
  EXPECT_EQ(back.implementation, "flat");
  EXPECT_EQ(back.config, sample({}).config);
}

TEST(TraceJson, WritesShortestDecimalsAndKeepsNegativeZero) {
  const std::string text = kv::to_json(sample({0.1, -0.0, NAN, -INFINITY}), -1);
  EXPECT_NE(text.find("[0.1,-0.0,\"nan\",\"-inf\"]"), std::string::npos) << text;
}

TEST(TraceJson, MalformedInputNamesTheProblem) {
  expect_rejected("{", "not valid JSON");
  expect_rejected(R"({"schema":"other","version":1})", "trace.schema");
  expect_rejected(R"({"schema":"kvconform-trace","version":9,"config":{},"ops":[]})", "unsupported version 9");
  expect_rejected(
      R"({"schema":"kvconform-trace","version":1,"config":{"kind":"cube","capacity":1,"d_k":1,"d_v":1},"ops":[]})",
      "unknown cache kind");
  expect_rejected(R"({"schema":"kvconform-trace","version":1,)"
                  R"("config":{"kind":"flat","capacity":1000000,"d_k":1000,"d_v":1000},"ops":[]})",
                  "exceed");
  expect_rejected(good + R"({"op":"jump"}]})", "ops[0].op");
  expect_rejected(good + R"({"op":"append","k":{"shape":[2],"data":[1]},"v":{"shape":[1],"data":[1]}}]})", "ops[0].k");
  expect_rejected(good + R"({"op":"append","k":{"shape":[1],"data":["one"]},"v":{"shape":[1],"data":[1]}}]})",
                  "ops[0].k.data[0]");
  expect_rejected(good + R"({"op":"append","k":{"shape":[-1],"data":[]},"v":{"shape":[1],"data":[1]}}]})",
                  "expected an integer in [0, 1048576]");
  expect_rejected(good + R"({"op":"decode"}]})", "missing field \"q\"");
  expect_rejected(good + R"({"op":"decode","q":{"shape":[1],"data":[1e999]}}]})", "not valid JSON");
}

// A config's cells are limited per kind: 2^24 doubles, 2^26 for beam, whose long cases exceed 2^24 elements.
TEST(TraceJson, CellLimitsPerKind) {
  const auto config = [](const std::string& c) {
    return R"({"schema":"kvconform-trace","version":1,"config":{)" + c + R"(},"ops":[]})";
  };
  EXPECT_EQ(kv::trace_from_json(config(R"("kind":"flat","capacity":262144,"d_k":32,"d_v":32)")).config.capacity,
            262144u);  // 2^24 cells
  expect_rejected(config(R"("kind":"flat","capacity":262145,"d_k":32,"d_v":32)"), "exceed 16777216 cells");
  const std::string beam = R"("kind":"beam","d_k":256,"d_v":256,"layers":8,"batch":2,"heads":4,"q_heads":4)";
  EXPECT_EQ(kv::trace_from_json(config(beam + R"(,"capacity":2048)")).config.capacity, 2048u);  // 2^26 cells
  expect_rejected(config(beam + R"(,"capacity":2049)"), "exceed 67108864 cells");
}

TEST(TraceJson, PagedAndBeamFieldsRoundTrip) {
  kv::trace paged;
  paged.config = {.kind = kv::cache_kind::paged, .capacity = 4, .d_k = 2, .d_v = 1, .block_size = 3, .preempt = true};
  paged.ops = {
      kv::op{.kind = kv::op_kind::create}, kv::op{.kind = kv::op_kind::fork, .seq = 0},
      kv::op{.kind = kv::op_kind::append, .k = kv::tensor::vector({1, 2}), .v = kv::tensor::vector({3}), .seq = 1},
      kv::op{.kind = kv::op_kind::release, .seq = 0}};
  const kv::trace p = kv::trace_from_json(kv::to_json(paged));
  EXPECT_EQ(p.config, paged.config);
  ASSERT_EQ(p.ops.size(), 4u);
  EXPECT_EQ(p.ops[1].kind, kv::op_kind::fork);
  EXPECT_EQ(p.ops[2].seq, 1);
  EXPECT_EQ(p.ops[3].seq, 0);

  kv::trace beam;
  beam.config = {.kind = kv::cache_kind::beam,
                 .capacity = 5,
                 .d_k = 2,
                 .d_v = 2,
                 .layers = 2,
                 .batch = 2,
                 .heads = 1,
                 .q_heads = 2};
  kv::op update{.kind = kv::op_kind::update,
                .k = {{2, 1, 1, 2}, {1, 2, 3, 4}},
                .v = {{2, 1, 1, 2}, {5, 6, 7, 8}},
                .layer = 1,
                .start = 0};
  kv::op decode{
      .kind = kv::op_kind::decode, .q = {{2, 2, 2}, std::vector<double>(8, 0.5)}, .layer = 1, .mask = {{2, 1}, {1, 0}}};
  beam.ops = {update, decode, kv::op{.kind = kv::op_kind::reorder, .index = {1, 1}}};
  const kv::trace b = kv::trace_from_json(kv::to_json(beam));
  EXPECT_EQ(b.config, beam.config);
  EXPECT_EQ(b.ops[0].k, update.k);
  EXPECT_EQ(b.ops[0].layer, 1);
  EXPECT_EQ(b.ops[1].mask, decode.mask);
  EXPECT_EQ(b.ops[2].index, (std::vector<std::int64_t>{1, 1}));

  std::string text = kv::to_json(beam);
  text.replace(text.find("\"heads\": 1"), 10, "\"heads\": 4");
  EXPECT_THROW(kv::trace_from_json(text), kv::trace_format_error);  // Hq not a multiple of H
}

TEST(TraceJson, OpsOutsideTheKindsVocabularyAreRejected) {
  expect_rejected(good + R"({"op":"reorder","index":[0]}]})",
                  "a flat cache has no op \"reorder\" (its ops: append, decode, prefill, rollback)");
}

TEST(TraceJson, DriverSeedAndSizeRoundTrip) {
  kv::trace t = sample({1.0});
  t.drive_seed = 18446744073709551615ull;  // the whole uint64 range survives JSON
  t.drive_size = 3;
  const kv::trace back = kv::trace_from_json(kv::to_json(t));
  ASSERT_TRUE(back.drive_seed);
  EXPECT_EQ(*back.drive_seed, 18446744073709551615ull);
  EXPECT_EQ(back.drive_size, 3u);
  EXPECT_FALSE(kv::trace_from_json(kv::to_json(sample({1.0}))).drive_seed);
}

TEST(TraceJson, DriverSizeOutsideOneToCapacityIsRejected) {
  // A driver draws its size in [1, capacity]: 0 divided by zero, more than the capacity indexed past the cache.
  const std::string drive =
      R"({"schema":"kvconform-trace","version":1,"property":"p",)"
      R"("config":{"kind":"flat","capacity":4,"d_k":1,"d_v":1},"ops":[],"drive":{"seed":1,"size":)";
  expect_rejected(drive + "0}}", "trace.drive.size: 0 is outside the allowed range [1, 4]");
  expect_rejected(drive + "5}}", "trace.drive.size: 5 is outside the allowed range [1, 4]");
  expect_rejected(drive + "1048576}}", "trace.drive.size");
  EXPECT_EQ(kv::trace_from_json(drive + "4}}").drive_size, 4u);
}

TEST(TraceJson, NestingAndSizeLimitsComeBeforeParsing) {
  expect_rejected(std::string(100000, '[') + std::string(100000, ']'), "nested deeper than the limit of 32 levels");
  std::string many = good + R"({"op":"decode","q":{"shape":[1],"data":[)";
  for (std::size_t i = 0; i <= kv::codec::max_json_values; ++i) many += "0,";
  expect_rejected(many + "0]}}]}", "more than the limit of 2097152 JSON values");
  // Short strings and long ones cost more parsed than written: counted before parsing too.
  const std::string tree_limit = "would take more than the limit of 96 MiB once parsed";
  std::string strings = good + R"({"op":"decode","q":{"shape":[1],"data":[)";
  for (int i = 0; i < 1250000; ++i) strings += "\"nan\",";
  expect_rejected(strings + "0]}}]}", tree_limit);
  expect_rejected(good + R"(], "note": ")" + std::string(17 << 20, 'x') + "\"}", tree_limit);
  EXPECT_EQ(kv::trace_from_json(good + R"(], "note": ")" + std::string(1 << 20, 'x') + "\"}").note.size(), 1u << 20);
}

TEST(TraceJson, StringsFromOutsideAreWrittenAsValidUtf8) {
  kv::trace t = sample({1.0});
  t.note = "port said \xff\xfe and \xe2\x82";  // not UTF-8: nlohmann alone would refuse to write it
  t.implementation = "impl\xc0";
  const kv::trace back = kv::trace_from_json(kv::to_json(t));
  EXPECT_EQ(back.note, "port said \\xff\\xfe and \\xe2\\x82");
  EXPECT_EQ(back.implementation, "impl\\xc0");
}

TEST(TraceJson, AShapeWhoseProductWrapsAroundIsRejected) {
  // 2^16 to the fourth power is 2^64: in 64 bits it would wrap to 0 and match empty data.
  expect_rejected(good + R"({"op":"decode","q":{"shape":[65536,65536,65536,65536],"data":[]}}]})",
                  "does not match the shape");
}

TEST(Digest, MatchesTheProtocolsTestValue) {
  kv::stream s;
  s.d_k = s.d_v = 1;
  s.keys = {1.0}, s.values = {-0.0};
  EXPECT_EQ(kv::digest_hex(kv::stream_digest(s)), "6df79e60fda6e4c9");  // docs/port-protocol.md §8
  s.values = {0.0};  // the sign bit of a zero counts, as rows compare bit for bit
  EXPECT_NE(kv::digest_hex(kv::stream_digest(s)), "6df79e60fda6e4c9");
}

TEST(TraceJson, PoliciesAndAnExtraKeyRoundTripAndADefaultChoiceIsDropped) {
  kv::trace t;
  t.config = {kv::cache_kind::prefix, 4, 1, 1};
  t.config.block_size = 2;
  t.policies.declare("hit_limit", "all_but_last");
  t.policies.declare("eviction", "block");  // the default: declaring it is declaring nothing
  t.ops = {kv::op{.kind = kv::op_kind::create, .tokens = {1, 2}, .extra_key = 7},
           kv::op{.kind = kv::op_kind::create, .tokens = {1}}};
  const std::string text = kv::to_json(t);
  EXPECT_EQ(text.find("\"extra_key\": 0"), std::string::npos);  // absent when 0
  const kv::trace back = kv::trace_from_json(text);
  EXPECT_EQ(back.policies.describe(), "hit_limit=all_but_last");
  EXPECT_EQ(back.ops[0].extra_key, 7);
  EXPECT_EQ(back.ops[1].extra_key, 0);
  std::string foreign = text;
  foreign.replace(foreign.find("all_but_last"), 12, "everything");
  expect_rejected(foreign, "trace.policies: prefix policy hit_limit has no choice \"everything\"");
}
