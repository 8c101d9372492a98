// The adapter the block-pool kinds (paged, prefix) share: trace handles to sequence ids, the calls, the observation.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <kvconform/array_view.h>
#include "properties/executor/adapter.h"

namespace kvconform {

/// Handles count the create and fork ops of a trace, refused ones included; each keeps the id the
/// implementation gave (none when refused) and whether it is live. A handle that never named a
/// sequence maps to an id no implementation is expected to have issued, so that the
/// implementation refuses it itself; a released one keeps its old id for the same reason.
template <class Id>
class sequence_handles {
 public:
  /// Uses up the next handle; `give` it its id once the implementation answered.
  void issue() { handles_.emplace_back(); }
  void give(Id id) { handles_.back() = {id, true}; }
  Id id_of(std::int64_t h) const { return issued(h) ? *at(h).id : std::numeric_limits<Id>::max(); }
  bool issued(std::int64_t h) const { return h >= 0 && static_cast<std::size_t>(h) < handles_.size() && at(h).id; }
  void released(std::int64_t h) {
    if (issued(h)) handles_[static_cast<std::size_t>(h)].live = false;
  }
  /// The live handle of `id`, now released (preemption); -1 (which no model expects) if none.
  std::int64_t release_id(Id id) {
    for (std::size_t h = 0; h < handles_.size(); ++h)
      if (handles_[h].live && handles_[h].id == id) return handles_[h].live = false, static_cast<std::int64_t>(h);
    return -1;
  }
  /// Calls f(handle, id) for every live handle, in handle order.
  template <class F>
  void for_each_live(F f) const {
    for (std::size_t h = 0; h < handles_.size(); ++h)
      if (handles_[h].live) f(static_cast<std::int64_t>(h), *handles_[h].id);
  }

