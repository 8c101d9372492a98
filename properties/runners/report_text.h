// What the terminal, JUnit, JSON and HTML reports of a gate run word alike: ratios and tallies.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "properties/runners/gate.h"

namespace kvconform {

/// Correct code measures below ~0.04 of the bound (about 0.25 for bf16-like); above 0.5 it is
/// halfway to failing and deserves a look.
inline constexpr double warn_ratio = 0.5;

/// An err/bound as the matrix shows it: two decimals, scientific ("3.52e-02").
std::string ratio_text(double ratio);
/// The worst err/bound of `d`, "-" when no decode was judged numerically.
std::string ratio_text(const decode_stats& d);
/// The targeted search's worst err/bound and its traces (docs/numerics.md §4.4), "-" where it did not run.
std::string search_text(const property_report& p);
/// The highest err/bound the cell saw, random cases and search together.
double highest_ratio(const property_report& p);

/// `raw` made safe as XML or HTML text or a quoted attribute value (JUnit, `--html`): first valid_utf8
/// (properties/trace/utf8.h), as every report does, so that no byte a port sent can break the file,
/// then & < > " ' as entities.
std::string markup_escape(std::string_view raw);

/// Counts of a run's cells by status; `fixed` counts the PASS cells a baseline lists.
struct tally {
  int passed = 0, failed = 0, unsupported = 0, interrupted = 0, known = 0, fixed = 0;
  double seconds = 0;
  explicit tally(const std::vector<property_report>& cells);
};
/// "12 passed, 1 failed, 0 not supported", then the interrupted, known failures and fixed cells there are.
std::string counts_text(const tally& t);

/// Every cell of the run, in matrix order.
std::vector<property_report> all_cells(const std::vector<impl_report>& r);

/// The coverage counts of an implementation's whole row (docs/design.md §4.6).
coverage_counts row_total(const impl_report& i);
/// "hits/traces (pct%)".
std::string share(std::size_t hits, std::size_t traces);

}  // namespace kvconform
