// Deterministic draws for each input class (std::mt19937_64; the same seed gives the same rows).
#include "properties/generate/input_classes.h"

#include <cmath>
#include <random>

#include "oracle/numeric/element_rounding.h"

namespace kvconform {

row_source::row_source(input_class c, std::size_t d_k, std::size_t d_v, std::uint64_t anchor_seed)
    : class_(c), d_k_(d_k), d_v_(d_v), anchor_seed_(anchor_seed) {
  std::mt19937_64 rng(anchor_seed);
  std::normal_distribution<double> gauss;
  sign_ = (rng() & 1) ? 1.0 : -1.0;
  for (std::size_t j = 0; j < d_k; ++j) anchor_.push_back((rng() & 1) ? 1.0 : -1.0);
  switch (c) {
    case input_class::moderate:
      for (std::size_t j = 0; j < d_k; ++j) q_.push_back(gauss(rng));
      break;
    case input_class::peaked:
      for (std::size_t j = 0; j < d_k; ++j) q_.push_back(8 * gauss(rng));
      break;
    case input_class::all_equal: q_.assign(d_k, 0.0); break;
    default: q_ = anchor_;
  }
}

double row_source::sink_logit(std::int64_t position) const {
  // Below, near and above the scores of the moderate classes: the sink takes from nothing to most of the weight.
  static constexpr double logits[] = {-8, -2, -0.5, 0, 0.75, 2, 4, 12};
  const auto mix =
      static_cast<std::uint64_t>(position) * 0x9e3779b97f4a7c15ull + (sign_ > 0 ? 0x632be59bd9b4e019ull : 0);
  return logits[(mix >> 61) & 7];
}

namespace {
/// SplitMix64: an engine as cheap to seed as to draw from, for the index inputs drawn afresh per position (a
/// mt19937_64 fills 312 words at every seeding, once per appended row).
struct split_mix {
  using result_type = std::uint64_t;
  std::uint64_t state;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return UINT64_MAX; }
  result_type operator()() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};
}  // namespace

std::vector<double> row_source::index_key(std::int64_t position) const {
  if (position % 4 == 3) position -= 2;  // an exact tie with an earlier row's index score
  split_mix rng{anchor_seed_ ^ (static_cast<std::uint64_t>(position) * 0x9e3779b97f4a7c15ull)};
  std::normal_distribution<double> gauss;
  const double magnitude = std::ldexp(1.0, static_cast<int>(rng() % 5) - 2);
  std::vector<double> key;
  for (std::size_t j = 0; j < index_width_; ++j) key.push_back(magnitude * gauss(rng));
  return key;
}

std::vector<double> row_source::index_query(std::int64_t position) const {
  split_mix rng{~anchor_seed_ ^ (static_cast<std::uint64_t>(position) * 0xc2b2ae3d27d4eb4full)};
  std::normal_distribution<double> gauss;
  std::uniform_real_distribution<double> weight(-0.5, 1.5);
  std::vector<double> q;
  for (std::size_t j = 0; j < index_heads_ * index_width_; ++j) q.push_back(gauss(rng));
  for (std::size_t h = 0; h < index_heads_; ++h) q.push_back(weight(rng));
  return q;
}

void row_source::rows(std::int64_t first, std::size_t n, std::uint64_t seed, std::vector<double>& keys,
                      std::vector<double>& values) const {
  const auto [at, fresh] = drawn_.try_emplace({first, n, seed});
  if (fresh) draw(first, n, seed, at->second.keys, at->second.values);
  keys.insert(keys.end(), at->second.keys.begin(), at->second.keys.end());
  values.insert(values.end(), at->second.values.begin(), at->second.values.end());
}

