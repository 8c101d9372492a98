// Unit tests of the reference ring cache: exactly the last min(T, W) steps, oldest first.
#include <gtest/gtest.h>

#include <vector>

#include "impls/ring/ring.h"

namespace kv = kvconform;

namespace {
std::vector<double> seq(double from, std::size_t n) {
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back(from + double(i));
  return v;
}
void append_rows(kv::ring& r, double from, std::size_t n) {
  const auto k = seq(from, n), v = seq(-from, n);
  r.append({k.data(), {n, 1}}, {v.data(), {n, 1}});
}
std::vector<double> keys(const kv::ring& r) {
  const auto m = r.keys();
  return {m.data(), m.data() + m.size()};
}
}  // namespace

TEST(Ring, KeepsTheLastWStepsAcrossTheWrapPoint) {
  kv::ring r(3, 1, 1);
  append_rows(r, 0, 2);
  EXPECT_EQ(keys(r), (std::vector<double>{0, 1}));
  append_rows(r, 2, 2);  // crosses the wrap point in one call
  EXPECT_EQ(keys(r), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(r.positions(), (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(r.total(), 4);
}

TEST(Ring, AnAppendOfMoreThanWKeepsItsLastW) {
  kv::ring r(3, 1, 1);
  append_rows(r, 10, 1);
  append_rows(r, 20, 7);
  EXPECT_EQ(keys(r), (std::vector<double>{24, 25, 26}));
  EXPECT_EQ(r.positions(), (std::vector<std::int64_t>{5, 6, 7}));
}

TEST(Ring, ShapeErrorsChangeNothing) {
  kv::ring r(2, 1, 1);
  append_rows(r, 0, 3);
  const std::vector<double> k{1, 2}, v{1};
  EXPECT_THROW(r.append({k.data(), {2, 1}}, {v.data(), {1, 1}}), kv::shape_error);
  EXPECT_THROW(r.append({k.data(), {1, 2}}, {v.data(), {1, 1}}), kv::shape_error);
  EXPECT_EQ(keys(r), (std::vector<double>{1, 2}));
  EXPECT_EQ(r.total(), 3);
}

TEST(Ring, DecodeReadsTheHeldRowsInLogicalOrder) {
  kv::ring r(2, 1, 1);
  append_rows(r, 0, 3);  // holds 1, 2 in slots 1, 0
  const std::vector<double> q{0};
  const auto d = kv::decode_step({q.data(), {1}}, r);
  ASSERT_EQ(d.weights.size(), 2);
  EXPECT_EQ(d.output[0], 1.5);  // equal weights over the held values 1 and 2
  EXPECT_THROW(kv::decode_step({q.data(), {1}}, kv::ring(2, 1, 1)), kv::empty_error);
}