 private:
  struct handle {
    std::optional<Id> id;  ///< empty when its create or fork was refused
    bool live = false;
  };
  const handle& at(std::int64_t h) const { return handles_[static_cast<std::size_t>(h)]; }
  std::vector<handle> handles_;
};

/// What every block-pool cache has, whatever its kind adds: sequences of integral ids `Id` from
/// fork(seq) too (directly, or inside a result_like: empty = refused); release(seq) (void, or a
/// status); keys(seq)/values(seq) matrix views; and the introspection the block properties judge:
/// num_blocks(), free_blocks(), block_table(seq) (block numbers in [0, num_blocks)) and
/// ref_count(block). Constructed as C(num_blocks, block_size, d_k, d_v). Refusals are
/// kvconform::error exceptions or returned statuses. No base class is needed.
template <class C, class Id>
concept block_pool_ops = std::integral<Id> && requires(C& c, const C& cc, Id s, std::size_t block) {
  requires std::same_as<unwrapped_t<decltype(c.fork(s))>, Id>;
  c.release(s);
  { cc.keys(s) } -> matrix_view;
  { cc.values(s) } -> matrix_view;
  { cc.num_blocks() } -> std::convertible_to<std::size_t>;
  { cc.free_blocks() } -> std::convertible_to<std::size_t>;
  { *std::begin(cc.block_table(s)) } -> std::convertible_to<std::size_t>;
  std::end(cc.block_table(s));
  { cc.ref_count(block) } -> std::convertible_to<std::size_t>;
};
/// A block_pool_ops cache constructed as C(num_blocks, block_size, d_k, d_v).
template <class C, class Id>
concept block_pool_cache =
    std::constructible_from<C, std::size_t, std::size_t, std::size_t, std::size_t> && block_pool_ops<C, Id>;

/// The optional decode capability: c.decode_step(seq, q) giving a decode result (or a result_like of one).
template <class C, class Id>
concept block_pool_decoding = requires(const C& cc, Id s, array_view a) {
  requires decode_result_like<unwrapped_t<decltype(cc.decode_step(s, a))>>;
};

/// Declared attention (docs/numerics.md §7): a cache whose profile declares it decodes with c.decode_step(seq, q,
/// sinks), given each decode's sink logits.
template <class C, class Id>
concept block_pool_taking_sinks = (!profile_of<C>().attention.plain()) && requires(const C& cc, Id s, array_view a) {
  requires decode_result_like<unwrapped_t<decltype(cc.decode_step(s, a, a))>>;
};

/// The optional rollback capability: c.rollback(seq, n) drops the newest n steps of seq (void, or a status).
template <class C, class Id>
concept block_pool_rolling_back = requires(C& c, Id s, std::size_t n) {
  c.rollback(s, n);
};

/// One stream "seq H" per live handle (its rows and block table), then every held block's
/// reference count: the observation every block-pool cache shares.
template <class C, class Id>
void observe_sequences(const C& c, const sequence_handles<Id>& handles, const cache_config& config, snapshot& s) {
  handles.for_each_live([&](std::int64_t h, Id sid) {
    stream st;
    st.name = "seq " + std::to_string(h);
    st.d_k = config.d_k, st.d_v = config.d_v;
    read_rows(c.keys(sid), st.keys);  // each view once: a paged reference gathers a copy
    read_rows(c.values(sid), st.values);
    if constexpr (requires { c.key_scales(sid); })  // integer groups (docs/numerics.md §6.2)
      copy_groups(
          st.key_groups, [&] { return c.key_scales(sid); },
          [&] {
            if constexpr (requires { c.key_zeros(sid); }) return c.key_zeros(sid);
          });
    if constexpr (requires { c.value_scales(sid); })
      copy_groups(
          st.value_groups, [&] { return c.value_scales(sid); },
          [&] {
            if constexpr (requires { c.value_zeros(sid); }) return c.value_zeros(sid);
          });
    for (const auto& b : c.block_table(sid)) st.blocks.push_back(static_cast<std::int64_t>(b));
    s.streams.push_back(std::move(st));
  });
  for (std::size_t b = 0; b < static_cast<std::size_t>(c.num_blocks()); ++b)
    if (const auto refs = static_cast<std::int64_t>(c.ref_count(b)); refs > 0)
      s.block_refs.emplace_back(static_cast<std::int64_t>(b), refs);
}

/// A create (by `create()`), fork or release of a block-pool cache, with its handle bookkeeping; nullopt for any
/// other op. A create or fork uses up its handle even when refused.
template <class C, class Id, class Create>
std::optional<op_outcome> sequence_outcome(C& cache, sequence_handles<Id>& handles, const op& o, Create create) {
  switch (o.kind) {
    case op_kind::create: handles.issue(); return call_cache(create, [&](op_outcome&, Id s) { handles.give(s); });
    case op_kind::fork: {
      const Id from = handles.id_of(o.seq);
      handles.issue();
      return call_cache([&] { return cache.fork(from); }, [&](op_outcome&, Id s) { handles.give(s); });
    }
    case op_kind::release: {
      op_outcome r = call_cache([&] { return cache.release(handles.id_of(o.seq)); });
      if (r.accepted) handles.released(o.seq);
      return r;
    }
    default: return std::nullopt;
  }
}

/// Adapts a block-pool cache to `subject`: trace handles to its ids (and preempted ids back), fork,
/// release, decode, prefill, rollback and the observation of its sequences and their free_blocks. `Calls` is the kind's
/// part: `id`, `construct(config)`, `supports(config)` (false: NOT SUPPORTED), `create(cache, op)`,
/// `append(cache, id, call)`, `preempts` (an append's value lists the ids it released), `prefills` and
/// `prefill(cache, id, call)` (a decode result, with `preempted` ids where it preempts),
/// `count(cache, snapshot)`, the kind's other counters, and optionally `decodes` and `decode(cache, id, call)`,
/// a kind's own decode in place of decode_step(id, q); `own(cache, handles, call)` for the kind's own ops and
/// `observe(cache, config, snapshot)` for its own streams, members of a Calls object the subject keeps.
template <class C, class Calls>
class block_pool_subject final : public subject {
  using id = typename Calls::id;

