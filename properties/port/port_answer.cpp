// Reading a port's answer: the envelope (id, ok), then an op's outcome or an observation, each field checked.
#include "properties/port/port_answer.h"

#include "properties/trace/json_codec.h"
#include "properties/trace/refusal.h"
#include "properties/trace/utf8.h"

namespace kvconform {

namespace {
using codec::json;

/// The parsed answer, or answer_error naming what is wrong with an excerpt of the line.
codec::parsed_json envelope(std::string_view line, std::int64_t id) {
  const std::string excerpt = ": " + valid_utf8(line, 200);
  codec::parsed_json a{json()};
  try {
    a = codec::parse_limited(line, "");
  } catch (const trace_format_error& e) {
    const std::string why = e.what();
    throw answer_error((why.rfind("not valid JSON", 0) == 0 ? "the port answered with something that is not JSON"
                                                            : "the port's answer is " + why) +
                       excerpt);
  }
  if (!a.is_object() || !a.contains("id") || !a.contains("ok") || !a["ok"].is_boolean())
    throw answer_error("the port's answer lacks \"id\" or a boolean \"ok\"" + excerpt);
  if (a["id"] != id)
    throw answer_error("the port answered id " + valid_utf8(a["id"].dump(), 40) + " to request " + std::to_string(id) +
                       " (out of order)");
  return a;
}

/// Runs `read` over the answer; a malformed field (the codec's or nlohmann's errors) is an answer_error.
template <class Read>
auto fields(const char* what, Read&& read) {
  try {
    return read();
  } catch (const answer_error&) {
    throw;
  } catch (const std::exception& e) {
    throw answer_error(std::string("malformed ") + what + ": " + valid_utf8(e.what(), 400));
  }
}

std::vector<std::int64_t> integers(const json& a, const std::string& where) {
  if (!a.is_array()) codec::bad(where, "expected an array of integers");
  std::vector<std::int64_t> out;
  for (const json& x : a) out.push_back(codec::integer_from(x, where));
  return out;
}

/// A stream's name in full, so that it compares with the model's: a tiered entry is named by its chain's tokens
/// (docs/kinds/tiered.md), hundreds of bytes for a long chain. The answer's own size limit bounds it.
std::string stream_name(const json& js) {
  if (!js.contains("name")) return "";
  if (!js["name"].is_string()) codec::bad("stream.name", "expected a string");
  return valid_utf8(js["name"].get<std::string>());
}

stream stream_from(const json& js) {
  stream st;
  st.name = stream_name(js);
  const tensor k = codec::tensor_from(codec::field(js, "keys", "stream"), "stream.keys");
  const tensor v = codec::tensor_from(codec::field(js, "values", "stream"), "stream.values");
  if (k.shape.size() != 2 || v.shape.size() != 2) codec::bad("stream", "keys and values must be 2-D");
  st.d_k = k.shape[1], st.d_v = v.shape[1], st.keys = k.data, st.values = v.data;
  if (js.contains("positions")) st.positions = integers(js["positions"], "positions");
  if (js.contains("blocks")) st.blocks = integers(js["blocks"], "blocks");
  for (auto [field, numbers] : {std::pair{"key_scales", &st.key_groups.scales},
                                {"key_zeros", &st.key_groups.zeros},
                                {"value_scales", &st.value_groups.scales},
                                {"value_zeros", &st.value_groups.zeros}})
    if (js.contains(field)) *numbers = codec::numbers_from(js[field], field);
  return st;
}

/// A stream answered as a digest: its name, blocks, row count and digest.
stream digest_stream_from(const json& js, std::vector<std::pair<std::size_t, std::uint64_t>>& digests) {
  stream st;
  st.name = stream_name(js);
  if (js.contains("blocks")) st.blocks = integers(js["blocks"], "blocks");
  const std::int64_t rows = codec::integer_from(codec::field(js, "rows", "stream"), "stream.rows");
  if (rows < 0) codec::bad("stream.rows", "expected a count of rows, at least 0");
  const json& d = codec::field(js, "digest", "stream");
  const std::string hex = d.is_string() ? d.get<std::string>() : "";
  if (hex.size() != 16 || hex.find_first_not_of("0123456789abcdef") != std::string::npos)
    codec::bad("stream.digest", "expected 16 lowercase hexadecimal digits");
  digests.emplace_back(static_cast<std::size_t>(rows), std::stoull(hex, nullptr, 16));
  return st;
}

/// The observation in `a`, each stream read by `read_stream`.
template <class ReadStream>
snapshot observation(const json& a, ReadStream&& read_stream) {
  if (!a["ok"].get<bool>()) throw answer_error("the port refused to observe its state");
  return fields("observation", [&] {
    snapshot s;
    const json& streams = codec::field(a, "streams", "observe");
    if (!streams.is_array()) codec::bad("observe.streams", "expected an array");
    for (const json& js : streams) s.streams.push_back(read_stream(js));
    const json& counters = codec::field(a, "counters", "observe");
    if (!counters.is_object()) codec::bad("observe.counters", "expected an object");
    for (const auto& [name, value] : counters.items())
      s.counters.emplace_back(valid_utf8(name, 200), codec::integer_from(value, "counters." + valid_utf8(name, 200)));
    if (a.contains("block_refs")) {
      if (!a["block_refs"].is_array()) codec::bad("observe.block_refs", "expected an array of [block, count] pairs");
      for (const json& r : a["block_refs"]) {
        if (!r.is_array() || r.size() != 2) codec::bad("observe.block_refs", "expected [block, count] pairs");
        s.block_refs.emplace_back(codec::integer_from(r[0], "block_refs"), codec::integer_from(r[1], "block_refs"));
      }
    }
    return s;
  });
}
}  // namespace

void check_answer(std::string_view line, std::int64_t id) { envelope(line, id); }

void open_answer(std::string_view line, std::int64_t id) {
  const codec::parsed_json a = envelope(line, id);
  if (a["ok"].get<bool>()) return;
  const std::string why = a.contains("message") && a["message"].is_string()
                              ? ": " + valid_utf8(a["message"].get<std::string>(), max_refusal_message_bytes)
                              : "";
  if (a.contains("error") && a["error"] == "unsupported")
    throw subject_failure("not-supported", "the port does not support this config" + why);
  throw subject_failure("port", "the port refused to open the cache" + why);
}

op_outcome op_answer(std::string_view line, std::int64_t id, op_kind kind) {
  const codec::parsed_json a = envelope(line, id);
  return fields((std::string("answer to ") + to_string(kind)).c_str(), [&] {
    op_outcome r;
    r.accepted = a["ok"].get<bool>();
    if (!r.accepted) {
      const std::string error = a.contains("error") && a["error"].is_string() ? a["error"].get<std::string>() : "";
      r.unsupported = error == "unsupported";
      r.reason = refusal_from_name(error);
      if (a.contains("message") && a["message"].is_string())
        r.message = valid_utf8(a["message"].get<std::string>(), max_refusal_message_bytes);
      return r;
    }
    if (a.contains("output")) r.output = codec::numbers_from(a["output"], "output");
    if (a.contains("weights")) r.weights = codec::numbers_from(a["weights"], "weights");
    if (a.contains("preempted")) r.preempted = integers(a["preempted"], "preempted");
    return r;
  });
}

snapshot observe_answer(std::string_view line, std::int64_t id) { return observation(envelope(line, id), stream_from); }

digest_observation digest_answer(std::string_view line, std::int64_t id) {
  digest_observation d;
  d.state = observation(envelope(line, id), [&](const json& js) { return digest_stream_from(js, d.digests); });
  return d;
}

}  // namespace kvconform
