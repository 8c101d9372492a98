// What every kind's fuzz target does with one input: decode, execute, and on divergence report and trap.
#pragma once

#include <cstddef>
#include <cstdint>

#include "properties/trace/trace.h"

namespace kvconform::fuzz {

/// Decodes `data` into a trace of `kind` and runs it through the executor against the
/// implementation named by $KVCONFORM_FUZZ_IMPL (default: the kind's reference). On any
/// divergence it prints the trace and both results, writes the trace as JSON (into
/// $KVCONFORM_FUZZ_ARTIFACTS, default the working directory) and traps after a stable
/// one-line signature "kvconform-fuzz: KIND CHECK at OP", so equal bugs group.
int run_input(cache_kind kind, const std::uint8_t* data, std::size_t size);

}  // namespace kvconform::fuzz