void row_source::draw(std::int64_t first, std::size_t n, std::uint64_t seed, std::vector<double>& keys,
                      std::vector<double>& values) const {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss;
  std::uniform_real_distribution<double> unit;
  const double root_d = std::sqrt(static_cast<double>(d_k_));
  for (std::size_t r = 0; r < n; ++r) {
    const double p = static_cast<double>(first + static_cast<std::int64_t>(r));
    double tau = gauss(rng), noise = 0.1, orthogonal = 0, value_scale = 1, value_shift = 0;
    bool random_key = false;
    switch (class_) {
      case input_class::moderate:
      case input_class::peaked:
      case input_class::all_equal: random_key = true; break;
      case input_class::minus_1000: tau -= 1000; break;
      case input_class::plus_1000: tau += 1000; break;
      case input_class::near_tie_1000: tau = 1000 + std::pow(10.0, -6 * unit(rng)) * tau, noise = 0; break;
      case input_class::huge_1e4: tau = sign_ * 1e4 + 10 * tau; break;
      case input_class::spread_1500: tau = 3000 * unit(rng) - 1500; break;
      case input_class::max_last: tau = 750 * p + tau; break;
      case input_class::max_first: tau = -750 * p + tau; break;
      case input_class::ramp: tau = 0.5 * p - 20; break;
      case input_class::cancellation: orthogonal = 1000, noise = 0; break;
      case input_class::ill_conditioned_key:
        if (unit(rng) < 0.25) orthogonal = 1e4, noise = 0, value_scale = 1e-12;
        break;
      case input_class::value_offset: value_shift = 1000; break;
      case input_class::one_hot: tau = unit(rng) < 0.3 ? 0 : -800, noise = 0; break;
      case input_class::zero_keys: tau = 0, noise = unit(rng) < 0.5 ? 0 : 1; break;
      case input_class::format_edges: break;
    }
    if (class_ == input_class::format_edges) {
      for (std::size_t j = 0; j < d_k_; ++j) keys.push_back(edge_value(rng, 0));
      for (std::size_t c = 0; c < d_v_; ++c) values.push_back(edge_value(rng, 1));
      continue;
    }
    std::vector<double> g(d_k_);
    for (double& x : g) x = gauss(rng);
    if (orthogonal != 0) {  // remove g's component along a (|a|^2 = d), so it adds magnitude, not score
      double dot = 0;
      for (std::size_t j = 0; j < d_k_; ++j) dot += g[j] * anchor_[j];
      for (std::size_t j = 0; j < d_k_; ++j) g[j] -= dot / static_cast<double>(d_k_) * anchor_[j];
    }
    for (std::size_t j = 0; j < d_k_; ++j)
      keys.push_back(random_key ? g[j] : tau / root_d * anchor_[j] + (noise + orthogonal) * g[j]);
    for (std::size_t c = 0; c < d_v_; ++c) values.push_back(value_shift + value_scale * gauss(rng));
  }
}

template <class Rng>
double row_source::edge_value(Rng& rng, int side) const {
  const storage_format& f = formats_[side];
  std::uniform_int_distribution<int> pick(0, 9);
  std::normal_distribution<double> gauss;
  const double sign = (rng() & 1) ? -1.0 : 1.0;
  if (f.groups) {  // outliers that decide a group's range, ranges beyond fp16, tiny values
    switch (pick(rng) % 5) {
      case 0: return -40 * (1 + std::fabs(gauss(rng)));  // a negative extreme: max(x) is not max|x|
      case 1: return sign * 4e4 * (1 + 0.5 * std::fabs(gauss(rng)));
      case 2: return sign * 1e-6 * gauss(rng);
      default: return gauss(rng);
    }
  }
  const element_limits l = limits_of(f.element);
  const double s = f.scaled ? scales_[side] : 1.0;
  const int e = std::uniform_int_distribution<int>(l.emin, std::min(l.emin + 30, 15))(rng);
  const double quantum = std::ldexp(1.0, e - l.precision + 1);
  switch (pick(rng)) {
    case 0:
    case 1:  // a tie: halfway between two neighbours of the format
      return sign * s * (std::ldexp(1.0, e) + quantum * (2.0 * static_cast<double>(rng() % 8) + 1) / 2);
    case 2: return sign * s * l.max;                                               // the largest finite value
    case 3:  // beyond it, up to 1e5 or half again the largest value: every format with one overflows here
      return sign * s * std::min(l.max * (1 + std::fabs(gauss(rng))), std::max(1e5, 1.5 * l.max));
    case 4: return sign * s * std::ldexp(static_cast<double>(rng() % 16 + 1), l.emin - l.precision);  // subnormals
    case 5: return sign * 0.0;
    default: return gauss(rng);
  }
}

}  // namespace kvconform
