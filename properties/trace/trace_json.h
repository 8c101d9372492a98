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

/// The largest trace file read (docs/reliability.md): its size is checked before it is read.
inline constexpr std::size_t max_trace_bytes = std::size_t{64} << 20;
/// The most cells a trace's config may ask for (kind_spec::cells), unless its kind allows more
/// (kind_spec::max_cells): keeps a hostile file from making a cache allocate gigabytes before the first op.
inline constexpr std::size_t max_config_cells = std::size_t{1} << 24;

/// Serialises a trace. Finite doubles are written as shortest round-trip decimals.
std::string to_json(const trace& t, int indent = 1);
/// Parses a trace; throws trace_format_error on any malformed or out-of-range input.
trace trace_from_json(const std::string& text);
/// Reads and parses a file of at most max_trace_bytes; throws trace_format_error naming the path
/// (also for a missing or unreadable file, a directory, or a FIFO without a writer).
trace load_trace(const std::string& path);
/// Writes a trace file whole or not at all (write_atomic); throws file_error naming the path.
void save_trace(const trace& t, const std::string& path);

}  // namespace kvconform
