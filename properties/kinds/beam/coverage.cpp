// The beam kind's boundary events (fills, rollbacks, reorder cycles per batch size, GQA, masks, prefills) and probe.
#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "oracle/models/beam_model.h"
#include "properties/kinds/beam/inputs.h"
#include "properties/kinds/beam/parts.h"

namespace kvconform::kinds {

namespace {
bool decodes(const implementation& i) { return i.capabilities.has(capability::decode); }
bool prefills(const implementation& i) { return i.capabilities.has(capability::prefill); }

/// The events before the per-batch-size ones, in the order of their index.
enum event_index : std::size_t {
  exact_fill_event,
  rollback_event,
  truncate_event,
  identity_event,
  fixed_point_event,
  two_cycle_event,
  three_cycle_event,
  long_cycle_event,
  repeat_event,
  gqa_event,
  left_padding_event,
  hole_event,
  newest_masked_event,
  single_key_event,
  fully_masked_event,
  big_event,
  prefill_gqa_event,
  prefill_masked_event,
  prefill_after_held_event,
  per_batch_events  ///< then, for B = 2 .. 8, one event per reorder shape of per_batch_shapes
};
constexpr event fixed_events[] = {
    {"exact fill", "an accepted update ends exactly at max_len", true},
    {"rollback", "an accepted update starts below the layer's length (truncates first)", true},
    {"truncate only", "an accepted update of 0 steps below the layer's length", false},
    {"identity reorder", "an accepted reorder that keeps every row", false},
    {"reorder fixed point", "an accepted reorder in which some row keeps its own while others change", true},
    {"reorder 2-cycle", "an accepted reorder that swaps two rows", true},
    {"reorder 3-cycle", "an accepted reorder with a cycle of three rows", true},
    {"reorder longer cycle", "an accepted reorder with a cycle of four rows or more", false},
    {"repeated beam", "an accepted reorder that uses a row twice (so another row is dropped)", true},
    {"GQA group > 1", "an accepted decode whose query heads share a kv head (Hq > H)", true, decodes},
    {"mask left padding", "a decode mask row that masks a prefix, the rest live", true, decodes},
    {"mask hole", "a decode mask row with a masked position between live ones (sinks and a window, dropped drafts)",
     true, decodes},
    {"mask hides the newest", "a decode mask row whose last position is masked while another is live", true, decodes},
    {"single live key", "a decode mask row with exactly one live position of two or more", true, decodes},
    {"fully masked row", "a decode mask row with no live position (zeros by the contract)", true, decodes},
    {"beyond 2^24 elements", "L B H T D above 2^24, past the integers a float holds exactly (a long case)", true,
     unlimited,
     [](const cache_config& c) {
       return double(c.layers) * double(c.batch) * double(c.heads) * double(c.capacity) * double(c.d_k) > 0x1p24;
     }},
    {"prefill with GQA group > 1", "an accepted prefill whose query heads share a kv head (Hq > H)", true, prefills},
    {"prefill with a masked position", "an accepted prefill whose mask hides a position (an entry of exactly 0)", true,
     prefills},
    {"prefill after held positions",
     "an accepted prefill of two or more positions onto a layer that holds some (where the causal mask's alignment "
     "shows)",
     true, prefills},
};

/// The reorder shapes counted per batch size, so that --stats shows each at every B from 2 to 8,
/// with the fewest rows each needs.
struct batch_shape {
  const char* name;
  std::size_t min_rows;
};
constexpr std::array<batch_shape, 4> per_batch_shapes = {
    {{"fixed point", 2}, {"2-cycle", 2}, {"3-cycle", 3}, {"repeated beam", 2}}};
constexpr std::size_t max_batch = 8;

/// The events after the fixed ones: "reorder at B=n: SHAPE" for every shape that fits n rows,
/// n = 2 .. 8, and where each is in the list (0: none).
struct batch_events {
  std::vector<std::string> names;
  std::array<std::array<std::size_t, per_batch_shapes.size()>, max_batch + 1> index{};
};

const batch_events& per_batch() {
  static const batch_events e = [] {
    batch_events t;
    for (std::size_t b = 2; b <= max_batch; ++b)
      for (std::size_t shape = 0; shape < per_batch_shapes.size(); ++shape) {
        if (b < per_batch_shapes[shape].min_rows) continue;
        t.index[b][shape] = per_batch_events + t.names.size();
        t.names.push_back("reorder at B=" + std::to_string(b) + ": " + per_batch_shapes[shape].name);
      }
    return t;
  }();
  return e;
}

const std::vector<event>& all_events() {
  static const std::vector<event> events = [] {
    std::vector<event> e(std::begin(fixed_events), std::end(fixed_events));
    for (const std::string& n : per_batch().names) e.push_back({n.c_str(), "the reorder shape at this batch size"});
    return e;
  }();
  return events;
}

struct probe final : event_probe {
  explicit probe(const cache_config& c) : config(c) {}
  cache_config config;
  std::size_t before_length = 0;

  void before(const model& m, const op& o) override {
    const auto& beams = model_as<beam_model>(m);
    const bool layer_ok = o.layer >= 0 && static_cast<std::size_t>(o.layer) < config.layers;
    before_length = layer_ok ? beams.length(static_cast<std::size_t>(o.layer)) : 0;
  }
  void after(const model&, const op& o, const expectation& e, event_set& hit) override {
    if (!e.accepted) return;
    if (o.kind == op_kind::update) {
      const std::size_t n = o.k.shape[2], start = static_cast<std::size_t>(o.start);
      if (n > 0 && start + n == config.capacity) hit.set(exact_fill_event);
      if (start < before_length) hit.set(rollback_event);
      if (start < before_length && n == 0) hit.set(truncate_event);
    } else if (o.kind == op_kind::reorder) {
      reordered(classify_reorder(o.index), hit);
    } else if (o.kind == op_kind::decode) {
      if (o.q.shape[1] > config.heads) hit.set(gqa_event);
      masked(classify_mask(o.mask), hit);
    } else if (o.kind == op_kind::prefill) {
      if (o.q.shape[1] > config.heads) hit.set(prefill_gqa_event);
      if (std::find(o.mask.data.begin(), o.mask.data.end(), 0.0) != o.mask.data.end()) hit.set(prefill_masked_event);
      if (o.k.shape[2] >= 2 && before_length > 0) hit.set(prefill_after_held_event);
    }
  }
  void reordered(const reorder_shapes& s, event_set& hit) const {
    const bool shapes[] = {s.fixed_point, s.two_cycle, s.three_cycle, s.repeat};
    const std::size_t index[] = {fixed_point_event, two_cycle_event, three_cycle_event, repeat_event};
    for (std::size_t i = 0; i < per_batch_shapes.size(); ++i) {
      if (!shapes[i]) continue;
      hit.set(index[i]);
      if (config.batch <= max_batch && per_batch().index[config.batch][i]) hit.set(per_batch().index[config.batch][i]);
    }
    if (s.identity) hit.set(identity_event);
    if (s.long_cycle) hit.set(long_cycle_event);
  }
  static void masked(const mask_shapes& s, event_set& hit) {
    const std::pair<bool, std::size_t> shapes[] = {{s.left_padding, left_padding_event},
                                                   {s.hole, hole_event},
                                                   {s.newest_masked, newest_masked_event},
                                                   {s.single_key, single_key_event},
                                                   {s.fully_masked, fully_masked_event}};
    for (const auto& [on, index] : shapes)
      if (on) hit.set(index);
  }
};
}  // namespace

coverage_spec beam_coverage() { return {all_events(), make_probe<probe>}; }

}  // namespace kvconform::kinds
