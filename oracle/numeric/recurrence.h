// The recurrent-state oracle: a state-space or gated delta-rule recurrence in double-double, with its derived bound
// carried in the same pass (docs/numerics.md §3.9).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "oracle/numeric/dd_oracle.h"
#include "oracle/numeric/double_double.h"
#include "oracle/numeric/recurrence_terms.h"

namespace kvconform {

/// How the state is updated (docs/numerics.md §3.9): a decayed sum (Mamba-2's state-space duality, linear attention
/// with a gate) or the gated delta rule (Gated DeltaNet), which first removes what the state holds along k.
enum class recurrence_form : unsigned char { decay, delta };
const char* to_string(recurrence_form f);

/// Empty when a head of these sizes with `taps` convolution taps is well formed, else what is wrong with it.
std::string recurrence_shape_invalid(std::size_t d_k, std::size_t d_v, std::size_t width, std::size_t taps);

/// One head of a recurrent layer over T tokens. Each token's raw x_t = [q | k | v] (2 d_k + d_v channels) passes a
/// causal convolution of width w per channel, x'_t = sum_i conv_i * x_{t-i} over the taps i < w (tokens before the
/// first are zeros); for the delta rule q and k are then divided by their 2-norms. With S_0 = 0:
///   decay  S_t = e^{g_t} S_{t-1} + k_t v_t^T
///   delta  S_t = e^{g_t} (I - b_t k_t k_t^T) S_{t-1} + b_t k_t v_t^T
///   both   o_t = S_t^T q_t
struct recurrence_problem {
  recurrence_form form = recurrence_form::decay;
  std::size_t d_k = 0, d_v = 0, width = 1;
  std::vector<double> conv;  ///< width x channels: conv[i * channels + c] multiplies channel c of x_{t-i}
  std::vector<double> x;     ///< T x channels: each token's raw q, k and v
  std::vector<double> g;     ///< T log decays, each <= 0
  std::vector<double> beta;  ///< T write strengths in [0, 1] (the delta rule only)

  std::size_t channels() const { return 2 * d_k + d_v; }
  std::size_t steps() const { return g.size(); }
  /// Empty when the problem is well formed, else what is wrong with it.
  std::string invalid() const;
};

/// The oracle's outputs after every token and its state after the last, in double-double, with the bound on
/// |o^_tc - o_tc| for every output and on |S^_jc - S_jc| for every entry of the last state. A bound is +inf where
/// the problem leaves the domain the derivation covers (docs/numerics.md §3.9).
struct recurrence_run {
  std::vector<dd::ddouble> outputs;  ///< T x d_v
  std::vector<dd::ddouble> state;    ///< d_k x d_v
  std::vector<double> output_bound;  ///< T x d_v
  std::vector<double> state_bound;   ///< d_k x d_v
};

/// The oracle and its bound advanced a few tokens at a time, for a model that extends a sequence op by op: after
/// the same tokens it holds what run_recurrence gives. A copy continues on its own (a fork, a checkpoint).
class recurrence_tracker {
 public:
  recurrence_tracker(recurrence_form form, std::size_t d_k, std::size_t d_v, std::size_t width, std::vector<double> conv,
                     recurrence_precision prec, dd_kernels kernels = dd_kernels::automatic);
  /// n more tokens: raw rows x (n x (2 d_k + d_v)), log decays g and, for the delta rule, write strengths beta.
  /// Each token's output and its bound go to out and out_bound (n x d_v each).
  void advance(const double* x, const double* g, const double* beta, std::size_t n, dd::ddouble* out,
               double* out_bound);
  std::size_t tokens() const { return t_; }
  /// The last width - 1 raw rows, oldest first (zeros before the first token).
  const std::vector<double>& window() const { return window_; }
  const std::vector<dd::ddouble>& state() const { return S_; }
  /// The bound on every entry of the state after the tokens so far.
  std::vector<double> state_bound() const;

 private:
  recurrence_form form_;
  std::size_t d_k_, d_v_, width_;
  std::vector<double> conv_, window_;  // window_: the last width - 1 raw rows, oldest first (zeros before the first)
  recurrence_precision prec_;
  dd_kernels kernels_;
  std::size_t t_ = 0;
  std::vector<dd::ddouble> S_;
  recurrence_terms::decay_bound decay_;
  recurrence_terms::delta_bound delta_;
};

/// The convolution every recurrent cache of the kind applies (docs/kinds/recurrent.md): tap 0 (the token itself) is 1,
/// tap i > 0 of channel c is -1/2 when i + c is odd, else 1/4 (exact in every format, cancelling and reinforcing).
std::vector<double> kind_convolution(std::size_t width, std::size_t channels);

/// Runs the recurrence of `p` (which must be valid) in double-double and its bound under `prec`. One pass, because
/// the bound reads the oracle's state at every token. `kernels` as for attention_oracle_dd: the same bits either way.
recurrence_run run_recurrence(const recurrence_problem& p, const recurrence_precision& prec,
                              dd_kernels kernels = dd_kernels::automatic);

}  // namespace kvconform
