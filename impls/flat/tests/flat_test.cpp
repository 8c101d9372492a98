// Unit tests of the reference flat cache against the flat contract (docs/kinds/flat.md).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "impls/flat/flat.h"

namespace kv = kvconform;

namespace {
kv::array_view mat(const std::vector<double>& d, std::size_t rows, std::size_t cols) {
  return {d.data(), {rows, cols}};
}
kv::array_view vec(const std::vector<double>& d) { return {d.data(), {d.size()}}; }

std::vector<double> rows_of(const kv::flat::view& m) { return {m.data(), m.data() + m.size()}; }
}  // namespace

TEST(Flat, SeedWorkedExample) {
  kv::flat c(4, 2, 2);
  const std::vector<double> k2{1, 0, 0, 1}, v2{1, 2, 3, 4}, k1{1, 1}, v1{5, 6}, q{1, 0};
  c.append(mat(k2, 2, 2), mat(v2, 2, 2));
  c.append(vec(k1), vec(v1));
  const auto r = kv::decode_step(vec(q), c);
  EXPECT_NEAR(r.output[0], 3.0, 5e-9);
  EXPECT_NEAR(r.output[1], 4.0, 5e-9);
  const double want[] = {0.40111209, 0.19777581, 0.40111209};
  ASSERT_EQ(r.weights.size(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(std::llround(r.weights[i] * 1e8), std::llround(want[i] * 1e8)) << i;
  EXPECT_THROW(c.append(mat(k2, 2, 2), mat(v2, 2, 2)), kv::capacity_error);
  EXPECT_EQ(c.size(), 3u);
}

TEST(Flat, AppendEndingExactlyAtCapacityIsAccepted) {
  kv::flat c(3, 1, 1);
  const std::vector<double> k{1, 2, 3}, v{4, 5, 6};
  c.append(mat(k, 3, 1), mat(v, 3, 1));
  EXPECT_EQ(c.size(), 3u);
  EXPECT_THROW(c.append(mat(k, 1, 1), mat(v, 1, 1)), kv::capacity_error);
}

TEST(Flat, ZeroStepAppendIsANoOp) {
  kv::flat c(1, 2, 3);
  c.append(mat({}, 0, 2), mat({}, 0, 3));
  EXPECT_EQ(c.size(), 0u);
}

TEST(Flat, RefusedAppendsChangeNothing) {
  kv::flat c(3, 2, 1);
  const std::vector<double> k{1, 2, 3, 4}, v{5, 6};
  c.append(mat(k, 2, 2), mat(v, 2, 1));
  const auto keys = rows_of(c.keys()), values = rows_of(c.values());
  EXPECT_THROW(c.append(mat(k, 2, 2), mat(v, 2, 1)), kv::capacity_error);                  // full
  EXPECT_THROW(c.append(mat(k, 2, 2), mat(v, 1, 1)), kv::shape_error);                     // step mismatch
  EXPECT_THROW(c.append(mat(k, 1, 4), mat(v, 1, 1)), kv::shape_error);                     // wrong width
  EXPECT_THROW(c.append(kv::array_view(k.data(), {1, 1, 2}), vec({5})), kv::shape_error);  // rank 3
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(rows_of(c.keys()), keys);
  EXPECT_EQ(rows_of(c.values()), values);
}

TEST(Flat, ViewsShowFilledRowsOnlyAndAreCopies) {
  kv::flat c(8, 2, 1);
  std::vector<double> k{1, 2}, v{3};
  c.append(vec(k), vec(v));
  k[0] = 99, v[0] = 99;  // the caller reuses its arrays
  ASSERT_EQ(c.keys().rows(), 1);
  EXPECT_EQ(c.keys()(0, 0), 1);
  EXPECT_EQ(c.values()(0, 0), 3);
}

TEST(Flat, DecodeErrors) {
  kv::flat c(2, 2, 1);
  EXPECT_THROW(kv::decode_step(vec({1, 0}), c), kv::empty_error);
  c.append(vec({1, 0}), vec({1}));
  EXPECT_THROW(kv::decode_step(vec({1, 0, 0}), c), kv::shape_error);
}

TEST(Flat, ScoresBeyond1000StayFinite) {
  kv::flat c(2, 1, 1);
  c.append(mat({2000, -3000}, 2, 1), mat({1, 2}, 2, 1));
  const auto r = kv::decode_step(vec({1}), c);
  EXPECT_EQ(r.output[0], 1.0);
  EXPECT_EQ(r.weights[1], 0.0);
}
