// A port's answers, read strictly: what a line must hold to count as the answer to a request.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "properties/executor/subject.h"

namespace kvconform {

/// An answer line that is not a valid answer to its request; the message says why and quotes an
/// excerpt of the line (valid UTF-8, at most 200 bytes). The port is then restarted.
struct answer_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The limits of one answer's contents (docs/reliability.md): a refusal message is cut at this
/// many bytes (at a character boundary), and JSON nesting and size are those of every outside
/// JSON (properties/trace/json_codec.h).
inline constexpr std::size_t max_refusal_message_bytes = 2000;

/// Checks the envelope of `line` as the answer to request `id`: JSON within the limits, an
/// object, the same "id", a boolean "ok". Throws answer_error.
void check_answer(std::string_view line, std::int64_t id);

/// The outcome of an op of `kind` that `line` reports (accepted with decode output, weights and
/// preempted handles, or refused with a reason and a message). Throws answer_error.
op_outcome op_answer(std::string_view line, std::int64_t id, op_kind kind);

/// The state an answer to `observe` reports: streams, counters and block reference counts.
/// Throws answer_error.
snapshot observe_answer(std::string_view line, std::int64_t id);

}  // namespace kvconform
