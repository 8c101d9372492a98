// The recurrence oracle against an MPFR referee, and its bound against correct sequential and chunked
// implementations on every input class; a float state declared as double, or a bf16-stored state declared as kept,
// fails it (docs/numerics.md §3.9).
#include <gtest/gtest.h>

#include <boost/multiprecision/mpfr.hpp>
#include <cmath>
#include <iostream>
#include <random>

#include "impls/common/recurrent_head.h"
#include "oracle/numeric/numeric_profile.h"
#include "oracle/numeric/recurrence.h"

namespace kv = kvconform;
using referee =
    boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<50>, boost::multiprecision::et_off>;

namespace {
/// Input classes (docs/numerics.md §3.9): random gates and decays; decays within 1e-6 of 1 (half exactly 1), where
/// the state only accumulates; strong decays down to exp underflow; convolution taps that cancel to 1e-9 of their
/// magnitude; values offset by 1e3 written with alternating keys, so the state cancels; scores of 1e4; and the delta
/// rule's overwrite, one key written again and again at full strength; and weak writes after strong decays, where a
/// chunked state's error is its earlier pseudo-values' decays from cumulative sums, not what the token writes.
enum class input { random, slow, fast, cancel, offset, large, overwrite, weak };
constexpr input inputs[] = {input::random, input::slow,  input::fast,      input::cancel,
                            input::offset, input::large, input::overwrite, input::weak};
const char* name(input c) {
  static const char* const n[] = {"random", "slow", "fast", "cancel", "offset", "large", "overwrite", "weak"};
  return n[static_cast<int>(c)];
}

struct shape {
  std::size_t d_k, d_v, T, width;
};

kv::recurrence_problem draw(kv::recurrence_form form, input c, shape s, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss;
  std::uniform_real_distribution<double> unit(0, 1);
  kv::recurrence_problem p{form, s.d_k, s.d_v, s.width, {}, {}, {}, {}};
  const std::size_t ch = p.channels();
  for (std::size_t i = 0; i < s.width * ch; ++i) p.conv.push_back(gauss(rng) / std::sqrt(double(s.width)));
  if (c == input::cancel && s.width > 1)
    for (std::size_t ch_i = 0; ch_i < ch; ++ch_i) p.conv[ch + ch_i] = -p.conv[ch_i] * (1 + 1e-9 * gauss(rng));
  std::vector<double> key(s.d_k);
  for (double& x : key) x = gauss(rng);
  for (std::size_t t = 0; t < s.T; ++t) {
    const double scale = c == input::large ? 1e2 : 1;  // a score q.k of about 1e4
    for (std::size_t j = 0; j < ch; ++j) {
      double x = scale * gauss(rng);
      const bool is_k = j >= s.d_k && j < 2 * s.d_k, is_v = j >= 2 * s.d_k;
      if (c == input::cancel) x = 1 + 1e-3 * x;  // slowly varying, so that cancelling taps cancel
      if (c == input::offset && is_v) x += 1e3;
      if (c == input::offset && is_k) x = (t % 2 ? -1.0 : 1.0) * (1 + 1e-3 * x);
      if (c == input::overwrite && is_k) x = key[j - s.d_k];
      p.x.push_back(x);
    }
    double g = -unit(rng);
    if (c == input::slow) g = t % 2 ? 0.0 : -1e-6 * unit(rng);
    if (c == input::fast) g = t % 7 == 3 ? -800.0 : -5 - 55 * unit(rng);
    if (c == input::weak) g = t % 5 == 0 ? -795.0 : -1 - 30 * unit(rng);
    p.g.push_back(g);
    const double beta = c == input::overwrite ? 1.0 : c == input::weak && t % 2 ? 1e-2 * unit(rng) : unit(rng);
    if (form == kv::recurrence_form::delta) p.beta.push_back(beta);
  }
  EXPECT_EQ(p.invalid(), "");
  return p;
}

/// A problem's inputs rounded to float, as a float implementation receives them.
kv::recurrence_problem to_float(kv::recurrence_problem p) {
  for (auto* v : {&p.conv, &p.x, &p.g, &p.beta})
    for (double& x : *v) x = static_cast<float>(x);
  return p;
}

struct result {
  std::vector<double> outputs, state;
};

/// The recurrence token by token in T, as a straightforward cache computes it; `stored` rounds the state after
/// every token (a state kept in a narrower format than it is computed in).
template <class T>
std::vector<T> run_sequential(const kv::recurrence_problem& p, std::vector<T>& S, double (*stored)(double)) {
  kv::recurrent_head<T> head(p.form, p.d_k, p.d_v, p.width, p.conv, stored);
  std::vector<T> out(p.steps() * p.d_v);
  head.step(p.x.data(), p.g.data(), p.beta.data(), p.steps(), out.data());
  S = head.state();
  return out;
}

template <class T>
result sequential(const kv::recurrence_problem& p, double (*stored)(double) = nullptr) {
  std::vector<T> S;
  const std::vector<T> out = run_sequential<T>(p, S, stored);
  return {std::vector<double>(out.begin(), out.end()), std::vector<double>(S.begin(), S.end())};
}

/// The chunked algorithms engines use for prefill, in T, chunks of C tokens.
template <class T = double>
result chunked(const kv::recurrence_problem& p, std::size_t C) {
  kv::recurrent_head<T> head(p.form, p.d_k, p.d_v, p.width, p.conv);
  std::vector<T> out(p.steps() * p.d_v);
  head.chunked(p.x.data(), p.g.data(), p.beta.data(), p.steps(), C, out.data());
  return {std::vector<double>(out.begin(), out.end()), std::vector<double>(head.state().begin(), head.state().end())};
}

/// The largest |implementation - oracle| / bound over every output and the last state, the difference taken in
/// the oracle's precision (docs/numerics.md §1.4).
double worst_ratio(const kv::recurrence_run& r, const result& got) {
  double worst = 0;
  auto over = [&](const std::vector<kv::dd::ddouble>& want, const std::vector<double>& have,
                  const std::vector<double>& bound) {
    for (std::size_t i = 0; i < want.size(); ++i) {
      const double err = std::fabs(kv::dd::add(want[i], -have[i]).hi);
      worst = std::max(worst, err == 0 ? 0.0 : err / bound[i]);  // a zero bound allows only an exact value
    }
  };
  over(r.outputs, got.outputs, r.output_bound);
  over(r.state, got.state, r.state_bound);
  return worst;
}

kv::recurrence_precision precision_of(kv::precision p) {
  return {.u = kv::unit_roundoff(p), .mu = kv::smallest_normal(p)};
}
double to_bf16(double x) { return kv::round_to(kv::precision::bf16, x); }

constexpr shape shapes[] = {{1, 1, 64, 1}, {4, 3, 200, 4}, {16, 16, 300, 2}, {64, 64, 48, 4}, {4, 4, 2048, 4}};
constexpr kv::recurrence_form forms[] = {kv::recurrence_form::decay, kv::recurrence_form::delta};

TEST(RecurrenceOracle, AgreesWithMpfrReferee) {
  // The referee is the sequential recurrence in about 168 bits. The oracle's error must be a negligible part of the
  // tightest bound it ever judges (double, F = 1): 1e-9 of it. Judged against the referee instead of the oracle,
  // correct double code (token by token, and chunked) stays within the bound (F = 2) as well.
  double worst = 0, worst_code = 0;
  for (auto form : forms)
    for (input c : inputs)
      for (shape s : {shape{1, 1, 40, 1}, shape{4, 3, 120, 4}, shape{16, 8, 60, 2}}) {
        SCOPED_TRACE(std::string(kv::to_string(form)) + " " + name(c) + " d_k=" + std::to_string(s.d_k));
        const auto p = draw(form, c, s, 11);
        auto prec = precision_of(kv::precision::f64);
        prec.F = 1;
        const auto r = kv::run_recurrence(p, prec);
        std::vector<referee> S;
        const std::vector<referee> out = run_sequential<referee>(p, S, nullptr);
        const result seq = sequential<double>(p), chunks = chunked(p, 16);
        for (std::size_t i = 0; i < out.size(); ++i) {
          const double err =
              std::fabs(static_cast<double>(out[i] - referee(r.outputs[i].hi) - referee(r.outputs[i].lo)));
          worst = std::max(worst, err / r.output_bound[i]);
          ASSERT_LE(err, 1e-9 * r.output_bound[i]) << "output " << i;
          for (const result* code : {&seq, &chunks}) {
            const double e = std::fabs(static_cast<double>(out[i] - referee(code->outputs[i])));
            worst_code = std::max(worst_code, e / (2 * r.output_bound[i]));
            EXPECT_LE(e, 2 * r.output_bound[i]) << "output " << i;
          }
        }
      }
  std::cout << "[ recurrence oracle ] worst error / f64 bound against MPFR: " << worst
            << "; double code against MPFR: " << worst_code << " of its bound\n";
}

TEST(RecurrenceBound, CorrectImplementationsStayWithin) {
  double worst_seq = 0, worst_chunk = 0, worst_float = 0, worst_bf16 = 0;
  for (auto form : forms)
    for (input c : inputs)
      for (shape s : shapes)
        for (unsigned seed : {1u, 2u}) {
          SCOPED_TRACE(std::string(kv::to_string(form)) + " " + name(c) + " d_k=" + std::to_string(s.d_k) +
                       " T=" + std::to_string(s.T) + " seed=" + std::to_string(seed));
          const auto p = draw(form, c, s, seed);
          const auto f64 = kv::run_recurrence(p, precision_of(kv::precision::f64));
          const double seq = worst_ratio(f64, sequential<double>(p));
          EXPECT_LE(seq, 1);
          worst_seq = std::max(worst_seq, seq);
          for (std::size_t C : {std::size_t{4}, std::size_t{16}, std::size_t{64}}) {
            const double ch = worst_ratio(f64, chunked(p, C));
            EXPECT_LE(ch, 1) << "chunks of " << C;
            worst_chunk = std::max(worst_chunk, ch);
          }
          const auto pf = to_float(p);
          const auto f32 = kv::run_recurrence(pf, precision_of(kv::precision::f32));
          for (const double fl : {worst_ratio(f32, sequential<float>(pf)), worst_ratio(f32, chunked<float>(pf, 4))}) {
            EXPECT_LE(fl, 1) << "float";
            worst_float = std::max(worst_float, fl);
          }
          auto bf16 = precision_of(kv::precision::f64);
          bf16.u_state = kv::unit_roundoff(kv::precision::bf16);
          const double b = worst_ratio(kv::run_recurrence(p, bf16), sequential<double>(p, to_bf16));
          EXPECT_LE(b, 1) << "bf16 state";
          worst_bf16 = std::max(worst_bf16, b);
        }
  std::cout << "[ recurrence bound ] worst err/bound: sequential f64 " << worst_seq << ", chunked f64 " << worst_chunk
            << ", f32 (token by token and chunks of 4) " << worst_float << ", f64 with a bf16 state " << worst_bf16
            << "\n";
}

// Found by the gate (gate.recurrent, recurrent_fork_isolated): a weak write after a decay of e^-795 at the chunk's
// start. Before the chunk term in the state's bound, the chunked state was 1.24 times its bound.
TEST(RecurrenceBound, ChunkedStateAfterAStrongDecayAndAWeakWrite) {
  kv::recurrence_problem p{kv::recurrence_form::delta, 4, 4, 1, kv::kind_convolution(1, 12), {}, {}, {}};
  p.x = {-1.4161920354980284, -0.6915467699581176,  -2.189369066643908,  1.387812096924747,    0.45176143901090043,
         -2.2281048043014904, -1.4485313337019874,  -1.9257395789966434, -0.18403820765397733, 2.0976315642373935,
         0.1794239350844451,  -0.22879066174949977, 0.09718938378944501, -0.718529255788313,   0.1946374412082513,
         2.718325657354223,   1.394580701313267,    0.05269165212396568, 0.4822438824403704,   0.37716118688933004,
         0.20043164268901686, 0.8510953271456061,   0.9550593643628995,  1.65525522724259,     -0.9526279323839614,
         -0.6467173884466584, 1.3144767356232312,   0.2930113049996053,  -0.47042149524431764, -0.5667402208406436,
         -0.5581338891497979, 1.1269198948217518,   -2.1538204769013958, 0.2889012080514882,   -0.0391645380890523,
         -1.922803239302085};
  p.g = {-795.3771892005818, -29.232204189419758, -7.910543033791025};
  p.beta = {0.640063445005275, 0.5970851431125576, 0.006126700110758713};
  ASSERT_EQ(p.invalid(), "");
  EXPECT_LE(worst_ratio(kv::run_recurrence(p, precision_of(kv::precision::f64)), chunked(p, 4)), 1);
  const auto pf = to_float(p);
  EXPECT_LE(worst_ratio(kv::run_recurrence(pf, precision_of(kv::precision::f32)), chunked<float>(pf, 4)), 1);
}

TEST(RecurrenceBound, NarrowerStateThanDeclaredFails) {
  // A float state (and float arithmetic) where double is declared, and a state stored in bf16 where the profile
  // says it is kept in double, both fail on every class; reported is the smallest ratio seen.
  double least_float = INFINITY, least_bf16 = INFINITY;
  for (auto form : forms)
    for (input c : inputs)
      for (shape s : shapes) {
        SCOPED_TRACE(std::string(kv::to_string(form)) + " " + name(c) + " d_k=" + std::to_string(s.d_k));
        const auto pf = to_float(draw(form, c, s, 3));
        const auto declared = kv::run_recurrence(pf, precision_of(kv::precision::f64));
        const double fl = worst_ratio(declared, sequential<float>(pf));
        EXPECT_GT(fl, 1);
        least_float = std::min(least_float, fl);
        const double b = worst_ratio(declared, sequential<double>(pf, to_bf16));
        EXPECT_GT(b, 1);
        least_bf16 = std::min(least_bf16, b);
      }
  std::cout << "[ recurrence bound ] least err/bound of a float state declared f64: " << least_float
            << ", of a bf16-stored state declared kept: " << least_bf16 << "\n";
}

TEST(RecurrenceOracle, KernelsGiveTheSameBits) {
  if (!kv::dd_fma_kernels_available()) GTEST_SKIP() << "this CPU has no AVX2 and FMA: only the generic kernels run";
  // d_v = 11 leaves three columns past the AVX2 kernels' last four to their scalar tail.
  for (auto form : forms)
    for (shape s : {shape{16, 8, 100, 4}, shape{5, 11, 60, 3}}) {
      const auto p = draw(form, input::random, s, 5);
      const auto a = kv::run_recurrence(p, {}, kv::dd_kernels::generic),
                 b = kv::run_recurrence(p, {}, kv::dd_kernels::fma);
      for (std::size_t i = 0; i < a.outputs.size(); ++i) {
        ASSERT_EQ(a.outputs[i].hi, b.outputs[i].hi) << i;
        ASSERT_EQ(a.outputs[i].lo, b.outputs[i].lo) << i;
      }
      for (std::size_t i = 0; i < a.state.size(); ++i) {
        ASSERT_EQ(a.state[i].hi, b.state[i].hi) << i;
        ASSERT_EQ(a.state[i].lo, b.state[i].lo) << i;
      }
      EXPECT_EQ(a.output_bound, b.output_bound);
      EXPECT_EQ(a.state_bound, b.state_bound);
    }
}

TEST(RecurrenceTracker, TokensSplitOverCallsAndCopiesGiveTheSameBitsAndBounds) {
  // What a model does: extend a sequence op by op, and copy it for a fork or a checkpoint.
  for (auto form : forms) {
    const auto p = draw(form, input::offset, shape{4, 3, 50, 4}, 9);
    const auto whole = kv::run_recurrence(p, {});
    kv::recurrence_tracker tracker(p.form, p.d_k, p.d_v, p.width, p.conv, {});
    std::vector<kv::dd::ddouble> out(p.steps() * p.d_v);
    std::vector<double> bound(out.size());
    std::size_t t = 0;
    auto advance = [&](kv::recurrence_tracker& tr, std::size_t n) {
      tr.advance(&p.x[t * p.channels()], &p.g[t], p.beta.empty() ? nullptr : &p.beta[t], n, &out[t * p.d_v],
                 &bound[t * p.d_v]);
      t += n;
    };
    advance(tracker, 1), advance(tracker, 2), advance(tracker, 17);
    kv::recurrence_tracker copy = tracker;
    advance(copy, 30);
    EXPECT_EQ(copy.tokens(), p.steps());
    EXPECT_EQ(tracker.tokens(), 20u);  // the original stays where it was
    for (std::size_t i = 0; i < out.size(); ++i) {
      ASSERT_EQ(out[i].hi, whole.outputs[i].hi) << kv::to_string(form) << " output " << i;
      ASSERT_EQ(out[i].lo, whole.outputs[i].lo) << kv::to_string(form) << " output " << i;
    }
    EXPECT_EQ(bound, whole.output_bound) << kv::to_string(form);
    EXPECT_EQ(copy.state_bound(), whole.state_bound) << kv::to_string(form);
  }
}

TEST(RecurrentHead, TokensSplitOverCallsGiveTheSameBits) {
  // The convolution window carries the last width - 1 rows from one call to the next.
  for (auto form : forms) {
    const auto p = draw(form, input::random, shape{4, 3, 50, 4}, 9);
    const result whole = sequential<double>(p);
    kv::recurrent_head<double> head(p.form, p.d_k, p.d_v, p.width, p.conv);
    std::vector<double> out(p.steps() * p.d_v);
    std::size_t t = 0;
    for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{17}, std::size_t{30}}) {
      head.step(&p.x[t * p.channels()], &p.g[t], p.beta.empty() ? nullptr : &p.beta[t], n, &out[t * p.d_v]);
      t += n;
    }
    EXPECT_EQ(out, whole.outputs) << kv::to_string(form);
    EXPECT_EQ(head.state(), whole.state) << kv::to_string(form);
  }
}

