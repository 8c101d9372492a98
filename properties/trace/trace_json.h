// The JSON codec of traces: bit-exact doubles, "-0.0" kept, "nan"/"inf"/"-inf" as strings.
#pragma once

#include <stdexcept>
#include <string>

#include "properties/trace/trace.h"

namespace kvconform {

/// A trace file or text that is not a valid trace; the message names the offending field.
struct trace_format_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Serialises a trace. Finite doubles are written as shortest round-trip decimals.
std::string to_json(const trace& t, int indent = 1);
/// Parses a trace; throws trace_format_error on any malformed or out-of-range input.
trace trace_from_json(const std::string& text);
/// Reads and parses a file; throws trace_format_error (also for an unreadable file).
trace load_trace(const std::string& path);
/// Writes a trace file atomically enough for a regression store (write, then rename).
void save_trace(const trace& t, const std::string& path);

}  // namespace kvconform
