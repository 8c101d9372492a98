// The recurrent_cache concept and its registration: per sequence a recurrent head's state, with checkpoints by prefix.
#pragma once

#include <charconv>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "properties/executor/block_pool_adapter.h"

namespace kvconform {

/// The sequence id type of a recurrent cache: what create(tokens) gives (directly or inside a result).
template <class C>
using recurrent_id_t = unwrapped_t<decltype(std::declval<C&>().create(std::declval<std::span<const std::int64_t>>()))>;

/// A sequence of doubles a recurrent cache hands back (outputs, a state, a window): size() and [i].
template <class R>
concept double_sequence = requires(const R& r, std::size_t i) {
  { r.size() } -> std::convertible_to<std::size_t>;
  { r[i] } -> std::convertible_to<double>;
};

/// A callable a recurrent cache's for_each_checkpoint and for_each_block are given: f(chain, a, b).
struct recurrent_visitor {
  template <class Chain, class A, class B>
  void operator()(const Chain&, const A&, const B&) const {}
};

/// recurrent(slots, block_size, d_k, d_v, conv_width, delta, layers): sequences from create(tokens) (resumed from the
/// longest prefix of tokens whose checkpoint and attention blocks it holds) and fork(seq), ended by release(seq);
/// append(seq, x, g, beta, k, v, tokens) gives each step's output (n x d_v); evict(count) drops the least recently
/// used checkpoints and blocks; and the observation: length(seq), state(seq) (d_k x d_v), window(seq)
/// ((conv_width - 1) x (2 d_k + d_v)), keys(seq) and values(seq) (the attention layers' rows, layer by layer),
/// hit_tokens(), for_each_checkpoint(f(chain, state, window)) and for_each_block(f(chain, keys, values)) in the order
/// of the chains. Refusals are kvconform::error exceptions or returned statuses (docs/kinds/recurrent.md).
template <class C>
concept recurrent_cache =
    std::constructible_from<C, std::size_t, std::size_t, std::size_t, std::size_t, std::size_t, bool, std::size_t> &&
    std::integral<recurrent_id_t<C>> && requires(C& c, const C& cc, recurrent_id_t<C> s, array_view a,
                                                 std::span<const std::int64_t> t, std::size_t n, recurrent_visitor f) {
  requires std::same_as<unwrapped_t<decltype(c.fork(s))>, recurrent_id_t<C>>;
  c.release(s);
  requires double_sequence<unwrapped_t<decltype(c.append(s, a, a, a, a, a, t))>>;
  c.evict(n);
  { cc.length(s) } -> std::convertible_to<std::size_t>;
  { cc.state(s) } -> double_sequence;
  { cc.window(s) } -> double_sequence;
  { cc.keys(s) } -> double_sequence;
  { cc.values(s) } -> double_sequence;
  { cc.hit_tokens() } -> std::convertible_to<std::size_t>;
  cc.for_each_checkpoint(f);
  cc.for_each_block(f);
};

/// The optional rollback capability: c.rollback(seq, count) drops the newest count steps of the last append.
template <class C>
concept recurrent_rolling_back = requires(C& c, recurrent_id_t<C> s) {
  c.rollback(s, std::size_t{});
};

namespace detail {
template <double_sequence R>
std::vector<double> doubles_of(const R& r) {
  std::vector<double> out(static_cast<std::size_t>(r.size()));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(r[i]);
  return out;
}
}  // namespace detail

/// Adapts a recurrent cache to `subject`: handles to its ids, the calls, and per sequence and checkpoint its state
/// (judged within the bound) and window (bit for bit).
template <recurrent_cache C>
class recurrent_subject final : public subject {
  using id = recurrent_id_t<C>;

 public:
  explicit recurrent_subject(const cache_config& c)
      : cache_(c.capacity, c.block_size, c.d_k, c.d_v, c.conv_width, c.delta, c.layers), config_(c) {}

  op_outcome apply(const call& c) override {
    const op& o = c.o;
    const std::span<const std::int64_t> tokens(o.tokens);
    if (auto r = sequence_outcome(cache_, handles_, o, [&] { return cache_.create(tokens); })) return *r;
    switch (o.kind) {
      case op_kind::append:
        return call_cache([&] { return cache_.append(handles_.id_of(o.seq), c.x, c.g, c.beta, c.k, c.v, tokens); },
                          [](op_outcome& r, const auto& out) { r.output = detail::doubles_of(out); });
      case op_kind::rollback:
        if constexpr (recurrent_rolling_back<C>) {
          if (o.count < 0) return refused(refuse_index);  // a count the cache's size_t cannot carry
          return call_cache([&] { return cache_.rollback(handles_.id_of(o.seq), static_cast<std::size_t>(o.count)); });
        } else {
          return unsupported();
        }
      case op_kind::evict:
        if (o.count < 0) return refused(refuse_index);
        return call_cache([&] { return cache_.evict(static_cast<std::size_t>(o.count)); });
      default: return unsupported();  // the vocabulary of other kinds
    }
  }

