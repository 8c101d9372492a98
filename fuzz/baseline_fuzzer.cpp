// libFuzzer target: a baseline (README, "Baselines") is read strictly against the built-in implementations (only
// baseline_error may come out, naming a line), and what it accepts reads back the same from the file it writes.
#include <cstdint>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "properties/runners/baseline.h"
#include "properties/runners/builtin.h"

namespace kv = kvconform;

namespace {
std::vector<const kv::implementation*> known() {
  std::vector<const kv::implementation*> all;
  for (const kv::implementation& i : kv::builtin_implementations()) all.push_back(&i);
  return all;
}

bool same(const std::vector<kv::baseline_entry>& a, const std::vector<kv::baseline_entry>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].implementation != b[i].implementation || a[i].property != b[i].property || a[i].reason != b[i].reason)
      return false;
  return true;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::vector<const kv::implementation*> impls = known();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<kv::baseline_entry> entries;
  try {
    entries = kv::parse_baseline(text, "input", impls);
  } catch (const kv::baseline_error& e) {
    if (std::string_view(e.what()).substr(0, 6) != "input:") __builtin_trap();  // every refusal names its line
    return 0;
  }
  const std::string written = kv::baseline_file(entries);
  if (!same(kv::parse_baseline(written, "written", impls), entries)) {
    std::cerr << "accepted:\n" << text << "\nwritten:\n" << written << "\nkvconform-fuzz: baseline round-trip\n";
    __builtin_trap();
  }
  return 0;
}
