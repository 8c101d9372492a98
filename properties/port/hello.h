// The handshake of a port (docs/port-protocol.md §3): what it serves, with which profile and capabilities.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "oracle/numeric/numeric_profile.h"
#include "properties/executor/subject.h"

namespace kvconform {

/// The protocol version this harness speaks (and 1, for ports that predate the handshake).
inline constexpr int port_protocol = 2;

/// What a port offers for one kind.
struct kind_offer {
  numeric_profile profile;
  capability_set capabilities;
  policy_set policies;                        ///< its declared choices (docs/design.md §2.4), normalised
  std::map<std::string, std::size_t> limits;  ///< the largest config sizes it serves, by field name
};

/// A port's answer to `hello`.
struct port_hello {
  int protocol = 1;
  std::string name;
  bool digest = false;
  std::map<std::string, kind_offer> kinds;  ///< empty for a version 1 port: every kind, default profile
};

/// Reads a `hello` answer; throws trace_format_error naming the field for a malformed one.
port_hello parse_hello(const nlohmann::json& answer);
/// The handshake of a version 1 port: no digests, the default profile, decode only.
port_hello version_1_hello();
/// Sets `impl`'s profile, capabilities and config limits for `kind` from the handshake, or marks it unavailable
/// (every property NOT SUPPORTED) when the port does not serve that kind.
void apply_hello(const port_hello& h, cache_kind kind, implementation& impl);
/// Why a C library with handshake `h` cannot be served (a kind or a capability no function of <kvconform/c_port.h>
/// carries: docs/port-protocol.md §12), or "".
std::string beyond_c_abi(const port_hello& h);

}  // namespace kvconform
