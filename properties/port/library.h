// A cache behind the C ABI of include/kvconform/c_port.h, driven in process (docs/port-protocol.md §12).
#pragma once

#include <string>

#include "properties/executor/subject.h"

namespace kvconform {

/// An implementation of `kind` served by the shared library at `path` through the C ABI: the same
/// generators, shrinking and checks as a port over a pipe, at in-process speed (a crash in the
/// library is a crash of the harness). Throws std::invalid_argument when the library cannot be
/// loaded, lacks a function, or speaks another ABI or protocol version (both named).
implementation make_library_implementation(cache_kind kind, const std::string& path);

}  // namespace kvconform
