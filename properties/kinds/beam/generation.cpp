// Batched generation loops over a beam cache (greedy, beam search through reorder), each against a recompute.
#include "properties/kinds/beam/generation.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>

#include "properties/kinds/beam/inputs.h"

namespace kvconform::kinds {

namespace {
/// Tokens of the tiny decoder in the beam generation loops.
constexpr std::size_t generation_vocab = 16;

/// The tiny decoder over every layer and head of a beam config: a token's key and value for
/// layer l, kv head h are slice l H + h of its key and value rows; its query for layer l, query
/// head h is slice l Hq + h; the logits read every layer's attention output, (L, Hq, D) per row.
class layered_decoder {
 public:
  layered_decoder(const cache_config& c, std::uint64_t seed)
      : c_(c),
        dec_(generation_vocab, c.layers * c.heads * c.d_k, c.layers * c.heads * c.d_k, seed,
             c.layers * c.q_heads * c.d_k, c.layers * c.q_heads * c.d_k) {}
  std::size_t layers() const { return c_.layers; }
  std::size_t vocab() const { return dec_.vocab(); }

  /// Layer l's update of positions [from, len) of every row: k and v shaped (B, H, len - from, D).
  op update(const std::vector<std::vector<std::size_t>>& rows, std::size_t l, std::size_t from) const {
    const std::size_t len = rows[0].size(), d = c_.d_k;
    op o;
    o.kind = op_kind::update;
    o.layer = static_cast<std::int64_t>(l), o.start = static_cast<std::int64_t>(from);
    for (const auto& row : rows)
      for (std::size_t h = 0; h < c_.heads; ++h)
        for (std::size_t t = from; t < len; ++t) {
          const auto at = static_cast<std::ptrdiff_t>((l * c_.heads + h) * d),
                     end = at + static_cast<std::ptrdiff_t>(d);
          const auto k = dec_.key(row[t]), v = dec_.value(row[t]);
          o.k.data.insert(o.k.data.end(), k.begin() + at, k.begin() + end);
          o.v.data.insert(o.v.data.end(), v.begin() + at, v.begin() + end);
        }
    o.k.shape = o.v.shape = {rows.size(), c_.heads, len - from, d};
    return o;
  }

  /// Layer l's decode with each row's last token as the query (B, Hq, D), masking the padding.
  op decode(const std::vector<std::vector<std::size_t>>& rows, const std::vector<std::size_t>& pads,
            std::size_t l) const {
    const std::size_t w = c_.q_heads * c_.d_k;
    op o;
    o.kind = op_kind::decode;
    o.layer = static_cast<std::int64_t>(l);
    for (const auto& row : rows) {
      const auto q = dec_.query(row.back());
      o.q.data.insert(o.q.data.end(), q.begin() + static_cast<std::ptrdiff_t>(l * w),
                      q.begin() + static_cast<std::ptrdiff_t>((l + 1) * w));
    }
    o.q.shape = {rows.size(), c_.q_heads, c_.d_k};
    if (std::any_of(pads.begin(), pads.end(), [](std::size_t p) { return p > 0; }))
      o.mask = left_padding_mask(pads, rows[0].size());
    return o;
  }

  /// Row b's logits from every layer's decode output (B, Hq, D).
  std::vector<double> logits(const std::vector<std::vector<double>>& outputs, std::size_t b) const {
    const auto w = static_cast<std::ptrdiff_t>(c_.q_heads * c_.d_k), at = static_cast<std::ptrdiff_t>(b) * w;
    std::vector<double> o;
    for (const auto& layer : outputs) o.insert(o.end(), layer.begin() + at, layer.begin() + at + w);
    return dec_.logits(o);
  }

