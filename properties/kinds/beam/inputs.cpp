// Beam-shaped inputs: per (row, head) draws from the input class; masks and reorders as engines make them.
#include "properties/kinds/beam/inputs.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>

#include "properties/executor/coverage.h"

namespace kvconform {

void beam_block(const row_source& src, std::size_t batch, std::size_t heads, std::int64_t first, std::size_t n,
                std::uint64_t seed, tensor& k, tensor& v) {
  k.data.clear(), v.data.clear();
  for (std::size_t bh = 0; bh < batch * heads; ++bh)
    src.rows(first, n, seed + bh * 0x9e3779b97f4a7c15ull, k.data, v.data);
  k.shape = v.shape = {batch, heads, n, src.d_k()};
}

tensor beam_query(const row_source& src, std::size_t batch, std::size_t q_heads) {
  tensor q{{batch, q_heads, src.d_k()}, {}};
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t h = 0; h < q_heads; ++h)
      for (double x : src.query()) q.data.push_back(h % 2 ? -x : x);
  return q;
}

tensor beam_queries(const row_source& src, std::size_t batch, std::size_t q_heads, std::size_t m) {
  tensor q{{batch, q_heads, m, src.d_k()}, {}};
  for (std::size_t bh = 0; bh < batch * q_heads; ++bh)
    for (std::size_t i = 0; i < m; ++i)
      for (double x : src.query()) q.data.push_back((bh % q_heads + i) % 2 ? -x : x);
  return q;
}

tensor left_padding_mask(const std::vector<std::size_t>& pads, std::size_t length) {
  tensor m{{pads.size(), length}, {}};
  for (std::size_t pad : pads)
    for (std::size_t t = 0; t < length; ++t) m.data.push_back(t < pad ? 0.0 : 1.0);
  return m;
}

namespace {
/// SplitMix64: the arbitrary shape's bits from its parameters.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// One row's live positions (1 attends, 0 masked).
std::vector<double> mask_of(const mask_row& r, std::size_t len) {
  std::vector<double> live(len, 0.0);
  const std::size_t pad = std::min(r.a, len), real = len - pad;
  auto set = [&](std::size_t from, std::size_t to, double x) { std::fill(live.begin() + from, live.begin() + to, x); };
  switch (r.kind) {
    case mask_row::left_padding: set(pad, len, 1); break;
    case mask_row::window:
      if (real > 0) {
        const std::size_t w = 1 + r.b % real, sinks = std::min<std::size_t>(r.c % 3, real - w);
        set(pad, pad + sinks, 1), set(len - w, len, 1);
      }
      break;
    case mask_row::dropped_draft:
      set(pad, len, 1);
      if (real > 0) {
        const std::size_t from = pad + r.b % real;
        set(from, from + 1 + r.c % (len - from), 0);
      }
      break;
    case mask_row::single_key:
      if (len > 0) live[r.a % len] = 1;
      break;
    case mask_row::fully_masked: break;
    default:
      for (std::size_t i = 0; i < len; ++i) live[i] = mix(mix(r.a * 31 + r.b) ^ (r.c * 17 + i)) & 1;
  }
  return live;
}
}  // namespace

tensor engine_mask(const std::vector<mask_row>& rows, std::size_t length) {
  const bool no_holes = generator_disabled("beam-mask-holes");
  tensor m{{rows.size(), length}, {}};
  for (mask_row r : rows) {
    if (no_holes && (r.kind == mask_row::window || r.kind == mask_row::dropped_draft || r.kind == mask_row::arbitrary))
      r.kind = mask_row::left_padding;
    const std::vector<double> live = mask_of(r, length);
    m.data.insert(m.data.end(), live.begin(), live.end());
  }
  return m;
}

mask_shapes classify_mask(const tensor& mask) {
  mask_shapes s;
  if (mask.shape.size() != 2) return s;
  const std::size_t len = mask.shape[1];
  for (std::size_t b = 0; b < mask.shape[0]; ++b) {
    const double* row = mask.data.data() + b * len;
    std::size_t live = 0, first = len, last = 0;
    for (std::size_t i = 0; i < len; ++i)
      if (row[i] != 0) ++live, first = std::min(first, i), last = i;
    s.fully_masked |= live == 0;
    s.single_key |= live == 1 && len >= 2;
    if (live == 0) continue;
    s.hole |= last - first + 1 > live;
    s.left_padding |= first > 0 && last == len - 1 && last - first + 1 == live;
    s.newest_masked |= last + 1 < len;
  }
  return s;
}

