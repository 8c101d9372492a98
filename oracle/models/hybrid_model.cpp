// The hybrid specification, written independently of the caches it judges (docs/kinds/hybrid.md).
#include "oracle/models/hybrid_model.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>

namespace kvconform {

namespace {
constexpr std::size_t full = 0, sliding = 1, cross = 2;
const char* const group_names[] = {"full", "sliding", "cross"};
}  // namespace

hybrid_model::hybrid_model(const cache_config& c, const numeric_profile& p, const policy_set& policies)
    : config_(c),
      profile_(p),
      next_step_(policies.is("sliding_free", "next_step")),
      refused_frees_(policies.is("refused_append", "frees_passed")) {
  // Layer i of the pattern keeps every row unless there is a window and it is not every global_every-th.
  auto pattern = [&](std::size_t i) {
    const bool global = c.global_every > 0 && (i + 1) % c.global_every == 0;
    return c.window > 0 && !global ? type::sliding : type::full;
  };
  const std::size_t writing = c.layers - c.shared;
  for (std::size_t i = 0; i < c.layers; ++i) {
    if (i < writing) {
      types_.push_back(pattern(i)), source_.push_back(i);
      continue;
    }
    // A shared layer reads the last writing layer of its pattern's type, or the last writing layer.
    std::size_t from = writing - 1;
    for (std::size_t j = 0; j < writing; ++j)
      if (types_[j] == pattern(i)) from = j;
    types_.push_back(type::shared), source_.push_back(from);
  }
  if (c.cross > 0) types_.push_back(type::cross), source_.push_back(c.layers);
  for (std::size_t l = 0; l < writing; ++l) writes_[group_of(l)] = true;
}

std::vector<std::int64_t> hybrid_model::live() const {
  std::vector<std::int64_t> h;
  for (const auto& entry : seqs_) h.push_back(entry.first);
  return h;
}

std::size_t hybrid_model::group_of(std::size_t l) const {
  const type t = types_[source_[l]];
  return t == type::sliding ? sliding : t == type::cross ? cross : full;
}

bool hybrid_model::needs(std::size_t g, std::size_t j, std::size_t n) const {
  if (g != sliding) return true;
  // A sink, or a row among the last window - keep of the n.
  const std::size_t bs = config_.block_size, first = j * bs, last = first + bs - 1;
  return first < config_.keep || last + (config_.window - config_.keep) >= n;
}

std::array<hybrid_model::plan, 2> hybrid_model::planned(const sequence& s, std::size_t n, std::size_t at) const {
  std::array<plan, 2> out;
  const std::size_t bs = config_.block_size, to = s.len + n;
  for (std::size_t g : {full, sliding}) {
    if (!writes_[g]) continue;
    const auto& t = s.tables[g];
    for (std::size_t j = 0; j < (to + bs - 1) / bs; ++j) {
      const bool held = j < t.size() && t[j] >= 0, wanted = needs(g, j, at);
      if (held && !wanted) out[g].drop.push_back(j);
      if (!held && wanted) out[g].take.push_back(j);
    }
    const std::size_t last = s.len / bs;
    out[g].copy = s.len % bs != 0 && needs(g, last, at) && t[last] >= 0 && refs_.at(t[last]) > 1;
  }
  return out;
}

std::pair<std::size_t, std::size_t> hybrid_model::demand(const sequence& s, const std::array<plan, 2>& p) const {
  std::size_t takes = 0, frees = 0;
  for (std::size_t g : {full, sliding}) {
    takes += p[g].take.size() + (p[g].copy ? 1 : 0);
    for (std::size_t j : p[g].drop) frees += refs_.at(s.tables[g][j]) == 1 ? 1 : 0;
  }
  return {takes, frees};
}

std::size_t hybrid_model::window_at(const sequence& s, std::size_t n, bool prefill) const {
  // A prefill's queries read from the first new row on; sliding_free=next_step measures every append there.
  return prefill || next_step_ ? s.len + 1 : s.len + n;
}

bool hybrid_model::fits(std::int64_t h, std::size_t n, bool prefill) const {
  const sequence& s = seqs_.at(h);
  const auto [takes, frees] = demand(s, planned(s, n, window_at(s, n, prefill)));
  return takes <= available_blocks() + frees;
}

std::size_t hybrid_model::room(std::int64_t h, std::size_t limit, bool prefill) const {
  std::size_t most = 0;
  for (std::size_t n = 1; n <= limit; ++n)
    if (fits(h, n, prefill)) most = n;
  return most;
}

std::int64_t hybrid_model::take(std::size_t g) {
  refs_[blocks_made_] = 1, owner_[blocks_made_] = g;
  if (sliding_free_ > 0) --sliding_free_;  // still a lower bound, whichever free block the cache hands out
  return blocks_made_++;
}

void hybrid_model::drop_ref(std::int64_t b) {
  if (--refs_.at(b) > 0) return;
  if (owner_.at(b) == sliding) ++sliding_free_;
  if (const auto c = cached_.find(b); c != cached_.end()) {  // a freed block is no longer found
    registered_[c->second.group].erase(c->second.prefix);
    cached_.erase(c), block_k_.erase(b), block_v_.erase(b);
  }
  refs_.erase(b), owner_.erase(b);
}

void hybrid_model::push(sequence& s, std::size_t l, std::vector<double> k, std::vector<double> v) {
  stored_stream& r = s.rows[l];
  r.push(k, v);
  // A sliding layer reads its sinks and its last window - keep rows (docs/kinds/hybrid.md).
  if (types_[l] == type::sliding && r.size() > config_.window) r.keys.erase(config_.keep), r.values.erase(config_.keep);
}

expectation hybrid_model::create(const op& o) {
  ++handles_;  // a refused create still uses up its handle
  const std::size_t e = config_.cross, blocks = (e + config_.block_size - 1) / config_.block_size;
  const bool shaped =
      o.k.shape == std::vector<std::size_t>{e, config_.d_k} && o.v.shape == std::vector<std::size_t>{e, config_.d_v};
  if (!shaped) return {.accepted = false, .reasons = refuse_shape};
  if (blocks > available_blocks()) return {.accepted = false, .reasons = refuse_capacity};
  sequence s;
  for (std::size_t l = 0; l < layers(); ++l) {
    const bool slides = types_[l] == type::sliding;
    s.rows.emplace_back(profile_.keys_of(slides), profile_.values_of(slides), config_, config_.d_k, config_.d_v);
  }
  for (std::size_t j = 0; j < blocks; ++j) s.tables[cross].push_back(take(cross));
  for (std::size_t i = 0; i < e; ++i)
    push(s, layers() - 1, stored_row(o.k, i, profile_.storage), stored_row(o.v, i, profile_.storage));
  if (config_.prefix_caching) take_hit(s, o.tokens);
  seqs_.emplace(handles_ - 1, std::move(s));
  return {};
}

expectation hybrid_model::append(const op& o, bool prefill) {
  expectation e;
  const std::size_t w = writers();
  const bool shaped = o.k.shape.size() == 3 && o.v.shape.size() == 3 && o.k.shape[0] == w && o.v.shape[0] == w &&
                      o.k.shape[1] == o.v.shape[1] && o.k.shape[2] == config_.d_k && o.v.shape[2] == config_.d_v;
  if (!seqs_.count(o.seq)) e.accepted = false, e.reasons |= refuse_index;
  // With prefix caching a step's token names it; without, tokens are not the cache's business.
  if (!shaped || (config_.prefix_caching && o.tokens.size() != o.k.shape[1]))
    e.accepted = false, e.reasons |= refuse_shape;
  if (!e.accepted || o.k.shape[1] == 0) return e;
  sequence& s = seqs_.at(o.seq);
  const std::size_t n = o.k.shape[1], bs = config_.block_size;
  const auto p = planned(s, n, window_at(s, n, prefill));
  const auto [takes, frees] = demand(s, p);
  if (takes > available_blocks() + frees) return refused_for_room(s, p);
  for (std::size_t g : {full, sliding})
    for (std::size_t j : p[g].drop) drop_ref(std::exchange(s.tables[g][j], -1));
  const std::size_t free = available_blocks();
  last_.full_took_sliding = free > 0 && sliding_free_ >= free && (!p[full].take.empty() || p[full].copy);
  for (std::size_t g : {full, sliding}) {
    auto& t = s.tables[g];
    if (writes_[g]) t.resize((s.len + n + bs - 1) / bs, -1);
    if (p[g].copy) {
      const std::int64_t old = t[s.len / bs];
      t[s.len / bs] = take(g), drop_ref(old), s.copied[g] = last_.copied[g] = true;
    }
    for (std::size_t j : p[g].take) t[j] = take(g);
  }
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t l = 0, written = 0; l < config_.layers; ++l) {
      if (types_[l] == type::shared) continue;
      const std::size_t at = (written++ * n + i);
      auto row = [&](const tensor& t, std::size_t width) {
        std::vector<double> r(t.data.begin() + static_cast<std::ptrdiff_t>(at * width),
                              t.data.begin() + static_cast<std::ptrdiff_t>((at + 1) * width));
        for (double& x : r) x = round_to(profile_.storage, x);
        return r;
      };
      const auto k = row(o.k, config_.d_k), v = row(o.v, config_.d_v);
      keep_given(s, l, s.len + i, k, v), push(s, l, k, v);
    }
  const std::size_t from = s.len;
  s.len += n;
  if (config_.prefix_caching)
    s.tokens.insert(s.tokens.end(), o.tokens.begin(), o.tokens.end()), register_filled(s, from);
  // The blocks the window passed once the queries read them; with sliding_free=next_step, at the next append.
  if (prefill && !next_step_) drop_passed(s, s.len);
  last_.held_passed = next_step_ && passed(s, s.len) > 0;
  return e;
}

