// The recurrent reference cache: per sequence one recurrent head (state and convolution window) and the rows of the
// attention layers beside it, rollback of the last append, and checkpoints of the state and blocks of the rows at
// block boundaries, in one pool, found again by the prefix's tokens (docs/kinds/recurrent.md).
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
                  bool delta, std::size_t layers)
      : slots_(slots),
        block_(block_size),
        dk_(d_k),
        dv_(d_v),
        w_(conv_width),
        layers_(layers),
        form_(delta ? recurrence_form::delta : recurrence_form::decay) {
    if (slots == 0 || block_size == 0) throw shape_error("recurrent: slots and block_size must be at least 1");
    (void)empty_head();  // throws shape_error for a malformed head
  }

  /// A new sequence holding the longest stored prefix of `tokens` whose checkpoint and attention blocks are all held.
  virtual sequence_id create(std::span<const std::int64_t> tokens) {
    sequence s{empty_head(), empty_head()};
    s.keys.resize(layers_), s.values.resize(layers_);
    const std::size_t limit = tokens.size() - (Rules::all_but_last && !tokens.empty() ? 1 : 0);
    std::size_t covered = 0;  // the blocks of tokens held, from the first
    while (covered + block_ <= limit && layers_ > 0 && blocks_.count(chain(tokens, covered + block_)))
      covered += block_;
    for (std::size_t b = limit / block_ * block_; b > 0; b -= block_) {
      const auto it = store_.find(chain(tokens, b));
      if (!hit_at(it != store_.end(), layers_ == 0 || b <= covered)) continue;
      for (std::size_t e = block_; layers_ > 0 && e <= b; e += block_) {  // the rows, block by block
        const auto bl = blocks_.find(chain(tokens, e));
        if (bl == blocks_.end()) break;
        use(bl->second.used, true, bl->first);
        for (std::size_t l = 0; l < layers_; ++l) {
          append_rows(s.keys[l], bl->second.keys, l * block_ * dk_, block_ * dk_);
          append_rows(s.values[l], bl->second.values, l * block_ * dv_, block_ * dv_);
        }
      }
      if (it != store_.end()) s.now = s.committed = it->second.state, use(it->second.used, false, it->first);
      s.tokens = chain(tokens, b);
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
  /// k (layers, n, d_k) and v (layers, n, d_v) the attention layers' rows (empty without layers), tokens n. Returns
  /// each step's output, n x d_v.
  std::vector<double> append(sequence_id id, array_view x, array_view g, array_view beta, array_view k, array_view v,
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
    if (!rows_fit(k, n, dk_) || !rows_fit(v, n, dv_))
      throw shape_error("recurrent append: k and v must be (layers, n, d_k) and (layers, n, d_v), finite");
    sequence& s = live(id);
    if (n == 0) return {};
    commit(s);
    for (std::size_t l = 0; l < layers_; ++l) {
      append_rows(s.keys[l], k.data, l * n * dk_, n * dk_);
      append_rows(s.values[l], v.data, l * n * dv_, n * dv_);
    }
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
    for (std::size_t l = 0; l < layers_; ++l)
      s.keys[l].resize(s.tokens.size() * dk_), s.values[l].resize(s.tokens.size() * dv_);
    s.pending.clear();
    s.now = s.committed;
    std::vector<T> out(s.droppable * dv_);
    advance(s, s.droppable, out.data());
  }

  /// Evicts the `count` least recently used checkpoints and blocks (all there are, if fewer).
  void evict(std::size_t count) {
    for (; count > 0 && !queue_.empty(); --count) evict_oldest();
  }

  // Observation.
  std::size_t length(sequence_id id) const { return live(id).tokens.size(); }
  std::vector<double> state(sequence_id id) const { return doubles(live(id).now.state()); }
  std::vector<double> window(sequence_id id) const { return doubles(live(id).now.window()); }
  /// Every attention layer's rows, layer by layer: layers x length x d_k, and x d_v.
  std::vector<double> keys(sequence_id id) const { return layer_by_layer(live(id).keys); }
  std::vector<double> values(sequence_id id) const { return layer_by_layer(live(id).values); }
  std::size_t hit_tokens() const { return hit_tokens_; }
  /// f(chain, state, window) for every checkpoint, in the order of their chains.
  template <class F>
  void for_each_checkpoint(F f) const {
    for (const auto& [chain, cp] : store_) f(chain, doubles(cp.state.state()), doubles(cp.state.window()));
  }
  /// f(chain, keys, values) for every block of the attention layers' rows (layers x block_size rows), in chain order.
  template <class F>
  void for_each_block(F f) const {
    for (const auto& [chain, b] : blocks_) f(chain, doubles(b.keys), doubles(b.values));
  }

 protected:
  struct sequence {
    head now, committed;
    std::vector<std::int64_t> tokens{};
    std::size_t droppable = 0;
    std::vector<double> x{}, g{}, beta{};
    std::map<std::size_t, head> pending{};
    std::vector<std::vector<T>> keys{}, values{};  // per attention layer, a row per step
  };
  /// Called at the end of every append that ran steps (a mutant's hook).
  virtual void appended(sequence_id, sequence&) {}

  struct checkpoint {
    head state;
    std::uint64_t used = 0;  // its stamp in queue_
  };
  struct block {  // one block of steps of every attention layer, layer by layer
    std::vector<T> keys, values;
    std::uint64_t used = 0;
  };

  std::size_t slots_, block_, dk_, dv_, w_, layers_;
  recurrence_form form_;
  std::vector<std::optional<sequence>> seqs_;
  std::map<std::vector<std::int64_t>, checkpoint> store_;
  std::map<std::vector<std::int64_t>, block> blocks_;
  /// The pool of checkpoints and blocks (at most slots_) in the order of their last use, by stamp: (a block?, chain).
  std::map<std::uint64_t, std::pair<bool, std::vector<std::int64_t>>> queue_;
  std::uint64_t clock_ = 0;
  std::size_t hit_tokens_ = 0;

  head empty_head() const { return head(form_, dk_, dv_, w_, kind_convolution(w_, 2 * dk_ + dv_), Rules::store); }
  static std::vector<double> doubles(const std::vector<T>& v) { return std::vector<double>(v.begin(), v.end()); }
  static std::vector<std::int64_t> chain(std::span<const std::int64_t> tokens, std::size_t n) {
    return {tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(n)};
  }
  template <class Src>
  static void append_rows(std::vector<T>& to, const Src& from, std::size_t at, std::size_t n) {
    for (std::size_t i = at; i < at + n; ++i) to.push_back(static_cast<T>(from[i]));
  }
  static std::vector<double> layer_by_layer(const std::vector<std::vector<T>>& rows) {
    std::vector<double> out;
    for (const auto& r : rows) out.insert(out.end(), r.begin(), r.end());
    return out;
  }
  /// k or v of an append of n steps: (layers, n, d) and finite; nothing at all without attention layers.
  bool rows_fit(const array_view& a, std::size_t n, std::size_t d) const {
    if (layers_ == 0) return a.rank == 0 || a.size() == 0;
    if (a.rank != 3 || a.dims[0] != layers_ || a.dims[1] != n || a.dims[2] != d) return false;
    return std::all_of(a.data, a.data + a.size(), [](double e) { return std::isfinite(e); });
  }
  /// Whether a create may resume at a whole-block prefix whose state's checkpoint is held (`checkpoint`) or not, and
  /// whose attention blocks are all held (`blocks`) or not (a mutant's hook).
  virtual bool hit_at(bool checkpoint, bool blocks) const { return checkpoint && blocks; }
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
  /// At each boundary crossed, in order, the attention layers' block and then the state's checkpoint.
  virtual void commit(sequence& s) {
    const std::size_t end = s.tokens.size();
    for (std::size_t at = (committed_length(s) / block_ + 1) * block_; at <= end; at += block_) {
      if (layers_ > 0) publish_block(s, at);
      if (!Rules::append_end) publish(chain(s.tokens, at), s.pending.at(at));
    }
    if (Rules::append_end && s.droppable > 0 && end % block_ == 0) publish(s.tokens, s.now);
    s.pending.clear();
    s.committed = s.now;
    s.droppable = 0;
  }
  virtual void publish(std::vector<std::int64_t> chain, const head& h) {
    if (store_.count(chain)) return;
    if (queue_.size() == slots_) evict_oldest();
    const auto it = store_.emplace(std::move(chain), checkpoint{h}).first;
    use(it->second.used, false, it->first);
  }
  void publish_block(const sequence& s, std::size_t end) {
    auto c = chain(s.tokens, end);
    if (blocks_.count(c)) return;
    if (queue_.size() == slots_) evict_oldest();
    block b;
    for (std::size_t l = 0; l < layers_; ++l) {
      append_rows(b.keys, s.keys[l], (end - block_) * dk_, block_ * dk_);
      append_rows(b.values, s.values[l], (end - block_) * dv_, block_ * dv_);
    }
    const auto it = blocks_.emplace(std::move(c), std::move(b)).first;
    use(it->second.used, true, it->first);
  }
  /// An entry of the pool becomes the most recently used: it moves to the end of the queue.
  void use(std::uint64_t& used, bool is_block, const std::vector<std::int64_t>& c) {
    if (used) queue_.erase(used);
    used = ++clock_;
    queue_.emplace(used, std::pair{is_block, c});
  }
  void evict_oldest() {
    const auto& [is_block, c] = queue_.begin()->second;
    if (is_block)
      blocks_.erase(c);
    else
      store_.erase(c);
    queue_.erase(queue_.begin());
  }
};

/// The reference: double, chunks of 4 within an append.
class recurrent : public basic_recurrent<> {
 public:
  using basic_recurrent::basic_recurrent;
};

}  // namespace kvconform
