// The recurrent reference cache: per sequence one recurrent head (state and convolution window), rollback of the last
// append, and checkpoints of the state at block boundaries found again by the prefix's tokens
// (docs/kinds/recurrent.md).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <kvconform/array_view.h>
#include <kvconform/errors.h>
#include "impls/common/recurrent_head.h"

namespace kvconform {

/// The reference's choices: its arithmetic, steps per chunk of a multi-step append (0: token by token, as a decode
/// kernel), a rounding of the state after every step (a state kept narrower than it is computed in; token by token
/// only) and its policies (docs/kinds/recurrent.md).
struct recurrent_rules {
  using scalar = double;
  static constexpr std::size_t chunk = 4;
  static constexpr double (*store)(double) = nullptr;
  static constexpr bool all_but_last = false;  ///< hit_limit=all_but_last
  static constexpr bool append_end = false;    ///< checkpoint_at=append_end
};

template <class Rules = recurrent_rules>
class basic_recurrent {
 public:
  using sequence_id = std::size_t;
  using T = typename Rules::scalar;
  using head = recurrent_head<T>;

  basic_recurrent(std::size_t slots, std::size_t block_size, std::size_t d_k, std::size_t d_v, std::size_t conv_width,
                  bool delta)
      : slots_(slots),
        block_(block_size),
        dk_(d_k),
        dv_(d_v),
        w_(conv_width),
        form_(delta ? recurrence_form::delta : recurrence_form::decay) {
    if (slots == 0 || block_size == 0) throw shape_error("recurrent: slots and block_size must be at least 1");
    (void)empty_head();  // throws shape_error for a malformed head
  }

  /// A new sequence holding the newest checkpoint of the longest stored prefix of `tokens`.
  virtual sequence_id create(std::span<const std::int64_t> tokens) {
    sequence s{empty_head(), empty_head()};
    const std::size_t limit = tokens.size() - (Rules::all_but_last && !tokens.empty() ? 1 : 0);
    for (std::size_t b = limit / block_ * block_; b > 0; b -= block_) {
      auto it = store_.find(std::vector<std::int64_t>(tokens.begin(), tokens.begin() + b));
      if (it == store_.end()) continue;
      s.now = s.committed = it->second.state;
      s.tokens = it->first;
      it->second.used = ++clock_;
      hit_tokens_ += b;
      break;
    }
    seqs_.push_back(std::move(s));
    return seqs_.size() - 1;
  }
  virtual ~basic_recurrent() = default;
  basic_recurrent(const basic_recurrent&) = default;
  basic_recurrent& operator=(const basic_recurrent&) = default;

  virtual sequence_id fork(sequence_id s) {
    seqs_.push_back(live(s));
    return seqs_.size() - 1;
  }
  void release(sequence_id s) {
    commit(live(s));
    seqs_[s].reset();
  }

  /// Appends n steps: x (n, 2 d_k + d_v) or one step 1-D, g and beta n values each (beta empty for the decay form),
  /// tokens n. Returns each step's output, n x d_v.
  std::vector<double> append(sequence_id id, array_view x, array_view g, array_view beta,
                             std::span<const std::int64_t> tokens) {
    const std::size_t ch = 2 * dk_ + dv_;
    const steps_of st(x);
    if (!st.ok || st.width != ch) throw shape_error("recurrent append: x must be (n, 2 d_k + d_v)");
    const std::size_t n = st.steps;
    const bool beta_empty = beta.rank == 0 || (beta.rank == 1 && beta.dims[0] == 0);
    if (g.rank != 1 || g.dims[0] != n || tokens.size() != n ||
        (form_ == recurrence_form::delta ? beta.rank != 1 || beta.dims[0] != n : !beta_empty))
      throw shape_error("recurrent append: g, beta and tokens must have one entry per step");
    for (std::size_t i = 0; i < n; ++i)
      if (!std::isfinite(g.data[i]) || g.data[i] > 0 || (!beta_empty && !(beta.data[i] >= 0 && beta.data[i] <= 1)))
        throw shape_error("recurrent append: g must be finite and at most 0, beta within [0, 1]");
    for (std::size_t i = 0; i < n * ch; ++i)
      if (!std::isfinite(x.data[i])) throw shape_error("recurrent append: x must be finite");
    sequence& s = live(id);
    if (n == 0) return {};
    commit(s);
    s.x.assign(x.data, x.data + n * ch), s.g.assign(g.data, g.data + n);
    s.beta = beta_empty ? std::vector<double>{} : std::vector<double>(beta.data, beta.data + n);
    s.tokens.insert(s.tokens.end(), tokens.begin(), tokens.end());
    s.droppable = n;
    std::vector<T> out(n * dv_);
    advance(s, n, out.data());
    appended(id, s);
    return std::vector<double>(out.begin(), out.end());
  }

