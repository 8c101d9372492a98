// Unit tests of snapshots read in place: row_data pieces, bitwise comparison across any split, diff messages.
#include <gtest/gtest.h>

#include <cmath>

#include "properties/trace/trace.h"

namespace kv = kvconform;

namespace {
/// The same doubles as `all`, cut into pieces at `cuts`, viewed in place.
kv::row_data pieces(const std::vector<double>& all, std::vector<std::size_t> cuts) {
  kv::row_data r;
  cuts.push_back(all.size());
  std::size_t from = 0;
  for (std::size_t to : cuts) r.add(all.data() + from, to - from), from = to;
  return r;
}

kv::snapshot one_stream(kv::row_data keys, kv::row_data values) {
  kv::snapshot s;
  kv::stream st;
  st.d_k = st.d_v = 2;
  st.keys = std::move(keys), st.values = std::move(values);
  s.streams.push_back(std::move(st));
  return s;
}
}  // namespace

TEST(RowData, ComparesBitForBitWhateverThePieces) {
  const std::vector<double> a = {1, 2, 3, 4, 5, 6, 7}, b = {1, 2, 3, 4, -5, 6, 7};
  const kv::row_data whole(a), split = pieces(a, {1, 3, 6}), other = pieces(b, {2, 5});
  EXPECT_EQ(whole.size(), 7u);
  EXPECT_EQ(whole.mismatch(split), 7u);
  EXPECT_EQ(split.mismatch(whole), 7u);
  EXPECT_EQ(split.mismatch(other), 4u);  // the first double that differs
  EXPECT_EQ(other.mismatch(whole), 4u);
  EXPECT_EQ(split[5], 6);
  EXPECT_EQ(split.copy(2, 3), (std::vector<double>{3, 4, 5}));
  EXPECT_EQ(split.copy(5), (std::vector<double>{6, 7}));
  EXPECT_TRUE(split == a);
  EXPECT_FALSE(other == a);
}

TEST(RowData, ZeroSignAndNanPayloadsCount) {
  const std::vector<double> zero = {0.0}, minus_zero = {-0.0}, nan = {std::nan("1")}, other_nan = {std::nan("2")};
  EXPECT_EQ(kv::row_data(zero).mismatch(kv::row_data(minus_zero)), 0u);
  EXPECT_EQ(kv::row_data(nan).mismatch(kv::row_data(other_nan)), 0u);
  EXPECT_EQ(kv::row_data(nan).mismatch(kv::row_data(nan)), 1u);
}

TEST(RowData, AdjacentViewsMergeAndKeptStorageOutlivesItsOwner) {
  kv::row_data r;
  {
    auto owned = std::make_shared<const std::vector<double>>(std::vector<double>{1, 2, 3, 4});
    r.add(owned->data(), 2, owned);
    r.add(owned->data() + 2, 2);
  }  // the vector lives on in r
  EXPECT_EQ(r.copy(), (std::vector<double>{1, 2, 3, 4}));
}

TEST(SnapshotDiff, NamesTheFirstRowThatDiffersAcrossPieces) {
  const std::vector<double> want = {1, 2, 3, 4, 5, 6}, got = {1, 2, 3, 4, 5, 9};
  const auto e = one_stream(pieces(want, {2, 4}), kv::row_data(want));
  EXPECT_EQ(kv::diff(e, one_stream(kv::row_data(want), pieces(want, {1, 5}))), "");
  EXPECT_EQ(kv::diff(e, one_stream(pieces(got, {3}), kv::row_data(want))), "key row 2 is [5, 9], expected [5, 6]");
  EXPECT_EQ(kv::diff(e, one_stream(kv::row_data(want), kv::row_data(got))), "value row 2 is [5, 9], expected [5, 6]");
}

TEST(SnapshotDiff, BoundedKeysAcceptEachEntryWithinItsBoundAndNoNan) {
  const std::vector<double> want = {1, 2, 3, 4};
  auto e = one_stream(kv::row_data(want), kv::row_data(want));
  e.streams[0].key_bounds = {0.5, 0.5, 0, 0.25};
  const std::vector<double> within = {1.5, 1.5, 3, 3.75}, beyond = {1, 2, 3, 3.5}, nan = {1, std::nan(""), 3, 4};
  EXPECT_EQ(kv::diff(e, one_stream(kv::row_data(within), kv::row_data(want))), "");
  EXPECT_EQ(kv::diff(e, one_stream(kv::row_data(beyond), kv::row_data(want))),
            "key row 1 is [3, 3.5], expected [3, 4] (entry 1 off by 0.5, bound 0.25)");
  EXPECT_NE(kv::diff(e, one_stream(kv::row_data(nan), kv::row_data(want))), "");
  // Values stay bit for bit: bounds are the keys' alone.
  EXPECT_NE(kv::diff(e, one_stream(kv::row_data(want), kv::row_data(within))), "");
}

// The prefix generator seeds each row by its whole token prefix, continued a token at a time: the
// same seeds as hashing each prefix whole, so stored traces and vectors keep their rows.
TEST(Fnv1a, ContinuesTheHashOfAPrefix) {
  EXPECT_EQ(kv::fnv1a("cd", kv::fnv1a("ab")), kv::fnv1a("abcd"));
  EXPECT_EQ(kv::fnv1a(""), 1469598103934665603ull);
  EXPECT_NE(kv::fnv1a("ab"), kv::fnv1a("ba"));
}
