// Unit tests of the reference growing cache: every step kept in order, storage in whole steps.
#include <gtest/gtest.h>

#include <vector>

#include "impls/growing/growing.h"

namespace kv = kvconform;

namespace {
void append_rows(kv::growing& g, double from, std::size_t n) {
  std::vector<double> k, v;
  for (std::size_t i = 0; i < n; ++i) k.push_back(from + double(i)), v.push_back(-from - double(i));
  g.append({k.data(), {n, 1}}, {v.data(), {n, 1}});
}
}  // namespace

TEST(Growing, ReservesWholeStepsAndKeepsEveryRow) {
  kv::growing g(4, 1, 1);
  EXPECT_EQ(g.reserved(), 0u);
  append_rows(g, 0, 1);
  EXPECT_EQ(g.reserved(), 4u);
  append_rows(g, 1, 3);
  EXPECT_EQ(g.reserved(), 4u);  // exactly full: no growth yet
  append_rows(g, 4, 6);
  EXPECT_EQ(g.reserved(), 12u);
  ASSERT_EQ(g.size(), 10u);
  for (std::size_t i = 0; i < g.size(); ++i) EXPECT_EQ(g.keys()(static_cast<Eigen::Index>(i), 0), double(i));
}

TEST(Growing, ShapeErrorsChangeNothing) {
  kv::growing g(2, 2, 1);
  const std::vector<double> k = {1, 2, 3}, v = {1};
  EXPECT_THROW(g.append({k.data(), {1, 3}}, {v.data(), {1, 1}}), kv::shape_error);
  EXPECT_EQ(g.size(), 0u);
  EXPECT_EQ(g.reserved(), 0u);
}