TEST(RecurrenceProblem, MalformedProblemsAreNamed) {
  kv::recurrence_problem p{kv::recurrence_form::delta, 2, 1, 1, {1, 1, 1, 1, 1}, {1, 0, 1, 0, 1}, {-0.5}, {0.5}};
  EXPECT_EQ(p.invalid(), "");
  auto bad = p;
  bad.g[0] = 0.1;
  EXPECT_EQ(bad.invalid(), "log decays must be <= 0");
  bad = p, bad.g[0] = NAN;
  EXPECT_EQ(bad.invalid(), "log decays must be <= 0");
  bad = p, bad.beta[0] = 1.5;
  EXPECT_EQ(bad.invalid(), "write strengths must lie in [0, 1]");
  bad = p, bad.x.pop_back();
  EXPECT_NE(bad.invalid().find("x must hold"), std::string::npos);
  bad = p, bad.conv[0] = INFINITY;
  EXPECT_EQ(bad.invalid(), "taps and inputs must be finite");
  EXPECT_THROW(kv::recurrence_tracker(p.form, 2, 1, 0, {}, {}), std::invalid_argument);
  EXPECT_THROW(kv::recurrence_tracker(p.form, 2, 1, 2, p.conv, {}), std::invalid_argument);  // taps for width 1
  EXPECT_THROW(kv::recurrent_head<double>(p.form, 2, 1, 2, p.conv), kv::shape_error);
}
}  // namespace