expectation hybrid_model::refused_for_room(sequence& s, const std::array<plan, 2>& p) {
  const bool full_short = !p[full].take.empty() || p[full].copy,
             sliding_short = !p[sliding].take.empty() || p[sliding].copy;
  last_.one_group_short = full_short != sliding_short;
  last_.refused_freed = refused_frees_ && passed(s, s.len + 1) > 0;
  if (last_.refused_freed) {  // the one thing a refusal changes, by this policy: a sliding layer reads W - 1 rows
    drop_passed(s, s.len + 1);
    for (std::size_t l = 0; l < config_.layers; ++l) {
      stored_stream& r = s.rows[l];
      const std::size_t sinks = std::min(config_.keep, r.size()), oldest = s.len - (r.size() - sinks);
      if (types_[l] == type::sliding && r.size() > sinks && s.tables[sliding][oldest / config_.block_size] < 0)
        r.keys.erase(sinks), r.values.erase(sinks);
    }
  }
  return {.accepted = false, .reasons = refuse_capacity};
}

std::size_t hybrid_model::passed(const sequence& s, std::size_t at) const {
  std::size_t n = 0;
  for (std::size_t j = 0; j < s.tables[sliding].size(); ++j) n += s.tables[sliding][j] >= 0 && !needs(sliding, j, at);
  return n;
}