  /// Drops the newest `count` steps of the last append (more is refused): its state is computed again from before it.
  virtual void rollback(sequence_id id, std::size_t count) {
    sequence& s = live(id);
    if (count > s.droppable) throw index_error("recurrent rollback: only the last append's steps can be dropped");
    if (count == 0) return;
    s.droppable -= count;
    s.tokens.resize(s.tokens.size() - count);
    s.pending.clear();
    s.now = s.committed;
    std::vector<T> out(s.droppable * dv_);
    advance(s, s.droppable, out.data());
  }

  /// Evicts the `count` least recently used checkpoints (all there are, if fewer).
  void evict(std::size_t count) {
    for (; count > 0 && !store_.empty(); --count) evict_oldest();
  }

  // Observation.
  std::size_t length(sequence_id id) const { return live(id).tokens.size(); }
  std::vector<double> state(sequence_id id) const { return doubles(live(id).now.state()); }
  std::vector<double> window(sequence_id id) const { return doubles(live(id).now.window()); }
  std::size_t hit_tokens() const { return hit_tokens_; }
  /// f(chain, state, window) for every checkpoint, in the order of their chains.
  template <class F>
  void for_each_checkpoint(F f) const {
    for (const auto& [chain, cp] : store_) f(chain, doubles(cp.state.state()), doubles(cp.state.window()));
  }

 protected:
  struct sequence {
    head now, committed;
    std::vector<std::int64_t> tokens{};
    std::size_t droppable = 0;
    std::vector<double> x{}, g{}, beta{};
    std::map<std::size_t, head> pending{};
  };
  /// Called at the end of every append that ran steps (a mutant's hook).
  virtual void appended(sequence_id, sequence&) {}

  struct checkpoint {
    head state;
    std::uint64_t used = 0;
  };

  std::size_t slots_, block_, dk_, dv_, w_;
  recurrence_form form_;
  std::vector<std::optional<sequence>> seqs_;
  std::map<std::vector<std::int64_t>, checkpoint> store_;
  std::uint64_t clock_ = 0;
  std::size_t hit_tokens_ = 0;

  head empty_head() const { return head(form_, dk_, dv_, w_, kind_convolution(w_, 2 * dk_ + dv_), Rules::store); }
  static std::vector<double> doubles(const std::vector<T>& v) { return std::vector<double>(v.begin(), v.end()); }
  sequence& live(sequence_id id) {
    if (id >= seqs_.size() || !seqs_[id]) throw index_error("recurrent: unknown or released sequence");
    return *seqs_[id];
  }
  const sequence& live(sequence_id id) const { return const_cast<basic_recurrent*>(this)->live(id); }

  /// The first n stored steps of the last append, split at block boundaries (each one's state kept for publishing).
  void advance(sequence& s, std::size_t n, T* out) {
    const std::size_t ch = 2 * dk_ + dv_;
    std::size_t at = committed_length(s);
    for (std::size_t i = 0; i < n;) {
      const std::size_t piece = std::min(n - i, block_ - at % block_);
      const double* b = s.beta.empty() ? nullptr : &s.beta[i];
      if (Rules::chunk == 0 || Rules::store || piece == 1)
        s.now.step(&s.x[i * ch], &s.g[i], b, piece, out + i * dv_);
      else
        s.now.chunked(&s.x[i * ch], &s.g[i], b, piece, Rules::chunk, out + i * dv_);
      i += piece, at += piece;
      if (at % block_ == 0) s.pending.insert_or_assign(at, s.now);
    }
  }
  std::size_t committed_length(const sequence& s) const { return s.tokens.size() - s.droppable; }

  /// The last append is kept for good: the states at the block boundaries it crossed become checkpoints.
  virtual void commit(sequence& s) {
    if (Rules::append_end) {
      if (s.droppable > 0 && s.tokens.size() % block_ == 0) publish(s.tokens, s.now);
    } else {
      for (const auto& [at, h] : s.pending)
        if (at <= s.tokens.size()) publish(std::vector<std::int64_t>(s.tokens.begin(), s.tokens.begin() + at), h);
    }
    s.pending.clear();
    s.committed = s.now;
    s.droppable = 0;
  }
  virtual void publish(std::vector<std::int64_t> chain, const head& h) {
    if (store_.count(chain)) return;
    if (store_.size() == slots_) evict_oldest();
    store_.emplace(std::move(chain), checkpoint{h, ++clock_});
  }
  void evict_oldest() {
    store_.erase(std::min_element(store_.begin(), store_.end(),
                                  [](const auto& a, const auto& b) { return a.second.used < b.second.used; }));
  }
};

/// The reference: double, chunks of 4 within an append.
class recurrent : public basic_recurrent<> {
 public:
  using basic_recurrent::basic_recurrent;
};

}  // namespace kvconform