reorder_shapes classify_reorder(const std::vector<std::int64_t>& index) {
  reorder_shapes s;
  const std::size_t n = index.size();
  std::vector<std::size_t> uses(n, 0);
  bool moved = false, fixed = false;
  for (std::size_t b = 0; b < n; ++b) {
    const auto to = static_cast<std::size_t>(index[b]);
    if (to >= n) return {};  // refused: no shape
    ++uses[to], moved |= to != b, fixed |= to == b;
  }
  s.identity = !moved, s.fixed_point = moved && fixed;
  s.repeat = std::any_of(uses.begin(), uses.end(), [](std::size_t u) { return u > 1; });
  for (std::size_t b = 0; b < n; ++b) {  // the cycle through b, if b is on one and is its smallest row
    std::size_t at = b, steps = 0;
    do at = static_cast<std::size_t>(index[at]), ++steps;
    while (at != b && at > b && steps <= n);
    if (at != b || steps == 1) continue;
    s.two_cycle |= steps == 2, s.three_cycle |= steps == 3, s.long_cycle |= steps >= 4;
  }
  return s;
}

namespace {
/// Rows on a cycle of `index`, each with its cycle's smallest row as its label (others: npos).
std::vector<std::size_t> cycle_labels(const std::vector<std::int64_t>& index) {
  const std::size_t n = index.size();
  std::vector<std::size_t> label(n, SIZE_MAX);
  for (std::size_t b = 0; b < n; ++b) {
    std::size_t at = b, steps = 0;
    do at = static_cast<std::size_t>(index[at]), ++steps;
    while (at != b && steps <= n);
    if (at != b) continue;
    std::size_t low = b;
    for (at = static_cast<std::size_t>(index[b]); at != b; at = static_cast<std::size_t>(index[at]))
      low = std::min(low, at);
    label[b] = low;
  }
  return label;
}

/// Row b continues the beam of a row on another cycle (so that beam repeats and b's own drops);
/// with no other cycle, b keeps its own row, which its predecessor on its cycle also takes.
void continue_other_beam(std::vector<std::int64_t>& index, std::size_t b, std::uint64_t pick) {
  const std::vector<std::size_t> label = cycle_labels(index);
  std::vector<std::size_t> others;
  for (std::size_t x = 0; x < index.size(); ++x)
    if (label[x] != SIZE_MAX && (label[b] == SIZE_MAX || label[x] != label[b])) others.push_back(x);
  index[b] = static_cast<std::int64_t>(others.empty() ? b : others[pick % others.size()]);
}
}  // namespace

std::vector<std::uint64_t> reorder_choices(std::size_t batch, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> choices(5 * batch + 4);  // the most draw_reorder reads
  for (std::uint64_t& c : choices) c = rng() >> 32;
  return choices;
}

std::vector<std::int64_t> draw_reorder(std::size_t batch, const std::vector<std::uint64_t>& choices) {
  std::size_t read = 0;
  auto next = [&] { return read < choices.size() ? choices[read++] : 0; };
  std::vector<std::size_t> order(batch);
  std::iota(order.begin(), order.end(), 0);
  for (std::size_t i = batch; i-- > 1;) std::swap(order[i], order[next() % (i + 1)]);  // Fisher-Yates
  const std::uint64_t three = generator_disabled("beam-reorder-3-cycle") ? 0 : 2;
  std::vector<std::int64_t> index(batch);
  for (std::size_t at = 0; at < batch;) {  // cycles of 1, 2, 3 and 4 or more rows, by weight 2 : 2 : 2 : 1
    const std::size_t left = batch - at;
    const std::uint64_t w2 = left >= 2 ? 2 : 0, w3 = left >= 3 ? three : 0, w4 = left >= 4 ? 1 : 0;
    const std::uint64_t r = next() % (2 + w2 + w3 + w4);
    const std::size_t len = r < 2 ? 1 : r < 2 + w2 ? 2 : r < 2 + w2 + w3 ? 3 : 4 + next() % (left - 3);
    for (std::size_t i = 0; i < len; ++i) index[order[at + i]] = static_cast<std::int64_t>(order[at + (i + 1) % len]);
    at += len;
  }
  if (batch > 1 && next() % 3 == 0) {  // beams that continue others: one usually, up to all but one
    const std::size_t repeats = next() % 2 ? 1 : 1 + next() % (batch - 1);
    for (std::size_t i = 0; i < repeats; ++i) {
      const std::size_t b = next() % batch;
      continue_other_beam(index, b, next());
    }
  }
  return index;
}

}  // namespace kvconform
