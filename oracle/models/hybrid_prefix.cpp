// The hybrid model's prefix caching: full blocks registered under token prefixes, and the hit a create takes.
#include <algorithm>

#include "oracle/models/hybrid_model.h"

namespace kvconform {

namespace {
constexpr std::size_t full_group = 0, sliding_group = 1;  // named apart from hybrid_model.cpp's (unity builds)
std::vector<std::int64_t> head(const std::vector<std::int64_t>& tokens, std::size_t n) {
  return {tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(n)};
}
}  // namespace

void hybrid_model::keep_given(sequence& s, std::size_t l, std::size_t p, const std::vector<double>& k,
                              const std::vector<double>& v) {
  if (!config_.prefix_caching) return;
  s.given_k.resize(layers()), s.given_v.resize(layers());
  if (s.given_k[l].size() <= p) s.given_k[l].resize(p + 1), s.given_v[l].resize(p + 1);
  s.given_k[l][p] = k, s.given_v[l][p] = v;
}

void hybrid_model::register_filled(const sequence& s, std::size_t from) {
  const std::size_t bs = config_.block_size;
  for (std::size_t g : {full_group, sliding_group}) {
    if (!writes_[g]) continue;
    for (std::size_t j = from / bs; (j + 1) * bs <= s.len; ++j) {
      const std::int64_t b = s.tables[g][j];
      if (b < 0 || cached_.count(b)) continue;
      auto prefix = head(s.tokens, (j + 1) * bs);
      if (!registered_[g].emplace(prefix, b).second) continue;  // the first block keeps a prefix
      cached_[b] = {g, std::move(prefix)};
      auto &k = block_k_[b], &v = block_v_[b];
      k.assign(layers() * bs, {}), v.assign(layers() * bs, {});
      for (std::size_t l = 0; l < config_.layers; ++l)
        if (types_[l] != type::shared && group_of(l) == g)
          for (std::size_t r = 0; r < bs; ++r)
            k[l * bs + r] = s.given_k[l][j * bs + r], v[l * bs + r] = s.given_v[l][j * bs + r];
    }
  }
}

bool hybrid_model::registered_at(std::size_t g, const std::vector<std::int64_t>& tokens, std::size_t m) const {
  const std::size_t bs = config_.block_size;
  for (std::size_t j = 0; j < m; ++j)
    if (needs(g, j, hit_window(m * bs)) && !registered_[g].count(head(tokens, (j + 1) * bs))) return false;
  return true;
}

std::size_t hybrid_model::hit_blocks(std::size_t g, const std::vector<std::int64_t>& tokens, std::size_t most) const {
  std::size_t m = most;
  while (writes_[g] && m > 0 && !registered_at(g, tokens, m)) --m;
  return m;
}

void hybrid_model::take_hit(sequence& s, const std::vector<std::int64_t>& tokens) {
  const std::size_t bs = config_.block_size, most = tokens.size() / bs;
  // The full group's hit, then the longest no longer that the sliding group's window finds too (vLLM's
  // coordinator: a full group's hit bounds the sliding group's search).
  const std::size_t alone[2] = {hit_blocks(full_group, tokens, most), hit_blocks(sliding_group, tokens, most)};
  const std::size_t m = hit_blocks(sliding_group, tokens, alone[full_group]), len = m * bs;
  last_.hit_limited =
      writes_[full_group] && writes_[sliding_group] && m < std::max(alone[full_group], alone[sliding_group]);
  s.len = len, s.tokens = head(tokens, len);
  for (std::size_t g : {full_group, sliding_group}) {
    if (!writes_[g]) continue;
    s.tables[g].assign(m, -1);
    for (std::size_t j = 0; j < m; ++j)
      if (needs(g, j, hit_window(len))) ++refs_.at(s.tables[g][j] = registered_[g].at(head(tokens, (j + 1) * bs)));
  }
  // Each writing layer reads the rows of the blocks it shares, its window's for a sliding one (those of them its
  // blocks hold: with sliding_free=next_step, W - 1 where the window's first row starts a block no longer read).
  for (std::size_t l = 0; l < config_.layers; ++l) {
    if (types_[l] == type::shared) continue;
    const std::size_t g = group_of(l), span = config_.window - config_.keep;
    for (std::size_t p = 0; p < len; ++p) {
      if (g == sliding_group && p >= config_.keep && (p + span < len || s.tables[g][p / bs] < 0)) {
        last_.hit_short = last_.hit_short || p + span >= len;
        continue;
      }
      const std::int64_t b = s.tables[g][p / bs];
      const auto &k = block_k_.at(b)[l * bs + p % bs], &v = block_v_.at(b)[l * bs + p % bs];
      keep_given(s, l, p, k, v), push(s, l, k, v);
    }
  }
}

}  // namespace kvconform
