// The gate's report as one self-contained HTML page: the matrix, failures, coverage and err/bound histograms.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "properties/runners/gate.h"

namespace kvconform {

/// The whole page (`gate --html`, docs/design.md §7): the matrix, every failure's shrunk trace with its
/// replay command, the coverage gaps, and per implementation its err/bound histograms by input class
/// and its coverage table. Inline CSS and SVG only: no script, and a Content-Security-Policy that
/// forbids loading anything, so it opens the same offline, attached to a CI run or mailed.
/// Deterministic: the same reports give the same bytes (no clock, no timing but the cells' own).
std::string html_report(const std::vector<impl_report>& r);

/// An implementation's err/bound histograms: all its random cases, each input class, and the targeted
/// search's traces, each as an inline SVG bar chart (properties/runners/html_histogram.cpp).
std::string histogram_section(const impl_report& i);
/// One histogram as an inline SVG: a bar per non-empty bin, heights on a log scale, a tooltip per bar.
std::string histogram_svg(const ratio_histogram& h);

}  // namespace kvconform