 private:
  cache_config c_;
  tiny_decoder dec_;
};

/// The rows being generated, each starting with pads[b] masked positions (left padding).
struct batch_rows {
  std::vector<std::vector<std::size_t>> tokens;
  std::vector<std::size_t> pads;
};

/// Steps `s`; false, with the reason in `failure`, when the op fails or is refused.
bool run_op(session& s, const op& o, std::string& failure) {
  if (s.step(o) && s.last().accepted) return true;
  failure = s.failed() ? s.failed()->signature() + ": " + s.failed()->message
                       : describe(o) + " was refused: " + s.last().message;
  return false;
}

/// Layer by layer, feeds positions [from, len) of every row and decodes; then each row's logits (B x vocab).
bool feed_and_score(session& s, const layered_decoder& d, const batch_rows& rows, std::size_t from,
                    std::vector<double>& logits, std::string& failure) {
  std::vector<std::vector<double>> outputs;
  for (std::size_t l = 0; l < d.layers(); ++l) {
    if (!run_op(s, d.update(rows.tokens, l, from), failure) || !run_op(s, d.decode(rows.tokens, rows.pads, l), failure))
      return false;
    outputs.push_back(s.last().output);
  }
  logits.clear();
  for (std::size_t b = 0; b < rows.tokens.size(); ++b) {
    const auto row = d.logits(outputs, b);
    logits.insert(logits.end(), row.begin(), row.end());
  }
  return true;
}

/// Keeps the B best (beam, token) continuations by summed log-probability; ties go to the lower
/// beam, then the lower token. `parents[i]` becomes the beam that new beam i continues.
void select_beams(const std::vector<double>& logits, std::size_t vocab, std::vector<double>& scores,
                  std::vector<std::int64_t>& parents, std::vector<std::vector<std::size_t>>& tokens) {
  struct candidate {
    double score;
    std::size_t beam, token;
  };
  std::vector<candidate> all;
  for (std::size_t b = 0; b < scores.size(); ++b) {
    if (scores[b] == -std::numeric_limits<double>::infinity()) continue;  // a beam not yet live
    const auto row = logits.begin() + static_cast<std::ptrdiff_t>(b * vocab);
    const double m = *std::max_element(row, row + static_cast<std::ptrdiff_t>(vocab));
    double sum = 0;
    for (std::size_t t = 0; t < vocab; ++t) sum += std::exp(row[static_cast<std::ptrdiff_t>(t)] - m);
    const double log_z = m + std::log(sum);
    for (std::size_t t = 0; t < vocab; ++t)
      all.push_back({scores[b] + row[static_cast<std::ptrdiff_t>(t)] - log_z, b, t});
  }
  std::stable_sort(all.begin(), all.end(), [](const candidate& x, const candidate& y) { return x.score > y.score; });
  const auto old = tokens;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    tokens[i] = old[all[i].beam];
    tokens[i].push_back(all[i].token);
    parents[i] = static_cast<std::int64_t>(all[i].beam);
    scores[i] = all[i].score;
  }
}

/// One pass: the logits (B x vocab) of rows of equal length; `parents` are the rows the current
/// rows continue (identity except in beam search).
using pass_fn = std::function<bool(const batch_rows&, const std::vector<std::int64_t>& parents,
                                   std::vector<double>& logits, std::string& failure)>;

/// The search both runs share: prompts, then N + 1 passes, each choosing the next tokens.
batch_generation run_generation(const layered_decoder& d, std::size_t batch, std::uint64_t seed, std::size_t prompt,
                                std::size_t new_tokens, search_mode mode, const pass_fn& pass) {
  const std::size_t vocab = d.vocab();
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  batch_rows rows{std::vector<std::vector<std::size_t>>(batch), std::vector<std::size_t>(batch, 0)};
  for (std::size_t b = 0; b < batch; ++b) {
    if (mode == search_mode::greedy) rows.pads[b] = rng() % prompt;  // every row keeps one real token
    for (std::size_t t = 0; t < prompt; ++t)
      rows.tokens[b].push_back(t < rows.pads[b] ? 0 : rng() % vocab);  // padding holds token 0
  }
  // Beam search starts from one prompt and one live beam; the others would only repeat it.
  std::vector<double> scores(batch, mode == search_mode::beam ? -std::numeric_limits<double>::infinity() : 0.0);
  if (mode == search_mode::beam) rows.tokens.assign(batch, rows.tokens[0]), scores[0] = 0;
  std::vector<std::int64_t> parents(batch);
  std::iota(parents.begin(), parents.end(), 0);

  batch_generation out;
  for (std::size_t p = 0; p <= new_tokens; ++p) {
    std::vector<double> logits;
    if (!pass(rows, parents, logits, out.failure)) break;
    out.logits.push_back(logits);
    if (mode == search_mode::beam) {
      select_beams(logits, vocab, scores, parents, rows.tokens);
      continue;
    }
    for (std::size_t b = 0; b < batch; ++b) {
      const auto row = logits.begin() + static_cast<std::ptrdiff_t>(b * vocab);
      rows.tokens[b].push_back(
          static_cast<std::size_t>(std::max_element(row, row + static_cast<std::ptrdiff_t>(vocab)) - row));
    }
  }
  out.tokens = std::move(rows.tokens);
  return out;
}

/// Where two complete runs first differ: a row's tokens, or a logit's bits.
std::string first_difference(const batch_generation& cached, const batch_generation& fresh) {
  for (std::size_t b = 0; b < cached.tokens.size(); ++b)
    if (cached.tokens[b] != fresh.tokens[b])
      return "row " + std::to_string(b) + " generated other tokens than the recompute";
  for (std::size_t p = 0; p < cached.logits.size(); ++p)
    for (std::size_t i = 0; i < cached.logits[p].size(); ++i)
      if (std::bit_cast<std::uint64_t>(cached.logits[p][i]) != std::bit_cast<std::uint64_t>(fresh.logits[p][i])) {
        std::ostringstream s;
        s.precision(17);
        s << "pass " << p << ", row " << i / generation_vocab << ", token " << i % generation_vocab << ": logit "
          << cached.logits[p][i] << " with the cache, " << fresh.logits[p][i] << " recomputed (not bit for bit)";
        return s.str();
      }
  return "";
}
}  // namespace

