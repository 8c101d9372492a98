// The tiny decoder and the generation loop that drives a rows-family cache (flat, ring, growing; docs/design.md §2.2).
#include "properties/generate/generation.h"

#include <random>

#include "properties/generate/input_classes.h"
#include "properties/generate/op_builders.h"

namespace kvconform {

tiny_decoder::tiny_decoder(std::size_t vocab, std::size_t d_k, std::size_t d_v, std::uint64_t seed, std::size_t d_q,
                           std::size_t d_o)
    : vocab_(vocab), d_k_(d_k), d_v_(d_v), d_q_(d_q ? d_q : d_k), d_o_(d_o ? d_o : d_v) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> g;
  for (auto [m, n] :
       {std::pair{&keys_, vocab * d_k_}, {&values_, vocab * d_v_}, {&queries_, vocab * d_q_}, {&out_, vocab * d_o_}})
    for (std::size_t i = 0; i < n; ++i) m->push_back(g(rng));
}

std::vector<double> tiny_decoder::logits(const std::vector<double>& o) const {
  std::vector<double> l(vocab_, 0.0);
  for (std::size_t t = 0; t < vocab_; ++t)
    for (std::size_t c = 0; c < d_o_ && c < o.size(); ++c) l[t] += out_[t * d_o_ + c] * o[c];
  return l;
}

std::size_t tiny_decoder::next(const std::vector<double>& o) const {
  const std::vector<double> l = logits(o);
  std::size_t best = 0;
  double best_logit = -1e300;
  for (std::size_t t = 0; t < vocab_; ++t)
    if (l[t] > best_logit) best = t, best_logit = l[t];
  return best;
}

std::size_t drive_generation(session& s, const cache_config& c, std::uint64_t seed, std::size_t prompt,
                             std::size_t new_tokens) {
  const tiny_decoder dec(16, c.d_k, c.d_v, seed);
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  op prefill;
  std::size_t last = 0;
  for (std::size_t i = 0; i < prompt; ++i) {
    last = rng() % dec.vocab();
    const auto k = dec.key(last), v = dec.value(last);
    prefill.k.data.insert(prefill.k.data.end(), k.begin(), k.end());
    prefill.v.data.insert(prefill.v.data.end(), v.begin(), v.end());
  }
  prefill.k.shape = {prompt, c.d_k}, prefill.v.shape = {prompt, c.d_v};
  // A cache declaring sparse top-k gets the indexer's inputs with every op (docs/numerics.md §7.4).
  row_source index(input_class::moderate, c.d_k, c.d_v, seed);
  if (const attention_semantics& a = s.impl().profile.attention; a.top_k > 0)
    index.set_indexer(a.index_heads, a.index_width);
  attach_index(prefill, index, 0);
  if (!s.step(prefill) || !s.last().accepted) return 0;
  std::size_t generated = 0;
  for (; generated < new_tokens; ++generated) {
    op d;
    d.kind = op_kind::decode;
    d.q = tensor::vector(dec.query(last));
    // A cache declaring learned sinks gets a sink logit with every decode (docs/numerics.md §7.1).
    if (s.impl().profile.attention.sinks == sink_kind::learned) d.sinks = tensor::vector({double(rng() % 9) - 4});
    const auto position = static_cast<std::int64_t>(prompt + generated);
    attach_index(d, index, position);
    if (!s.step(d)) break;
    last = dec.next(s.last().output);
    op a;
    a.k = tensor::vector(dec.key(last));
    a.v = tensor::vector(dec.value(last));
    attach_index(a, index, position);
    if (!s.step(a) || !s.last().accepted) break;
  }
  return generated;
}

}  // namespace kvconform
