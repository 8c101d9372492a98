// The sparse top-k reference (docs/kinds/flat.md, docs/numerics.md §7.4): its block-planar index stores what the
// model stores, its mutant's reader does not, and hostile indexer inputs are refused changing nothing.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "impls/flat/mutants/sparse_bugs.h"
#include "impls/flat/variants/declared_sparse.h"
#include "oracle/models/rows_model.h"
#include "oracle/numeric/top_k.h"

namespace kv = kvconform;

namespace {
constexpr kv::attention_semantics dsa = kv::declared::dsa::value;

std::vector<double> gaussian_rows(std::size_t n, std::size_t width, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g;
  std::vector<double> x;
  for (std::size_t i = 0; i < n * width; ++i) x.push_back(std::ldexp(g(rng), static_cast<int>(i % 13) - 6));
  return x;
}
}  // namespace

// Every row of every block reads back as the model stores it; the interleaved reader gets some row wrong.
TEST(SparseFlat, PlanarIndexReadsBackTheModelsRows) {
  const std::vector<double> x = gaussian_rows(11, dsa.index_width, 7);
  kv::planar_index<> planar(dsa.index_width);
  kv::planar_index<true> interleaved(dsa.index_width);
  for (std::size_t r = 0; r < 11; ++r) planar.push(x.data() + r * 8), interleaved.push(x.data() + r * 8);
  std::vector<double> got(8), misread(8);
  bool any_misread = false;
  for (std::size_t r = 0; r < 11; ++r) {
    planar.read(r, got.data());
    interleaved.read(r, misread.data());
    EXPECT_EQ(got, kv::stored_index_row(dsa, x.data() + r * 8)) << "row " << r;
    any_misread = any_misread || misread != got;
  }
  EXPECT_TRUE(any_misread);
  planar.truncate(5);
  planar.push(x.data());  // row 5 written again after a rollback into a block
  planar.read(5, got.data());
  EXPECT_EQ(got, kv::stored_index_row(dsa, x.data()));
}

// An index key beyond 2^64 (whose row scale would overflow f32) or not finite is refused by the model and the reference
// alike, and the reference keeps its rows.
TEST(SparseFlat, HostileIndexKeysAreRefusedChangingNothing) {
  kv::flat_sparse<kv::declared::dsa> c(8, 2, 2);
  kv::rows_model m({kv::cache_kind::flat, 8, 2, 2}, kv::flat_sparse<kv::declared::dsa>::profile,
                   kv::rows_model::full::refuse);
  const std::vector<double> k{1, 2}, v{3, 4};
  for (double bad : {1e300, std::numeric_limits<double>::infinity(), std::nan("")}) {
    std::vector<double> ik(8, 0.5);
    ik[3] = bad;
    EXPECT_THROW(c.append({k.data(), {2}}, {v.data(), {2}}, {{ik.data(), {8}}, {}, {}}), kv::shape_error);
    EXPECT_EQ(c.size(), 0u);
    kv::op o{.kind = kv::op_kind::append, .k = kv::tensor::vector(k), .v = kv::tensor::vector(v)};
    o.index_k = kv::tensor::vector(ik);
    const kv::expectation e = m.apply(o);
    EXPECT_FALSE(e.accepted);
    EXPECT_EQ(e.reasons, kv::refuse_shape);
    EXPECT_EQ(m.size(), 0u);
  }
}
