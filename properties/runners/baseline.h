// Baselines: the failures a gate expects, so that only a new failure fails the run (README, "Baselines").
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "properties/runners/gate.h"

namespace kvconform {

/// A baseline that cannot be used; the message names the file and, for a bad line, its number ("b.csv:3: ...").
struct baseline_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A baseline file's size limit (docs/reliability.md §2), checked before it is read.
inline constexpr std::size_t max_baseline_bytes = std::size_t{16} << 20;

/// One known failure: a cell of the matrix and why it fails; `line` is where the file lists it. `policies` are those
/// the implementation declared when the failure was listed: under others the entry holds nothing.
struct baseline_entry {
  std::string implementation, property, reason;
  std::size_t line = 0;
  policy_set policies;
};

/// Reads a baseline: text, one known failure a line as `implementation,property,reason` (the reason is the rest of
/// the line, commas and all, and may be empty; spaces around each field are dropped), the implementation followed
/// by the policies it declared in brackets when it declared any (`port [hit_limit=all_but_last],...`); empty lines and
/// lines whose first character other than a space is `#` are skipped. Throws file_error when the file cannot be read or
/// is over max_baseline_bytes, and baseline_error naming the line for a line without two commas, an empty name, an
/// implementation that is not in `known`, a property that is not of its kind, or a cell listed twice.
std::vector<baseline_entry> read_baseline(const std::string& path, const std::vector<const implementation*>& known);
/// The same for a baseline's text; `name` is the file the messages name.
std::vector<baseline_entry> parse_baseline(std::string_view text, const std::string& name,
                                           const std::vector<const implementation*>& known);
/// A baseline file holding `entries` in their order (a comment, then a line each), which parse_baseline reads back.
std::string baseline_file(const std::vector<baseline_entry>& entries);

/// Marks each cell the baseline lists with its reason (property_report::baseline): a FAIL becomes a KNOWN FAILURE,
/// which fails no run; a PASS is reported fixed. Cells it does not list are left as they are, and so are cells whose
/// implementation now declares other policies than the entry records (the cell's `skipped` says so).
void apply_baseline(std::vector<impl_report>& r, const std::vector<baseline_entry>& entries);

/// Cells the baseline lists that passed (fixed: the baseline is stale).
std::size_t fixed_cells(const std::vector<impl_report>& r);

/// The baseline of a run, as read_baseline reads it, sorted by implementation and property: every FAIL and KNOWN
/// FAILURE cell, with the baseline's reason for a known one and the first line of the failure's message for a new
/// one; and the entries of `previous` whose cells the run did not judge (not run, NOT SUPPORTED, INTERRUPTED).
/// Throws baseline_error for an implementation name that a baseline line cannot hold (a comma, a line break).
std::string baseline_text(const std::vector<impl_report>& r, const std::vector<baseline_entry>& previous);

}  // namespace kvconform
