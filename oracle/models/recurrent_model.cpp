// The recurrent kind's model (docs/kinds/recurrent.md): the oracle's recurrence per sequence, advanced op by op.
#include "oracle/models/recurrent_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace kvconform {

namespace {
/// The unit roundoff of the state's storage: the profile's key format (docs/kinds/recurrent.md, Numbers).
double state_roundoff(const storage_format& f) {
  if (f.groups || f.scaled || !f.subnormals)
    throw std::invalid_argument("a recurrent state is stored in f64, f32, f16 or bf16");
  switch (f.element) {
    case element_format::f64: return 0;
    case element_format::f32: return 0x1p-24;
    case element_format::f16: return 0x1p-11;
    case element_format::bf16: return 0x1p-8;
    default: throw std::invalid_argument("a recurrent state is stored in f64, f32, f16 or bf16");
  }
}

/// The steps of a well-formed append's x: 1-D of width `ch` is one, 2-D (n, ch) is n.
std::optional<std::size_t> x_steps(const tensor& x, std::size_t ch) {
  if (x.shape.size() == 1 && x.shape[0] == ch) return 1;
  if (x.shape.size() == 2 && x.shape[1] == ch) return x.shape[0];
  return std::nullopt;
}
bool is_vector(const tensor& t, std::size_t n) { return t.shape.size() == 1 && t.shape[0] == n; }
}  // namespace

recurrent_model::recurrent_model(const cache_config& c, const numeric_profile& p, const policy_set& policies,
                                 bool numbers)
    : c_(c),
      p_(p),
      form_(c.delta ? recurrence_form::delta : recurrence_form::decay),
      prec_{.u = unit_roundoff(p.working),
            .u_state = state_roundoff(p.keys),
            .u_out = p.u_out,
            .mu = p.flush_subnormals ? smallest_normal(p.working) : std::numeric_limits<double>::denorm_min()},
      conv_(kind_convolution(c.conv_width, 2 * c.d_k + c.d_v)),
      all_but_last_(policies.is("hit_limit", "all_but_last")),
      append_end_(policies.is("checkpoint_at", "append_end")),
      numbers_(numbers),
      fresh_(std::make_shared<recurrence_tracker>(form_, c.d_k, c.d_v, c.conv_width, conv_, prec_)) {}

bool recurrent_model::live(std::int64_t h) const {
  return h >= 0 && static_cast<std::size_t>(h) < seqs_.size() && seqs_[static_cast<std::size_t>(h)].has_value();
}

expectation recurrent_model::apply(const op& o) {
  last_ = {};
  switch (o.kind) {
    case op_kind::create: return create(o);
    case op_kind::append: return append(o);
    case op_kind::rollback: return rollback(o);
    case op_kind::fork: {
      if (!live(o.seq)) return seqs_.emplace_back(), expectation{.accepted = false, .reasons = refuse_index};
      seqs_.push_back(seqs_[static_cast<std::size_t>(o.seq)]);  // a refused fork still uses up its handle (above)
      return {};
    }
    case op_kind::release: {
      if (!live(o.seq)) return {.accepted = false, .reasons = refuse_index};
      commit(*seqs_[static_cast<std::size_t>(o.seq)]);
      seqs_[static_cast<std::size_t>(o.seq)].reset();
      return {};
    }
    case op_kind::evict: {
      if (o.count < 0) return {.accepted = false, .reasons = refuse_index};
      for (std::int64_t i = 0; i < o.count && !store_.empty(); ++i) evict_oldest();
      return {};
    }
    default: throw std::invalid_argument(std::string("recurrent has no op ") + to_string(o.kind));
  }
}

std::vector<std::int64_t> recurrent_model::live() const {
  std::vector<std::int64_t> out;
  for (std::size_t h = 0; h < seqs_.size(); ++h)
    if (seqs_[h]) out.push_back(static_cast<std::int64_t>(h));
  return out;
}

