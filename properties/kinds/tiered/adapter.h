// The tiered_cache concept and its registration: a prefix pool with host and disk tiers and numbered transfers.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "properties/kinds/prefix/adapter.h"

namespace kvconform {

/// tiered(num_blocks, block_size, d_k, d_v, host_blocks, host_factor, disk_blocks): a prefix_pool whose transfers
/// have integral ids: store(seq, block, tier) and load(seq, tier) give the id of the transfer they begin (store: -1
/// when the tier has the chain already), complete(id), fail(id) (the sequences it released: load_failure=abort),
/// evict(tier, count), put(tier, tokens, k, v); and
/// the observation: counts(tier) (free, cached, pinned, pending, hit_rows), pending_transfers() (each id with its
/// device blocks) and for_each_entry(tier, f(chain, keys, values)) over ready entries. Refusals as for prefix, with
/// pending_error and order_error besides (docs/kinds/tiered.md).
template <class C>
concept tiered_cache = prefix_pool<C> && std::constructible_from<C, std::size_t, std::size_t, std::size_t, std::size_t,
                                                                 std::size_t, std::size_t, std::size_t> &&
    requires(C& c, const C& cc, prefix_id_t<C> s, array_view a, std::span<const std::int64_t> t) {
  { c.store(s, std::size_t{}, int{}) } -> std::convertible_to<std::int64_t>;
  { c.load(s, int{}) } -> std::convertible_to<std::int64_t>;
  c.complete(std::int64_t{});
  { *std::begin(c.fail(std::int64_t{})) } -> std::convertible_to<prefix_id_t<C>>;
  c.evict(int{}, std::size_t{});
  c.put(int{}, t, a, a);
  cc.counts(int{}).free;
  cc.pending_transfers();
};

/// The tiered kind's part of the block-pool adapter: prefix's calls, the config's tiers, the transfers' numbers.
template <tiered_cache C>
struct tiered_calls : prefix_calls<C> {
  static C construct(const cache_config& c) {
    return C(c.capacity, c.block_size, c.d_k, c.d_v, c.host_blocks, c.host_factor, c.disk_blocks);
  }
  static bool supports_op(const op& o) { return o.extra_key == 0; }

  /// Trace transfer number -> the cache's id (none: its op began no transfer).
  std::vector<std::optional<std::int64_t>> ids;

  op_outcome own(C& c, sequence_handles<prefix_id_t<C>>& handles, const call& x) {
    const op& o = x.o;
    const auto tier = static_cast<int>(std::clamp<std::int64_t>(o.tier, -1, 3));  // out of range stays out of range
    auto begin = [&](auto&& start) {
      ids.emplace_back();
      return call_cache(start, [&](op_outcome&, std::int64_t id) {
        if (id >= 0) ids.back() = id;
      });
    };
    // A number that began no transfer maps to an id no cache issued, so that the cache refuses it itself.
    auto id_of = [&](std::int64_t n) {
      return n >= 0 && static_cast<std::size_t>(n) < ids.size() && ids[static_cast<std::size_t>(n)]
                 ? *ids[static_cast<std::size_t>(n)]
                 : std::numeric_limits<std::int64_t>::max();
    };
    switch (o.kind) {
      case op_kind::store:
        if (o.block < 0) return ids.emplace_back(), refused(refuse_index);
        return begin([&] { return c.store(handles.id_of(o.seq), static_cast<std::size_t>(o.block), tier); });
      case op_kind::load: return begin([&] { return c.load(handles.id_of(o.seq), tier); });
      case op_kind::complete: return call_cache([&] { c.complete(id_of(o.transfer)); });
      case op_kind::fail:  // under load_failure=abort it names the sequence it released, as a preemption would
        return call_cache([&] { return c.fail(id_of(o.transfer)); },
                          [&](op_outcome& r, const auto& released) {
                            for (const auto& s : released) r.preempted.push_back(handles.release_id(s));
                          });
      case op_kind::evict:
        if (o.count < 1) return refused(refuse_index);
        return call_cache([&] { c.evict(tier, static_cast<std::size_t>(o.count)); });
      case op_kind::put: return call_cache([&] { c.put(tier, std::span<const std::int64_t>(o.tokens), x.k, x.v); });
      default: return unsupported();
    }
  }

  static void count(const C& c, snapshot& s) {
    prefix_calls<C>::count(c, s);
    for (int t = 1; t <= 2; ++t) {
      if (t > static_cast<int>(c.tiers())) break;
      const auto n = c.counts(t);
      const std::string name = t == 1 ? "host" : "disk";
      for (const auto& [what, value] : {std::pair{"_free", n.free},
                                        {"_cached", n.cached},
                                        {"_pinned", n.pinned},
                                        {"_pending", n.pending},
                                        {"_hit_rows", n.hit_rows}})
        s.counters.emplace_back(name + what, static_cast<std::int64_t>(value));
    }
  }

  /// A stream per pending transfer (its device blocks, named by trace number), then one per ready entry of each
  /// tier, in the order of their chains.
  void observe(const C& c, const cache_config& config, snapshot& s) const {
    std::vector<std::pair<std::int64_t, stream>> transfers;
    for (const auto& [id, blocks] : c.pending_transfers()) {
      std::int64_t number = -1;  // a transfer no op began shows as such
      for (std::size_t n = 0; n < ids.size(); ++n)
        if (ids[n] == static_cast<std::int64_t>(id)) number = static_cast<std::int64_t>(n);
      stream st;
      st.name = "transfer " + std::to_string(number);
      st.d_k = config.d_k, st.d_v = config.d_v;
      for (const auto& b : blocks) st.blocks.push_back(static_cast<std::int64_t>(b));
      transfers.emplace_back(number, std::move(st));
    }
    std::sort(transfers.begin(), transfers.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& t : transfers) s.streams.push_back(std::move(t.second));
    for (int t = 1; t <= static_cast<int>(c.tiers()); ++t) {
      std::vector<std::pair<std::vector<std::int64_t>, stream>> entries;
      c.for_each_entry(t, [&](const std::vector<std::int64_t>& chain, const auto& k, const auto& v) {
        stream st;
        st.name = t == 1 ? "host " : "disk ";
        for (std::size_t i = 0; i < chain.size(); ++i) st.name += (i ? "," : "") + std::to_string(chain[i]);
        st.d_k = config.d_k, st.d_v = config.d_v;
        read_rows(std::decay_t<decltype(k)>(k), st.keys), read_rows(std::decay_t<decltype(v)>(v), st.values);
        entries.emplace_back(chain, std::move(st));
      });
      std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (auto& e : entries) s.streams.push_back(std::move(e.second));
    }
  }
};

/// A registry entry for a tiered cache type; "decode", "prefill" and "rollback" when it has them.
template <tiered_cache C>
implementation make_implementation(implementation_info info) {
  return block_pool_implementation<C, tiered_calls<C>>(std::move(info), cache_kind::tiered);
}

}  // namespace kvconform