void hybrid_model::drop_passed(sequence& s, std::size_t at) {
  auto& t = s.tables[sliding];
  for (std::size_t j = 0; j < t.size(); ++j)
    if (t[j] >= 0 && !needs(sliding, j, at)) drop_ref(std::exchange(t[j], -1));
}

std::int64_t hybrid_model::stream_index(std::int64_t h, std::size_t l) const {
  return std::distance(seqs_.begin(), seqs_.find(h)) * static_cast<std::int64_t>(layers()) +
         static_cast<std::int64_t>(l);
}

expectation hybrid_model::decode(const op& o) const {
  expectation e;
  auto refuse = [&](unsigned why) { e.accepted = false, e.reasons |= why; };
  const auto it = seqs_.find(o.seq);
  const bool layer_ok = o.layer >= 0 && static_cast<std::size_t>(o.layer) < layers();
  if (it == seqs_.end() || !layer_ok) refuse(refuse_index);
  if (o.q.shape.size() != 1 || o.q.shape[0] != config_.d_k) refuse(refuse_shape);
  const std::size_t l = layer_ok ? static_cast<std::size_t>(o.layer) : 0;
  if (!sinks_fit(profile_, o.sinks, 1)) refuse(refuse_shape);  // the decoded layer's head (docs/numerics.md §7.1)
  if (it != seqs_.end() && layer_ok && it->second.rows[source_[l]].size() == 0) refuse(refuse_empty);
  if (!e.accepted) return e;
  std::vector<double> q;
  for (double x : o.q.data) q.push_back(round_to(profile_.storage, x));
  add_decode(e, it->second.rows[source_[l]], static_cast<std::size_t>(stream_index(o.seq, l)), std::move(q), profile_);
  stamp_attention(e, profile_, o.sinks, 1);
  return e;
}

expectation hybrid_model::apply(const op& o) {
  last_ = {};
  switch (o.kind) {
    case op_kind::create: return create(o);
    case op_kind::fork: {
      const std::int64_t child = handles_++;  // a refused fork still uses up its handle
      if (!seqs_.count(o.seq)) return {.accepted = false, .reasons = refuse_index};
      sequence s = seqs_.at(o.seq);
      s.copied = {};
      for (const auto& t : s.tables)
        for (std::int64_t b : t)
          if (b >= 0) ++refs_.at(b);
      seqs_.emplace(child, std::move(s));
      return {};
    }
    case op_kind::release: {
      const auto it = seqs_.find(o.seq);
      if (it == seqs_.end()) return {.accepted = false, .reasons = refuse_index};
      for (const auto& t : it->second.tables)
        for (auto b = t.rbegin(); b != t.rend(); ++b)
          if (*b >= 0) drop_ref(*b);
      seqs_.erase(it);
      return {};
    }
    case op_kind::append: return append(o);
    case op_kind::prefill: return prefill(o);
    case op_kind::decode: return decode(o);
    default: return {.accepted = false, .reasons = refuse_none};  // not in the hybrid vocabulary
  }
}

snapshot hybrid_model::observe() const {
  snapshot out;
  for (const auto& [h, s] : seqs_)
    for (std::size_t l = 0; l < layers(); ++l) {
      stream st;
      st.name = "seq " + std::to_string(h) + " layer " + std::to_string(l);
      st.d_k = config_.d_k, st.d_v = config_.d_v, st.sliding = types_[source_[l]] == type::sliding;
      s.rows[source_[l]].expose(st);
      if (types_[l] != type::shared)
        std::copy_if(s.tables[group_of(l)].begin(), s.tables[group_of(l)].end(), std::back_inserter(st.blocks),
                     [](std::int64_t b) { return b >= 0; });
      out.streams.push_back(std::move(st));
    }
  out.counters.emplace_back("free_blocks", static_cast<std::int64_t>(available_blocks()));
  for (std::size_t g = 0; g < groups; ++g)
    out.counters.emplace_back(
        std::string("blocks_") + group_names[g],
        std::count_if(owner_.begin(), owner_.end(), [g](const auto& b) { return b.second == g; }));
  out.block_refs.assign(refs_.begin(), refs_.end());
  return out;
}

}  // namespace kvconform
