// Writes each fuzz target's seed corpus from the gate's own traces, or encodes one JSON trace as a fuzz input.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "fuzz/byte_trace.h"
#include "properties/generate/run_property.h"
#include "properties/runners/builtin.h"
#include "properties/trace/trace_json.h"

namespace kv = kvconform;

namespace {
void write(const std::filesystem::path& dir, const std::string& bytes) {
  std::filesystem::create_directories(dir);
  std::ofstream(dir / kv::content_hash(bytes), std::ios::binary) << bytes;  // the same input is written once
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " OUT_DIR [CASES_PER_PROPERTY]\n       " << argv[0]
              << " --encode TRACE.json OUT_FILE\n";
    return 2;
  }
  if (std::string(argv[1]) == "--encode" && argc == 4) {
    try {
      const kv::trace t = kv::load_trace(argv[2]);
      if (!kv::fuzz::encodable(t))
        std::cerr << "warning: the trace exceeds the fuzz limits; the input decodes to a clamped trace\n";
      const auto bytes = kv::fuzz::encode_trace(t);
      std::ofstream(argv[3], std::ios::binary)
          .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
      return 0;
    } catch (const std::exception& e) {
      std::cerr << e.what() << "\n";
      return 2;
    }
  }
  const std::filesystem::path out = argv[1];
  const int cases = argc > 2 ? std::atoi(argv[2]) : 2;
  constexpr std::size_t wanted = 20;  // seeds per target; more cases are run for kinds whose traces rarely fit
  std::size_t written = 0, skipped = 0;
  for (const kv::implementation& impl : kv::builtin_implementations()) {
    if (impl.group != kv::impl_group::reference) continue;
    const std::string target = std::string(kv::to_string(impl.kind)) + "_fuzzer";
    std::size_t mine = 0;
    kv::run_options o;
    o.max_size = 12;  // short traces: fuzzing mutates them, it does not need them long
    o.on_trace = [&](const kv::trace& t) {
      if (!kv::fuzz::encodable(t))
        return void(++skipped);  // outside the fuzz limits: it would not decode back to itself
      const auto bytes = kv::fuzz::encode_trace(t);
      write(out / target, std::string(bytes.begin(), bytes.end()));
      write(out / KVCONFORM_TRACE_PARSER_FUZZER, kv::to_json(t, -1));
      written += 2, ++mine;
    };
    for (o.cases = cases; mine < wanted && o.cases <= 64; o.cases *= 2)
      for (const kv::property* p : kv::properties_of(impl.kind))
        if (!p->fixed) kv::run_property(*p, impl, o);
  }
  std::cout << "wrote " << written << " seeds, skipped " << skipped << " traces outside the fuzz limits\n";
  return 0;
}
