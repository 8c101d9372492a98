// A port: a cache in another language, driven over a line-delimited JSON protocol on its stdin/stdout.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "properties/executor/subject.h"

namespace kvconform {

/// How to run a port and how long to wait for it.
struct port_options {
  std::vector<std::string> command;          ///< program and arguments
  int timeout_ms = 5000;                     ///< per request, including start-up for the first
  std::size_t max_answer_bytes = 16u << 20;  ///< one answer line
};

/// An implementation of `kind` served by a subprocess speaking the protocol of
/// docs/port-protocol.md (a port_process: its own process group, a deadline on every read and
/// write). One process serves every case; a port that exits, closes its stdout, stops reading its
/// stdin or answers garbage is ended and restarted for the next case, one that hangs is ended and
/// every later request fails at once, so a run never waits more than one time limit per hang. The
/// run's and the property's deadlines (properties/executor/stop.h) bound every wait too. Failures
/// carry the check name "port" and the tail of the port's stderr; when the implementation is
/// destroyed, the port's caches are closed, then its stdin, then its group is ended.
/// docs/reliability.md says what happens on each fault.
implementation make_port_implementation(cache_kind kind, const port_options& o);

/// The JSON Schema every request and answer follows (docs/port-protocol.schema.json is its output).
nlohmann::json port_protocol_schema();

}  // namespace kvconform
