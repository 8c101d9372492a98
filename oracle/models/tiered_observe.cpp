// What the tiered model shows after an op: its counters and streams, and the facts the coverage probe counts.
#include <algorithm>
#include <string>

#include "oracle/models/tiered_model.h"

namespace kvconform {

void tiered_model::finished(const op& o) {
  prefix_model::finished(o);
  for (const auto& [id, x] : pending_)
    for (std::int64_t b : x.blocks) {
      if (x.dir != direction::store_host) continue;
      bool tabled = false;
      for (const auto& [h, s] : sequences())
        tabled = tabled || std::find(s.blocks.begin(), s.blocks.end(), b) != s.blocks.end();
      facts_.source_kept = facts_.source_kept || !tabled;
    }
  if (facts_.source_kept && note_.empty())
    note_ = "a block a pending store reads stays held until the store ends, though no table holds it";
}

void tiered_model::count(snapshot& out) const {
  prefix_model::count(out);
  for (const tier* t : {&host_, &disk_}) {
    if (t->capacity == 0) continue;
    std::int64_t cached = 0, pinned = 0, waiting = 0;
    for (const auto& [c, e] : t->entries) (e.ready ? (e.pins > 0 ? pinned : cached) : waiting) += 1;
    const std::string n = t->name;
    out.counters.emplace_back(n + "_free", static_cast<std::int64_t>(t->capacity - t->entries.size()));
    out.counters.emplace_back(n + "_cached", cached);
    out.counters.emplace_back(n + "_pinned", pinned);
    out.counters.emplace_back(n + "_pending", waiting);
    out.counters.emplace_back(n + "_hit_rows", t->hit_rows);
  }
  for (const auto& [id, x] : pending_) {  // its device blocks, compared up to renaming with the tables'
    stream st;
    st.name = "transfer " + std::to_string(id);
    st.d_k = config_.d_k, st.d_v = config_.d_v;
    st.blocks = x.blocks;
    out.streams.push_back(std::move(st));
  }
  for (const tier* t : {&host_, &disk_})
    for (const auto& [c, e] : t->entries) {
      if (!e.ready) continue;
      stream st;
      st.name = std::string(t->name) + " ";
      for (std::size_t i = 0; i < c.size(); ++i) st.name += (i ? "," : "") + std::to_string(c[i]);
      st.d_k = config_.d_k, st.d_v = config_.d_v;
      e.rows->expose(st);
      out.streams.push_back(std::move(st));
    }
}

}  // namespace kvconform
