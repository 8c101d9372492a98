// The recurrent kind's model (docs/kinds/recurrent.md): the oracle's recurrence per sequence, advanced op by op.
#include "oracle/models/recurrent_model.h"

#include <algorithm>
#include <charconv>
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

std::vector<std::int64_t> prefix(const std::vector<std::int64_t>& tokens, std::size_t n) {
  return {tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(n)};
}

std::string chain_text(const std::vector<std::int64_t>& chain) {  // in place: every observation names every entry
  std::string s;
  s.reserve(chain.size() * 3);
  char digits[24];
  for (std::size_t i = 0; i < chain.size(); ++i) {
    if (i) s += ',';
    s.append(digits, std::to_chars(digits, digits + sizeof digits, chain[i]).ptr);
  }
  return s;
}
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
      for (std::int64_t i = 0; i < o.count && store_.size() + blocks_.size() > 0; ++i) evict_oldest();
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

std::vector<std::vector<std::int64_t>> recurrent_model::chains(bool blocks) const {
  std::vector<std::vector<std::int64_t>> out;
  for (const auto& [chain, cp] : store_) out.push_back(chain);
  if (blocks)
    for (const auto& [chain, b] : blocks_) out.push_back(chain);
  return out;
}

std::size_t recurrent_model::hit_limit(const std::vector<std::int64_t>& tokens) const {
  return tokens.size() - (all_but_last_ && !tokens.empty() ? 1 : 0);
}

std::size_t recurrent_model::covered(const std::vector<std::int64_t>& tokens) const {
  const std::size_t B = c_.block_size, limit = hit_limit(tokens);
  if (c_.layers == 0) return limit / B * B;
  std::size_t end = 0;
  while (end + B <= limit && blocks_.count(prefix(tokens, end + B))) end += B;
  return end;
}

std::size_t recurrent_model::hit_of(const std::vector<std::int64_t>& tokens) const {
  for (std::size_t b = covered(tokens); b > 0; b -= c_.block_size)
    if (store_.count(prefix(tokens, b))) return b;
  return 0;
}