batch_generation generate_cached(session& s, const cache_config& c, std::uint64_t seed, std::size_t prompt,
                                 std::size_t new_tokens, search_mode mode) {
  const layered_decoder d(c, seed);
  std::size_t filled = 0, computed = 0;
  batch_generation g =
      run_generation(d, c.batch, seed, prompt, new_tokens, mode,
                     [&](const batch_rows& rows, const auto& parents, auto& logits, auto& failure) {
                       const op reorder{.kind = op_kind::reorder, .index = parents};
                       if (mode == search_mode::beam && filled > 0 && !run_op(s, reorder, failure)) return false;
                       if (!feed_and_score(s, d, rows, filled, logits, failure)) return false;
                       computed += rows.tokens[0].size() - filled;  // only the positions the cache does not hold yet
                       filled = rows.tokens[0].size();
                       return true;
                     });
  g.kv_computations = computed;
  return g;
}

batch_generation generate_recomputed(const implementation& impl, const cache_config& c, std::uint64_t seed,
                                     std::size_t prompt, std::size_t new_tokens, search_mode mode) {
  const layered_decoder d(c, seed);
  std::size_t computed = 0;
  batch_generation g = run_generation(d, c.batch, seed, prompt, new_tokens, mode,
                                      [&](const batch_rows& rows, const auto&, auto& logits, auto& failure) {
                                        session fresh(c, impl);
                                        if (!feed_and_score(fresh, d, rows, 0, logits, failure)) return false;
                                        computed += rows.tokens[0].size();
                                        return true;
                                      });
  g.kv_computations = computed;
  return g;
}

void compare_with_recompute(session& s, const cache_config& c, std::uint64_t seed, std::size_t prompt,
                            std::size_t new_tokens, search_mode mode) {
  const batch_generation cached = generate_cached(s, c, seed, prompt, new_tokens, mode);
  if (s.failed()) return;  // the executor has reported it
  // What only this comparison sees is not in the ops (the recompute ran in fresh caches); the
  // saved trace keeps the driver's seed and size, and replay runs the driver again.
  auto report = [&](const char* check, const std::string& what) {
    s.report(check, what + " (found by the generation driver, which replay runs again)");
  };
  if (!cached.failure.empty()) return report("generation", cached.failure);
  const batch_generation fresh = generate_recomputed(s.impl(), c, seed, prompt, new_tokens, mode);
  if (!fresh.failure.empty()) return report("recompute", "the recomputing cache failed: " + fresh.failure);
  if (const std::string d = first_difference(cached, fresh); !d.empty()) return report("recompute", d);
  const std::size_t p = prompt, n = new_tokens, prefix_sum = (n + 1) * p + n * (n + 1) / 2;
  if (cached.kv_computations != p + n || fresh.kv_computations != prefix_sum)
    report("kv-count", "K/V computed for " + std::to_string(cached.kv_computations) + " positions with the cache and " +
                           std::to_string(fresh.kv_computations) + " without, expected P + N = " +
                           std::to_string(p + n) + " and the sum of prefix lengths " + std::to_string(prefix_sum));
}

}  // namespace kvconform::kinds