std::vector<std::vector<std::int64_t>> recurrent_model::chains() const {
  std::vector<std::vector<std::int64_t>> out;
  for (const auto& [chain, cp] : store_) out.push_back(chain);
  return out;
}

std::size_t recurrent_model::hit_of(const std::vector<std::int64_t>& tokens) const {
  const std::size_t limit = tokens.size() - (all_but_last_ && !tokens.empty() ? 1 : 0);
  for (std::size_t b = limit / c_.block_size * c_.block_size; b > 0; b -= c_.block_size)
    if (store_.count(std::vector<std::int64_t>(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(b))))
      return b;
  return 0;
}

expectation recurrent_model::create(const op& o) {
  sequence s{fresh_, fresh_, {}, 0, {}, {}, {}, {}, false};
  if (const std::size_t b = hit_of(o.tokens); b > 0) {
    auto& cp =
        store_.at(std::vector<std::int64_t>(o.tokens.begin(), o.tokens.begin() + static_cast<std::ptrdiff_t>(b)));
    s.now = s.committed = cp.state;
    s.tokens.assign(o.tokens.begin(), o.tokens.begin() + static_cast<std::ptrdiff_t>(b));
    cp.used = ++clock_;
    hit_tokens_ += b, last_.hit = b;
  }
  seqs_.push_back(std::move(s));
  return {};
}

expectation recurrent_model::append(const op& o) {
  const std::size_t ch = channels();
  const auto n = x_steps(o.x, ch);
  bool ok = n && is_vector(o.g, *n) && o.tokens.size() == *n &&
            (c_.delta ? is_vector(o.beta, *n) : o.beta.shape.empty() || is_vector(o.beta, 0));  // rank 0: no beta
  for (std::size_t i = 0; ok && i < o.g.data.size(); ++i) ok = std::isfinite(o.g.data[i]) && o.g.data[i] <= 0;
  for (std::size_t i = 0; ok && c_.delta && i < o.beta.data.size(); ++i)
    ok = o.beta.data[i] >= 0 && o.beta.data[i] <= 1;
  for (std::size_t i = 0; ok && i < o.x.data.size(); ++i) ok = std::isfinite(o.x.data[i]);
  if (!ok) return {.accepted = false, .reasons = refuse_shape | (live(o.seq) ? 0u : unsigned{refuse_index})};
  if (!live(o.seq)) return {.accepted = false, .reasons = refuse_index};
  expectation e;
  if (*n == 0) return e;
  sequence& s = *seqs_[static_cast<std::size_t>(o.seq)];
  last_.after_rollback = s.rolled_back;
  commit(s);
  auto stored = [&](const tensor& t) {
    std::vector<double> v(t.data);
    for (double& d : v) d = round_to(p_.storage, d);
    return v;
  };
  s.x = stored(o.x), s.g = stored(o.g), s.beta = stored(o.beta);
  s.tokens.insert(s.tokens.end(), o.tokens.begin(), o.tokens.end());
  s.droppable = *n;
  e.width = c_.d_v;
  advance(s, 0, *n, &e.output, &e.output_bound);
  last_.crossed = *n > 1 && !s.pending.empty();
  return e;
}

void recurrent_model::advance(sequence& s, std::size_t from, std::size_t n, std::vector<double>* out,
                              std::vector<double>* bound) {
  const std::size_t ch = channels(), B = c_.block_size;
  std::vector<dd::ddouble> o;
  std::vector<double> ob;
  std::size_t at = s.tokens.size() - s.droppable + from;
  for (std::size_t i = from; i < from + n;) {
    const std::size_t piece = std::min(from + n - i, B - at % B);
    if (numbers_) {
      o.resize(piece * c_.d_v), ob.resize(piece * c_.d_v);
      if (s.now.use_count() > 1) s.now = std::make_shared<recurrence_tracker>(*s.now);  // written: owned
      s.now->advance(&s.x[i * ch], &s.g[i], c_.delta ? &s.beta[i] : nullptr, piece, o.data(), ob.data());
      if (out)
        for (std::size_t j = 0; j < o.size(); ++j) out->push_back(o[j].hi), bound->push_back(ob[j]);
    }
    i += piece, at += piece;
    if (at % B == 0) s.pending.insert_or_assign(at, s.now);
  }
}

