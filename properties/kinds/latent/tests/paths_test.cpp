// The latent reference's two orders on DeepSeek-V3's shapes: each head within the bound of its materialised
// attention, and the absorbed and materialised answers within the sum of their bounds of each other.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "impls/latent/latent.h"
#include "impls/latent/variants.h"
#include "oracle/models/latent_model.h"
#include "properties/executor/decode_check.h"
#include "properties/kinds/latent/parts.h"

namespace kv = kvconform;

namespace {
template <class C>
kv::decode_result run(const C& c, std::size_t s, const kv::op& o) {
  return c.decode_step(s, o.q.view(), o.w_uk.view(), o.w_uv.view());
}
}  // namespace

TEST(LatentPaths, AbsorbedAndMaterialisedAgreeWithinBothBoundsOnDeepSeekShapes) {
  constexpr std::size_t d_c = kv::kinds::deepseek_latent, d_k = d_c + kv::kinds::deepseek_rotary, n = 6;
  const kv::cache_config config{kv::cache_kind::latent, 4, d_k, d_c, 0, 0, 4};
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {  // unit, thousand-fold and spiked projections among them
    const kv::op_target t{std::make_shared<kv::row_source>(kv::input_class::moderate, d_k, d_c, seed), 0, 0};
    const kv::op append = kv::kinds::latent_append_op(t, n, 0, seed);
    const kv::op decode = kv::kinds::latent_decode_op({t.src, static_cast<std::int64_t>(n), 0}, false, 0, seed);
    ASSERT_EQ(decode.q.shape[0], 16u) << "seed " << seed;  // DeepSeek-V3's heads at tensor parallel 8
    kv::latent_model model(config, kv::latent::profile);
    model.apply({.kind = kv::op_kind::create});
    ASSERT_TRUE(model.apply(append).accepted);
    const kv::expectation e = model.apply(decode);
    ASSERT_EQ(e.problems.size(), 16u);
    kv::latent absorbed(4, 4, d_k, d_c);
    kv::variants::latent_materialised materialised(4, 4, d_k, d_c);
    const std::size_t sa = absorbed.create(), sm = materialised.create();
    absorbed.append(sa, append.k.view()), materialised.append(sm, append.k.view());
    const kv::decode_result a = run(absorbed, sa, decode), m = run(materialised, sm, decode);
    for (std::size_t h = 0; h < e.problems.size(); ++h) {
      const kv::attention_problem& p = e.problems[h];
      const kv::decode_verdict va =
          kv::check_decode(p, a.output.data() + h * p.d_v, a.weights.data() + h * n, kv::latent::profile);
      const kv::decode_verdict vm = kv::check_decode(p, m.output.data() + h * p.d_v, m.weights.data() + h * n,
                                                     kv::variants::latent_materialised::profile);
      ASSERT_TRUE(va.check.empty() && vm.check.empty())
          << "seed " << seed << " head " << h << ": " << va.message << vm.message;
      for (std::size_t c = 0; c < p.d_v; ++c)
        EXPECT_LE(std::fabs(a.output[Eigen::Index(h * p.d_v + c)] - m.output[Eigen::Index(h * p.d_v + c)]),
                  va.bound.output[c] + vm.bound.output[c])
            << "seed " << seed << " head " << h << " output " << c;
      for (std::size_t i = 0; i < n; ++i)
        EXPECT_LE(std::fabs(a.weights[Eigen::Index(h * n + i)] - m.weights[Eigen::Index(h * n + i)]),
                  va.bound.weights[i] + vm.bound.weights[i])
            << "seed " << seed << " head " << h << " weight " << i;
    }
  }
}
