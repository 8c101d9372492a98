// The regression store: the failing traces of each implementation and property, safe to share between gates.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "properties/generate/property.h"

namespace kvconform {

/// A stored trace that was read and checked.
struct stored_trace {
  std::string path;
  trace t;
};

/// The folder `<store>/<implementation>/<property>-<hash>.json` of failing traces (docs/design.md
/// §7, docs/reliability.md "The store"). Every save writes a whole file or none (write_atomic:
/// a temporary with a unique name, fsync, size check, rename, folder fsync), so several gates can
/// share one store: none sees a partial entry and none loses an entry to another.
class regression_store {
 public:
  /// A store in `folder` ("" disables it). Opening creates the folder, checks that a file can be
  /// written in it (a probe written and removed) and removes temporaries a writer killed
  /// outright left behind (older than ten minutes); it throws file_error naming the folder, so an
  /// unwritable store stops the run before any test instead of losing its failures after.
  explicit regression_store(std::string folder);

  bool enabled() const { return !folder_.empty(); }
  const std::string& folder() const { return folder_; }

  /// Reads every stored trace the run will replay (of `impls`, for properties matching `glob`)
  /// and checks each as `entries` does, before any test runs; throws trace_format_error naming
  /// the file and the field.
  void check(const std::vector<const implementation*>& impls, const std::string& glob) const;

  /// The stored traces of (impl, p) in name order, each checked against them: its config of
  /// impl's kind, its property p, a driver's seed only for a driver property. An entry that does
  /// not read throws trace_format_error naming the file and the field.
  std::vector<stored_trace> entries(const implementation& impl, const property& p) const;

  /// `text`, read from `path`, as an entry of (impl, p), checked as `entries` checks each file;
  /// throws trace_format_error naming `path` and the field.
  static stored_trace parse_entry(std::string_view text, const std::string& path, const implementation& impl,
                                  const property& p);

  /// Saves `t` under its content hash (the same minimal trace found twice is stored once) and
  /// returns the path; throws file_error naming it when the disk refuses.
  std::string save(const trace& t) const;

 private:
  std::string folder_;
};

/// The property a trace names, checked as a replay on `impl` needs it: the trace's config of
/// impl's kind, its property (if any) one of that kind's catalogue, a driver's seed and size
/// only with a driver property. Throws trace_format_error naming `where` and the field.
const property* replay_property(const trace& t, const implementation& impl, const std::string& where);

}  // namespace kvconform