expectation recurrent_model::rollback(const op& o) {
  if (!live(o.seq) || o.count < 0) return {.accepted = false, .reasons = refuse_index};
  sequence& s = *seqs_[static_cast<std::size_t>(o.seq)];
  const auto count = static_cast<std::size_t>(o.count);
  if (count > s.droppable) return {.accepted = false, .reasons = refuse_index};
  if (count == 0) return {};
  const std::size_t keep = s.droppable - count, before = s.tokens.size() - s.droppable;
  last_.rolled_back = true;
  last_.dropped_pending =
      std::any_of(s.pending.begin(), s.pending.end(), [&](const auto& p) { return p.first > before + keep; });
  s.tokens.resize(before + keep);
  s.droppable = keep, s.rolled_back = true;
  s.pending.clear();
  s.now = s.committed;
  advance(s, 0, keep, nullptr, nullptr);
  return {};
}

void recurrent_model::commit(sequence& s) {
  const std::size_t end = s.tokens.size();
  if (append_end_) {
    if (s.droppable > 0 && end % c_.block_size == 0) publish(s.tokens, s.now);
  } else {
    for (const auto& [at, t] : s.pending)
      if (at <= end) publish(std::vector<std::int64_t>(s.tokens.begin(), s.tokens.begin() + at), t);
  }
  s.pending.clear();
  s.committed = s.now;
  s.droppable = 0, s.rolled_back = false;
}

void recurrent_model::publish(std::vector<std::int64_t> chain, const tracker& t) {
  if (store_.count(chain)) return;  // the first stays (docs/kinds/recurrent.md, Checkpoints)
  if (store_.size() == c_.capacity) evict_oldest();
  store_.emplace(std::move(chain), checkpoint{t, ++clock_});
  last_.published = true;
}

void recurrent_model::evict_oldest() {
  const auto oldest = std::min_element(store_.begin(), store_.end(),
                                       [](const auto& a, const auto& b) { return a.second.used < b.second.used; });
  store_.erase(oldest);
  last_.evicted = true;
}

namespace {
std::string chain_text(const std::vector<std::int64_t>& chain) {
  std::string s;
  for (std::size_t i = 0; i < chain.size(); ++i) s += (i ? "," : "") + std::to_string(chain[i]);
  return s;
}
}  // namespace

snapshot recurrent_model::observe() const {
  snapshot s;
  const std::size_t ch = channels();
  auto add = [&](const std::string& name, const recurrence_tracker& t) {  // a state and its window, as two streams
    stream st;
    st.name = name + " state";
    st.d_k = c_.d_v;  // a row of the state: one key dimension's d_v entries
    std::vector<double> v(t.state().size());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = t.state()[i].hi;
    st.keys = row_data(std::move(v));
    st.key_bounds = t.state_bound();
    s.streams.push_back(std::move(st));
    stream w;
    w.name = name + " window";
    w.d_k = ch;
    w.keys = row_data(t.window());
    s.streams.push_back(std::move(w));
  };
  std::size_t live_count = 0;
  for (std::size_t h = 0; h < seqs_.size(); ++h) {
    if (!seqs_[h]) continue;
    ++live_count;
    add("seq " + std::to_string(h), *seqs_[h]->now);
    s.counters.emplace_back("length " + std::to_string(h), static_cast<std::int64_t>(seqs_[h]->tokens.size()));
  }
  for (const auto& [chain, cp] : store_) add("checkpoint " + chain_text(chain), *cp.state);
  s.counters.emplace_back("sequences", static_cast<std::int64_t>(live_count));
  s.counters.emplace_back("checkpoints", static_cast<std::int64_t>(store_.size()));
  s.counters.emplace_back("hit_tokens", static_cast<std::int64_t>(hit_tokens_));
  return s;
}

}  // namespace kvconform
