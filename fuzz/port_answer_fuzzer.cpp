// libFuzzer target: a port's answer line (to an op or to observe, picked by the first byte) is read strictly; an
// observation is then compared with every kind's model state. Only answer_error may come out.
#include <cstdint>
#include <iterator>
#include <string_view>

#include "properties/executor/kind_table.h"
#include "properties/port/port_answer.h"
#include "properties/trace/kind_spec.h"
#include "properties/trace/op_vocabulary.h"

namespace kv = kvconform;

namespace {
/// Each kind's empty model state, as the executor compares an observation with it.
const std::vector<kv::snapshot>& model_states() {
  static const std::vector<kv::snapshot> states = [] {
    std::vector<kv::snapshot> out;
    for (const kv::kind_spec* k : kv::kind_specs()) {
      kv::cache_config c{.kind = k->kind,
                         .capacity = 2,
                         .d_k = 2,
                         .d_v = 2,
                         .block_size = 1,
                         .layers = 1,
                         .batch = 1,
                         .heads = 1,
                         .q_heads = 1};
      out.push_back(kv::make_model(c, {})->observe());
    }
    return out;
  }();
  return states;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view line(reinterpret_cast<const char*>(data) + 1, size - 1);
  constexpr unsigned ops = std::size(kv::op_infos);  // an answer to each op of the vocabulary, then observe, check
  const unsigned pick = data[0] % (ops + 2);
  try {
    if (pick < ops) {
      (void)kv::op_answer(line, 1, static_cast<kv::op_kind>(pick));
    } else if (pick == ops) {
      const kv::snapshot s = kv::observe_answer(line, 1);
      for (const kv::snapshot& model : model_states()) (void)kv::diff(model, s), (void)kv::diff(s, model);
      (void)kv::diff(s, s);
    } else {
      kv::check_answer(line, 1);
    }
  } catch (const kv::answer_error&) {}
  return 0;
}
