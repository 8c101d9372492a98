// The tiered kind's properties (round trips, held transfer blocks, loads and their failures, accounting), its table
// row.
#include "oracle/models/tiered_model.h"
#include "properties/executor/block_pool_probe.h"
#include "properties/generate/speculation_properties.h"
#include "properties/kinds/block_pool_kind.h"
#include "properties/kinds/tiered/parts.h"

namespace kvconform::kinds {

namespace {
constexpr cache_kind tiered = cache_kind::tiered;

/// The device pool's mixes (prefix's), with no transfers: the statements every kind has.
case_generator pool_cases(prefix_mix m) {
  return tiered_cases(
      {.pool = m, .prompt = 0, .store = 0, .load = 0, .complete = 0, .fail = 0, .evict = 0, .put = 0, .round_trip = 0});
}
/// A property of the kind's own: its name, what it proves, its op mix and whether it draws long traces.
struct own_property {
  const char* name;
  const char* summary;
  tiered_mix mix;
  bool long_traces = false;
};
const own_property own_properties[] = {
    {"tiered_round_trip_exact",
     "rows stored to host or disk and loaded back are bit for bit the rows stored (in the declared element format, "
     "tier blocks of several device blocks, the tier's own layout), and a tier entry shows them while it is cached",
     {.pool = {.append = 1, .decode = 1, .create = 1, .reuse = 4, .release = 3},
      .prompt = 5,
      .store = 5,
      .load = 5,
      .complete = 6,
      .fail = 0,
      .evict = 3,
      .put = 1,
      .round_trip = 8,
      .store_tails = 0b10001,  // completions newest first: out of order, refused under fifo
      .load_tails = 0b00001,
      .evict_last = 0}},
    {"tiered_transfer_blocks_held",
     "no device block or tier entry of a pending transfer is freed, reused, evicted or written until the transfer "
     "completes or fails: a store's source blocks are held like a table's, a load's sources are pinned",
     {.pool = {.append = 3, .fill = 2, .decode = 1, .create = 1, .reuse = 2, .fork = 1, .release = 4},
      .prompt = 3,
      .store = 5,
      .load = 3,
      .complete = 2,
      .fail = 1,
      .evict = 4,
      .put = 2,
      .round_trip = 8,
      .store_tails = 0b00101,  // an eviction in the tier while the store is pending
      .load_tails = 0b01000}},
    {"tiered_store_reads_written_rows",
     "a store begins only on a tier block whose rows are all written (refused `pending` otherwise), and the entry "
     "holds those rows however the sequence goes on",
     {.pool = {.append = 3,
               .decode = 1,
               .create = 1,
               .reuse = 2,
               .release = 2,
               .speculation = {.rollback = 2, .block_rollback = 1}},
      .prompt = 4,
      .store = 6,
      .load = 1,
      .complete = 4,
      .fail = 1,
      .evict = 2,
      .put = 0,
      .round_trip = 8,
      .via_put = 0,
      .store_tails = 0b00010}},
    {"tiered_load_consumed_after_complete",
     "a loading sequence refuses every op with `pending` and shows none of the rows on their way until the load "
     "completes; a failed load's rows are never shown",
     {.pool = {.append = 2, .decode = 3, .create = 1, .reuse = 3, .fork = 1, .release = 2},
      .prompt = 2,
      .store = 2,
      .load = 6,
      .complete = 3,
      .fail = 2,
      .evict = 2,
      .put = 4,
      .round_trip = 8,
      .load_tails = 0b10001}},
    {"tiered_failed_load_recomputes",
     "after a failed load the sequence holds exactly what it held before the load (load_failure=recompute), or is "
     "released (abort), and the rows it then computes are those of a cache that never had the hit",
     {.pool = {.append = 1, .decode = 2, .create = 1, .reuse = 3, .release = 2},
      .prompt = 4,
      .store = 2,
      .load = 5,
      .complete = 2,
      .fail = 4,
      .evict = 2,
      .put = 4,
      .round_trip = 8,
      .load_tails = 0b00010}},
    {"tiered_hit_decodes_as_miss",
     "a sequence whose rows came from host or disk decodes as the same prompt computed with no cache, within the "
     "bound",
     {.pool = {.append = 1, .decode = 5, .create = 1, .reuse = 4, .release = 2},
      .prompt = 4,
      .store = 4,
      .load = 5,
      .complete = 5,
      .fail = 0,
      .evict = 3,
      .put = 4,
      .round_trip = 8,
      .load_tails = 0b00001}},
    {"tiered_no_double_hit",
     "a load fills only the device blocks past the sequence's rows: a device prefix hit and a tier hit for the same "
     "chain never both land in one sequence, whatever tier block the device hit ends inside",
     {.pool = {.append = 1, .decode = 1, .create = 1, .reuse = 5, .release = 3},
      .prompt = 4,
      .store = 5,
      .load = 5,
      .complete = 5,
      .fail = 0,
      .evict = 4,
      .put = 3,
      .round_trip = 8,
      .store_tails = 0b00001,
      .load_tails = 0b00001,
      .evict_all = 0}},
    {"tiered_block_accounting",
     "after every op the device's free + evictable + held blocks and each tier's free + cached + pinned + pending "
     "entries add up, every count matches the holders, and nothing stays held or pinned once no transfer is pending",
     {.pool = {.append = 2,
               .fill = 1,
               .overfill = 1,
               .bad_shape = 1,
               .create = 1,
               .reuse = 2,
               .fork = 1,
               .release = 3,
               .stale = 1},
      .prompt = 3,
      .store = 4,
      .load = 4,
      .complete = 4,
      .fail = 2,
      .evict = 3,
      .put = 2,
      .stale = 2,
      .round_trip = 4,
      .store_tails = 0b01101,  // an eviction while a store is pending, a failed store
      .load_tails = 0b01011},
     true},
};
}  // namespace

void add_tiered_properties(std::vector<property>& ps) {
  add_statements<prefix_mix>(ps, tiered, pool_cases, {.stale = 2});
  for (const own_property& p : own_properties)
    add_property(ps, tiered, p.name, p.summary, tiered_cases(p.mix)).long_traces = p.long_traces;
  add_prefix_speculation(ps, tiered, pool_cases);  // without transfers: prefix's, over the same pool
}

namespace {
/// The tiered kind's own events (docs/design.md §4.6), in the order of `event_index`.
enum event_index : std::size_t {
  host_hit_event,
  disk_hit_event,
  source_kept_event,
  out_of_order_event,
  failed_load_event,
  wide_event,
  straddle_event,
  duplicate_event,
  unwritten_event,
  failed_store_event,
  entry_evicted_event,
  put_event,
  prefix_hit_event,
  boundary_event,
  cow_event,
  full_event,
  order_event,
  aborted_event,
  speculation_events
};
bool fifo(const implementation& i) { return i.policies.is("completion_order", "fifo"); }
bool aborts(const implementation& i) { return i.policies.is("load_failure", "abort"); }
constexpr auto events = with_pool_speculation({
    {"hit served from host", "a load from host completed: its rows are the sequence's", true},
    {"hit served from disk", "a load from disk completed: its entries are on host again", true},
    {"store source kept", "after an op, a pending store alone holds a device block (its sequence let go of it)", true},
    {"completed out of issue order", "a transfer completed while one begun before it was still pending", true},
    {"failed load", "a load from host or disk failed", true},
    {"tier block of several device blocks", "a transfer of tier blocks of two or more device blocks completed", true},
    {"load past a device hit inside a tier block",
     "a load from host began where the device's rows end inside a tier block: it fills only the blocks past them",
     true},
    {"duplicate store", "a store of a chain the tier had already or was storing: accepted, nothing copied", true},
    {"store of unwritten rows refused", "a store of a tier block whose rows are not all written, refused `pending`",
     true},
    {"failed store", "a store to host or disk failed: its entry dropped, its sources let go", true},
    {"tier entry evicted", "an evict or the room a store, load or put needed evicted a host or disk entry", true},
    {"put", "rows put straight into a tier", true},
    {"prefix hit", "a create finds cached blocks of its tokens", true},
    block_boundary_event,
    copy_on_write_event,
    {"refused: pool exhausted", "an append refused for capacity alone: free and evictable blocks are too few", true},
    {"completion refused for its order",
     "a complete refused `order`: an earlier transfer of its direction was pending (completion_order=fifo)", true,
     fifo},
    {"load aborted", "a failed load released its sequence (load_failure=abort)", true, aborts},
});

struct probe final : block_pool_probe {
  explicit probe(const cache_config&) : block_pool_probe({boundary_event, cow_event, full_event, speculation_events}) {}
  void applied(const model& m, const op& o, const expectation& e, event_set& hit) override {
    const auto& pool = model_as<tiered_model>(m);
    const auto& f = pool.tier_last();
    const std::pair<bool, std::size_t> facts[] = {{f.host_hit, host_hit_event},
                                                  {f.disk_hit, disk_hit_event},
                                                  {f.source_kept, source_kept_event},
                                                  {f.out_of_order, out_of_order_event},
                                                  {f.load_failed, failed_load_event},
                                                  {f.wide && e.accepted, wide_event},
                                                  {f.straddles, straddle_event},
                                                  {f.duplicate_store, duplicate_event},
                                                  {f.store_failed, failed_store_event},
                                                  {f.entry_evicted, entry_evicted_event},
                                                  {f.put, put_event},
                                                  {f.order_refused, order_event},
                                                  {f.load_aborted, aborted_event}};
    for (const auto& [fact, at] : facts)
      if (fact) hit.set(at);
    if (o.kind == op_kind::store && !e.accepted && e.reasons == refuse_pending && !pool.loading(o.seq))
      hit.set(unwritten_event);
    if (o.kind == op_kind::create && pool.size(pool.handles() - 1) > 0) hit.set(prefix_hit_event);
  }
  void appended(const model&, const op&, const expectation&, event_set&) override {}
};
}  // namespace

extern const kind_spec tiered_spec;
/// The kind's row of the kind table (properties/executor/kind_table.h).
extern const kind_descriptor tiered_kind = block_pool_kind<tiered_model>(
    tiered_spec, add_tiered_properties, {tiered_fuzz_config, tiered_fuzz_ops}, {events, make_probe<probe>});

}  // namespace kvconform::kinds
