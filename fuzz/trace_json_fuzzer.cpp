// libFuzzer target: the JSON trace parser never crashes, and what it accepts round-trips exactly.
#include <cstdint>
#include <iostream>
#include <string>

#include "properties/trace/trace_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  kvconform::trace t;
  try {
    t = kvconform::trace_from_json(text);
  } catch (const kvconform::trace_format_error&) {
    return 0;  // a clear refusal is the expected outcome for most inputs
  }
  const std::string once = kvconform::to_json(t);
  const std::string twice = kvconform::to_json(kvconform::trace_from_json(once));
  if (once != twice) {
    std::cerr << "first serialisation:\n"
              << once << "\nsecond:\n"
              << twice << "\nkvconform-fuzz: trace-json round-trip" << std::endl;
    __builtin_trap();
  }
  return 0;
}