 public:
  explicit block_pool_subject(const cache_config& c) : cache_(Calls::construct(c)), config_(c) {
    pass_scales(cache_, c);
  }

  op_outcome apply(const call& c) override {
    if (!Calls::supports(config_)) return unsupported();
    const op& o = c.o;
    if constexpr (requires { Calls::supports_op(o); })  // an op field the type cannot take (prefix: an extra key)
      if (!Calls::supports_op(o)) return unsupported();
    if (auto r = sequence_outcome(cache_, handles_, o, [&] { return Calls::create(cache_, o); })) return *r;
    switch (o.kind) {
      case op_kind::append:
        return call_cache([&] { return Calls::append(cache_, handles_.id_of(o.seq), c); },
                          [&](op_outcome& r, const auto& victims) {
                            if constexpr (Calls::preempts)
                              for (const auto& v : victims) r.preempted.push_back(handles_.release_id(v));
                          });
      case op_kind::prefill:
        if constexpr (Calls::prefills)
          return call_cache([&] { return Calls::prefill(cache_, handles_.id_of(o.seq), c); },
                            [&](op_outcome& r, const auto& d) {
                              copy_decode(d, r);
                              if constexpr (requires { d.preempted; })
                                for (const auto& v : d.preempted) r.preempted.push_back(handles_.release_id(v));
                            });
        else
          return unsupported();
      case op_kind::rollback:
        if constexpr (block_pool_rolling_back<C, id>) {
          if (o.count < 0) return refused(refuse_index);  // a count the cache's size_t cannot carry
          return call_cache([&] { return cache_.rollback(handles_.id_of(o.seq), static_cast<std::size_t>(o.count)); });
        } else {
          return unsupported();
        }
      case op_kind::decode:
        if constexpr (requires { Calls::decodes; }) {  // the kind's own decode (latent)
          if constexpr (Calls::decodes)
            return decode_outcome([&] { return Calls::decode(std::as_const(cache_), handles_.id_of(o.seq), c); });
          else
            return unsupported();
        } else if constexpr (block_pool_taking_sinks<C, id>) {
          return decode_outcome([&] { return std::as_const(cache_).decode_step(handles_.id_of(o.seq), c.q, c.sinks); });
        } else if constexpr (block_pool_decoding<C, id>)
          return decode_outcome([&] { return std::as_const(cache_).decode_step(handles_.id_of(o.seq), c.q); });
        else
          return unsupported();
      default:
        if constexpr (requires { calls_.own(cache_, handles_, c); })  // the kind's own ops (tiered: transfers)
          return calls_.own(cache_, handles_, c);
        else
          return unsupported();  // the vocabulary of other kinds
    }
  }

  snapshot observe() override {
    snapshot s;
    observe_sequences(std::as_const(cache_), handles_, config_, s);
    s.counters.emplace_back("free_blocks", static_cast<std::int64_t>(cache_.free_blocks()));
    Calls::count(std::as_const(cache_), s);
    if constexpr (requires { calls_.observe(std::as_const(cache_), config_, s); })  // the kind's own streams
      calls_.observe(std::as_const(cache_), config_, s);
    return s;
  }

 private:
  C cache_;
  cache_config config_;
  sequence_handles<id> handles_;
  Calls calls_{};  ///< what the kind's part keeps between ops (tiered: its transfers' ids); most keep nothing
};

/// A registry entry for a block-pool cache of `kind` adapted by `Calls`; "decode" when it has it,
/// and the kind's own capabilities `caps`.
template <class C, class Calls>
implementation block_pool_implementation(implementation_info info, cache_kind kind, capability_set caps = {}) {
  if (block_pool_decoding<C, typename Calls::id> || block_pool_taking_sinks<C, typename Calls::id>)
    caps.add(capability::decode);
  if (Calls::prefills) caps.add(capability::prefill);
  if (block_pool_rolling_back<C, typename Calls::id>) caps.add(capability::rollback);
  return adapted_implementation<C, block_pool_subject<C, Calls>>(std::move(info), kind, caps);
}

}  // namespace kvconform