  snapshot observe() override {
    snapshot s;
    const C& c = cache_;
    std::size_t live = 0;
    const bool layers = config_.layers > 0;
    handles_.for_each_live([&](std::int64_t h, id sid) {
      ++live;
      const std::string name = "seq " + std::to_string(h);
      add_head(s, name, detail::doubles_of(c.state(sid)), detail::doubles_of(c.window(sid)));
      if (layers) add_rows(s, name, detail::doubles_of(c.keys(sid)), detail::doubles_of(c.values(sid)));
      s.counters.emplace_back("length " + std::to_string(h), static_cast<std::int64_t>(c.length(sid)));
    });
    last_names_ = std::move(names_), names_.clear();
    std::int64_t checkpoints = 0, blocks = 0;
    c.for_each_checkpoint([&](const auto& chain, const auto& state, const auto& window) {
      ++checkpoints;
      add_head(s, "checkpoint " + chain_text(chain), detail::doubles_of(state), detail::doubles_of(window));
    });
    if (layers)
      c.for_each_block([&](const auto& chain, const auto& keys, const auto& values) {
        ++blocks;
        add_rows(s, "block " + chain_text(chain), detail::doubles_of(keys), detail::doubles_of(values));
      });
    s.counters.emplace_back("sequences", static_cast<std::int64_t>(live));
    s.counters.emplace_back("checkpoints", checkpoints);
    if (layers) s.counters.emplace_back("blocks", blocks);
    s.counters.emplace_back("hit_tokens", static_cast<std::int64_t>(c.hit_tokens()));
    return s;
  }

 private:
  C cache_;
  cache_config config_;
  sequence_handles<id> handles_;

  /// "T0,T1,..." by chain, kept from one observation to the next: every op observes every checkpoint and block, and
  /// writing a long chain's text each time would cost more than comparing its streams.
  std::map<std::vector<std::int64_t>, std::string> names_, last_names_;
  template <class Chain>
  const std::string& chain_text(const Chain& chain) {
    std::vector<std::int64_t> key(static_cast<std::size_t>(chain.size()));
    for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::int64_t>(chain[i]);
    if (const auto it = names_.find(key); it != names_.end()) return it->second;  // a checkpoint's and a block's
    if (const auto it = last_names_.find(key); it != last_names_.end())
      return names_.insert_or_assign(std::move(key), std::move(it->second)).first->second;
    std::string text;
    char digits[24];
    for (std::size_t i = 0; i < key.size(); ++i) {
      if (i) text += ',';
      text.append(digits, std::to_chars(digits, digits + sizeof digits, key[i]).ptr);
    }
    return names_.insert_or_assign(std::move(key), std::move(text)).first->second;
  }
  /// The attention layers' rows, exact.
  void add_rows(snapshot& s, const std::string& name, std::vector<double> keys, std::vector<double> values) const {
    stream r;
    r.name = name + " rows";
    r.d_k = config_.d_k, r.d_v = config_.d_v;
    r.keys = row_data(std::move(keys)), r.values = row_data(std::move(values));
    s.streams.push_back(std::move(r));
  }
  /// A head as two streams: its state, a row per key dimension, and its window's raw rows.
  void add_head(snapshot& s, const std::string& name, std::vector<double> state, std::vector<double> window) const {
    stream st;
    st.name = name + " state";
    st.d_k = config_.d_v;
    st.keys = row_data(std::move(state));
    s.streams.push_back(std::move(st));
    stream w;
    w.name = name + " window";
    w.d_k = 2 * config_.d_k + config_.d_v;
    w.keys = row_data(std::move(window));
    s.streams.push_back(std::move(w));
  }
};

/// A registry entry for a recurrent cache type; "rollback" when it has it.
template <recurrent_cache C>
implementation make_implementation(implementation_info info) {
  capability_set caps;
  if (recurrent_rolling_back<C>) caps.add(capability::rollback);
  return adapted_implementation<C, recurrent_subject<C>>(std::move(info), cache_kind::recurrent, caps);
}

}  // namespace kvconform
