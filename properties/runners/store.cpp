// The regression store: content-addressed trace files written whole or not at all, checked before a run uses them.
#include "properties/runners/store.h"

#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "properties/trace/file_io.h"
#include "properties/trace/trace_json.h"

namespace kvconform {

namespace {
namespace fs = std::filesystem;

/// A temporary older than this belongs to a writer that was killed outright (a write takes milliseconds).
constexpr auto stale_temporary_age = std::chrono::minutes(10);

/// Removes the temporaries of killed writers in `dir`.
void remove_stale_temporaries(const fs::path& dir) {
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!is_temporary_name(e.path().filename().string())) continue;
    const auto written = fs::last_write_time(e.path(), ec);
    if (!ec && now - written > stale_temporary_age) fs::remove(e.path(), ec);
  }
}

/// Writes and removes a probe file in `dir`: a store that cannot take a file fails now.
void probe(const fs::path& dir) {
  const fs::path p = dir / (".write-check." + std::to_string(::getpid()));
  write_atomic(p.string(), "kvconform\n");
  std::error_code ec;
  fs::remove(p, ec);
}

std::string known_properties(cache_kind kind) {
  std::string names;
  for (const property* p : properties_of(kind)) names += (names.empty() ? "" : ", ") + p->name;
  return names;
}
}  // namespace

const property* replay_property(const trace& t, const implementation& impl, const std::string& where) {
  auto bad = [&](const std::string& field, const std::string& what) {
    throw trace_format_error(where + ": " + field + ": " + what);
  };
  const cache_kind kind = impl.kind;
  if (t.config.kind != kind)
    bad("config.kind", std::string("a ") + to_string(t.config.kind) + " trace cannot run on " + impl.name +
                           ", of the " + to_string(kind) + " kind");
  const property* p = t.property.empty() ? nullptr : find_property(t.property, kind);
  if (!t.property.empty() && !p)
    bad("property", "\"" + t.property + "\" is not a property of the " + to_string(kind) +
                        " kind (known: " + known_properties(kind) + ")");
  if (t.drive_seed && (!p || !p->drive))
    bad("drive", "only the trace of a driver property has a driver's seed and size, and " +
                     (p ? "\"" + p->name + "\" has no driver" : std::string("this trace names no property")));
  return p;
}

regression_store::regression_store(std::string folder) : folder_(std::move(folder)) {
  if (folder_.empty()) return;
  std::error_code ec;
  fs::create_directories(folder_, ec);
  if (!fs::is_directory(folder_))
    throw file_error("cannot use the store " + folder_ + ": " + (ec ? ec.message() : "not a folder"));
  probe(folder_);
  remove_stale_temporaries(folder_);
  for (const auto& e : fs::directory_iterator(folder_, ec))
    if (e.is_directory(ec)) remove_stale_temporaries(e.path());
}

void regression_store::check(const std::vector<const implementation*>& impls, const std::string& glob) const {
  if (!enabled()) return;
  for (const implementation* impl : impls) {
    if (fs::is_directory(fs::path(folder_) / impl->name)) probe(fs::path(folder_) / impl->name);
    for (const property* p : properties_of(impl->kind))
      if (fnmatch(glob.c_str(), p->name.c_str(), 0) == 0) entries(*impl, *p);
  }
}

std::vector<stored_trace> regression_store::entries(const implementation& impl, const property& p) const {
  const fs::path dir = fs::path(folder_) / impl.name;
  std::error_code ec;
  if (!enabled() || !fs::is_directory(dir, ec)) return {};
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() == ".json" && name.rfind(p.name + "-", 0) == 0) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<stored_trace> out;
  for (const fs::path& f : files) {
    std::string text;
    try {
      text = read_bounded(f.string(), max_trace_bytes);
    } catch (const file_error& e) {
      throw trace_format_error(e.what());
    }
    out.push_back(parse_entry(text, f.string(), impl, p));
  }
  return out;
}

stored_trace regression_store::parse_entry(std::string_view text, const std::string& path, const implementation& impl,
                                           const property& p) {
  stored_trace s{path, {}};
  try {
    s.t = trace_from_json(std::string(text));
  } catch (const trace_format_error& e) {
    throw trace_format_error(path + ": " + e.what());
  }
  if (s.t.property != p.name)
    throw trace_format_error(path + ": property: \"" + s.t.property + "\", but the file is stored under \"" + p.name +
                             "\"");
  replay_property(s.t, impl, path);
  return s;
}

std::string regression_store::save(const trace& t) const {
  const std::string path =
      (fs::path(folder_) / t.implementation / (t.property + "-" + content_hash(to_json(t)).substr(0, 12) + ".json"))
          .string();
  save_trace(t, path);
  return path;
}

}  // namespace kvconform