expectation recurrent_model::create(const op& o) {
  sequence s{fresh_, fresh_, {}, 0, {}, {}, {}, {}, false, {}, {}};
  s.keys.resize(numbers_ ? c_.layers : 0), s.values.resize(s.keys.size());
  const std::size_t B = c_.block_size, b = hit_of(o.tokens);
  if (c_.layers > 0) {
    last_.short_of_state = covered(o.tokens) > b;
    for (std::size_t longer = b + B; longer <= hit_limit(o.tokens) && !last_.short_of_blocks; longer += B)
      last_.short_of_blocks = store_.count(prefix(o.tokens, longer)) > 0;
  }
  if (b > 0) {
    for (std::size_t e = B; c_.layers > 0 && e <= b; e += B) {  // the rows, block by block, as their sequence wrote
      block& bl = blocks_.at(prefix(o.tokens, e));
      bl.used = ++clock_;
      for (std::size_t l = 0; l < s.keys.size(); ++l) {
        s.keys[l].insert(s.keys[l].end(), bl.keys.begin() + l * B * c_.d_k, bl.keys.begin() + (l + 1) * B * c_.d_k);
        s.values[l].insert(s.values[l].end(), bl.values.begin() + l * B * c_.d_v,
                           bl.values.begin() + (l + 1) * B * c_.d_v);
      }
    }
    auto& cp = store_.at(prefix(o.tokens, b));
    s.now = s.committed = cp.state;
    s.tokens = prefix(o.tokens, b);
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
  auto rows_ok = [&](const tensor& t, std::size_t d) {  // (layers, n, d), finite; nothing without attention layers
    if (c_.layers == 0) return t.shape.empty() || t.data.empty();  // rank 0 reads as none, as for beta
    return t.shape == std::vector<std::size_t>{c_.layers, *n, d} &&
           std::all_of(t.data.begin(), t.data.end(), [](double v) { return std::isfinite(v); });
  };
  ok = ok && rows_ok(o.k, c_.d_k) && rows_ok(o.v, c_.d_v);
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
  if (numbers_ && c_.layers > 0) {
    const std::vector<double> k = stored(o.k), v = stored(o.v);
    for (std::size_t l = 0; l < c_.layers; ++l) {
      s.keys[l].insert(s.keys[l].end(), k.begin() + l * *n * c_.d_k, k.begin() + (l + 1) * *n * c_.d_k);
      s.values[l].insert(s.values[l].end(), v.begin() + l * *n * c_.d_v, v.begin() + (l + 1) * *n * c_.d_v);
    }
  }
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
  for (std::size_t l = 0; l < s.keys.size(); ++l)  // every layer at the same accepted length
    s.keys[l].resize((before + keep) * c_.d_k), s.values[l].resize((before + keep) * c_.d_v);
  s.droppable = keep, s.rolled_back = true;
  s.pending.clear();
  s.now = s.committed;
  advance(s, 0, keep, nullptr, nullptr);
  return {};
}

void recurrent_model::commit(sequence& s) {
  const std::size_t end = s.tokens.size(), B = c_.block_size;
  for (std::size_t at = ((end - s.droppable) / B + 1) * B; at <= end; at += B) {  // each boundary crossed, in order
    if (c_.layers > 0) publish_block(s, at);
    if (!append_end_) publish(prefix(s.tokens, at), s.pending.at(at));
  }
  if (append_end_ && s.droppable > 0 && end % B == 0) publish(s.tokens, s.now);
  s.pending.clear();
  s.committed = s.now;
  s.droppable = 0, s.rolled_back = false;
}

void recurrent_model::publish(std::vector<std::int64_t> chain, const tracker& t) {
  if (store_.count(chain)) return;  // the first stays (docs/kinds/recurrent.md, Checkpoints)
  make_room();
  std::string name = numbers_ ? "checkpoint " + chain_text(chain) : "";
  store_.emplace(std::move(chain), checkpoint{t, ++clock_, std::move(name)});
  last_.published = true;
}

void recurrent_model::publish_block(const sequence& s, std::size_t end) {
  auto chain = prefix(s.tokens, end);
  if (blocks_.count(chain)) return;  // the first stays, as for checkpoints
  make_room();
  block b;
  const std::size_t B = c_.block_size;
  for (std::size_t l = 0; l < s.keys.size(); ++l) {
    b.keys.insert(b.keys.end(), s.keys[l].begin() + (end - B) * c_.d_k, s.keys[l].begin() + end * c_.d_k);
    b.values.insert(b.values.end(), s.values[l].begin() + (end - B) * c_.d_v, s.values[l].begin() + end * c_.d_v);
  }
  b.used = ++clock_;
  if (numbers_) b.name = "block " + chain_text(chain) + " rows";
  blocks_.emplace(std::move(chain), std::move(b));
}

void recurrent_model::make_room() {
  if (store_.size() + blocks_.size() >= c_.capacity) evict_oldest();
}

void recurrent_model::evict_oldest() {
  auto older = [](const auto& a, const auto& b) { return a.second.used < b.second.used; };
  const auto cp = std::min_element(store_.begin(), store_.end(), older);
  const auto bl = std::min_element(blocks_.begin(), blocks_.end(), older);
  if (bl != blocks_.end() && (cp == store_.end() || bl->second.used < cp->second.used))
    blocks_.erase(bl);
  else
    store_.erase(cp);
  last_.evicted = true;
}

snapshot recurrent_model::observe() const {
  snapshot s;
  const std::size_t ch = channels();
  auto rows_stream = [&](std::string name) {  // every attention layer's rows, layer by layer, exact
    stream r;
    r.name = std::move(name);
    r.d_k = c_.d_k, r.d_v = c_.d_v;
    return r;
  };
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
    if (c_.layers > 0) {
      stream r = rows_stream("seq " + std::to_string(h) + " rows");
      for (std::size_t l = 0; l < c_.layers; ++l) {
        r.keys.add(seqs_[h]->keys[l].data(), seqs_[h]->keys[l].size());
        r.values.add(seqs_[h]->values[l].data(), seqs_[h]->values[l].size());
      }
      s.streams.push_back(std::move(r));
    }
    s.counters.emplace_back("length " + std::to_string(h), static_cast<std::int64_t>(seqs_[h]->tokens.size()));
  }
  for (const auto& [chain, cp] : store_) add(cp.name, *cp.state);
  for (const auto& [chain, b] : blocks_) {
    stream r = rows_stream(b.name);
    r.keys.add(b.keys.data(), b.keys.size()), r.values.add(b.values.data(), b.values.size());
    s.streams.push_back(std::move(r));
  }
  s.counters.emplace_back("sequences", static_cast<std::int64_t>(live_count));
  s.counters.emplace_back("checkpoints", static_cast<std::int64_t>(store_.size()));
  if (c_.layers > 0) s.counters.emplace_back("blocks", static_cast<std::int64_t>(blocks_.size()));
  s.counters.emplace_back("hit_tokens", static_cast<std::int64_t>(hit_tokens_));
  return s;
}

}  // namespace kvconform
