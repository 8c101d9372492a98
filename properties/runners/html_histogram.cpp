// `gate --html`: the err/bound histograms of an implementation as inline SVG bar charts.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>

#include "properties/runners/html_report.h"
#include "properties/runners/report_text.h"

namespace kvconform {

namespace {
/// The chart's geometry in pixels: a slot per bin, the plot above the axis labels.
constexpr int left = 34, top = 12, plot_h = 80, slot = 18, bar_w = 15;
constexpr int width = left + slot * static_cast<int>(ratio_histogram::bins) + 8, height = top + plot_h + 30;

/// Edge k of ratio_histogram::edges as text: "1e-6", "3.2e-6", ..., "3.2e-1", "1".
std::string edge_label(std::size_t k) {
  const int exponent = -6 + static_cast<int>(k / 2);
  if (exponent == 0) return "1";
  return std::string(k % 2 ? "3.2" : "1") + "e" + std::to_string(exponent);
}

/// What bin `b` holds, for its tooltip.
std::string bin_label(std::size_t b) {
  if (b == 0) return "err/bound < 1e-6";
  if (b == ratio_histogram::bins - 1) return "failed (err/bound > 1, or not finite)";
  return edge_label(b - 1) + " ≤ err/bound " + (b == ratio_histogram::bins - 2 ? "≤ " : "< ") + edge_label(b);
}

/// The highest non-empty bin's label, or "" for an empty histogram.
std::string worst_bin(const ratio_histogram& h) {
  for (std::size_t b = ratio_histogram::bins; b-- > 0;)
    if (h.counts[b]) return bin_label(b);
  return "";
}

/// The axes: the baseline, the edges 1e-6, 1e-4, 1e-2 and 1 labelled, the limit at 1 dashed (the bins
/// outside them are named by their tooltips).
void axes(std::ostringstream& s, std::uint64_t highest) {
  const int base = top + plot_h;
  s << "<line class=\"axis\" x1=\"" << left << "\" y1=\"" << base << "\" x2=\"" << width - 8 << "\" y2=\"" << base
    << "\"/><line class=\"axis\" x1=\"" << left << "\" y1=\"" << top << "\" x2=\"" << left << "\" y2=\"" << base
    << "\"/>";
  s << "<text x=\"" << left - 3 << "\" y=\"" << top + 3 << "\" text-anchor=\"end\">" << highest << "</text><text x=\""
    << left - 3 << "\" y=\"" << base << "\" text-anchor=\"end\">0</text>";
  const int limit_x = left + slot * static_cast<int>(ratio_histogram::bins - 1);
  s << "<line class=\"limit\" x1=\"" << limit_x << "\" y1=\"" << top - 4 << "\" x2=\"" << limit_x << "\" y2=\""
    << base + 3 << "\"/>";
  for (const std::size_t k : {0, 4, 8, 12})
    s << "<text x=\"" << left + slot * static_cast<int>(k + 1) << "\" y=\"" << base + 12 << "\" text-anchor=\"middle\">"
      << edge_label(k) << "</text>";
  s << "<text x=\"" << left + slot * 7 << "\" y=\"" << base + 25 << "\" text-anchor=\"middle\">err/bound</text>";
}
}  // namespace

std::string histogram_svg(const ratio_histogram& h) {
  std::uint64_t highest = 0;
  for (const std::uint64_t c : h.counts) highest = std::max(highest, c);
  std::ostringstream s;
  s << "<svg class=\"hist\" width=\"" << width << "\" height=\"" << height << "\" viewBox=\"0 0 " << width << " "
    << height << "\" role=\"img\" aria-label=\"err/bound histogram of " << h.total() << " decodes\">";
  axes(s, highest);
  for (std::size_t b = 0; b < ratio_histogram::bins; ++b) {
    if (h.counts[b] == 0) continue;
    // Heights on a log scale, at least a pixel, so that one decode near or past the bound shows beside thousands.
    const double share = std::log1p(static_cast<double>(h.counts[b])) / std::log1p(static_cast<double>(highest));
    const long bar_h = std::max(1L, std::lround(plot_h * share));
    const char* tone = b == ratio_histogram::bins - 1 ? " over" : b == ratio_histogram::bins - 2 ? " near" : "";
    s << "<rect class=\"bar" << tone << "\" x=\"" << left + slot * static_cast<int>(b) + 2 << "\" y=\""
      << top + plot_h - bar_h << "\" width=\"" << bar_w << "\" height=\"" << bar_h << "\"><title>"
      << markup_escape(bin_label(b)) << ": " << h.counts[b] << " decode" << (h.counts[b] == 1 ? "" : "s")
      << "</title></rect>";
  }
  s << "</svg>";
  return s.str();
}

namespace {
void figure(const std::string& label, const ratio_histogram& h, std::ostringstream& s) {
  s << "<figure>" << histogram_svg(h) << "<figcaption><b>" << markup_escape(label) << "</b>: " << h.total() << " decode"
    << (h.total() == 1 ? "" : "s") << "; highest: " << markup_escape(worst_bin(h)) << "</figcaption></figure>\n";
}
}  // namespace

std::string histogram_section(const impl_report& i) {
  class_histograms by_class;
  ratio_histogram all, searched;
  for (const property_report& p : i.properties) {
    for (const auto& [label, h] : p.ratios) by_class[label].merge(h), all.merge(h);
    searched.merge(p.search_stats.ratios);
  }
  std::ostringstream s;
  s << "<h3>err/bound by input class</h3>\n";
  if (all.total() == 0 && searched.total() == 0) {
    s << "<p>No decode was judged numerically.</p>\n";
    return s.str();
  }
  s << "<p><small>Each numeric decode's err/bound (one per attention problem) over the random cases up to the first "
       "failing one, by the input class of its trace (docs/numerics.md §4.1), and over the targeted search's traces; "
       "half-decade bins, bar heights on a log scale (hover a bar for its count); right of the dashed line fails."
       "</small></p>\n<div class=\"hists\">\n";
  if (all.total()) figure("all random cases", all, s);
  for (const auto& [label, h] : by_class) figure(label, h, s);
  if (searched.total()) figure("(targeted search)", searched, s);
  s << "</div>\n";
  return s.str();
}

}  // namespace kvconform
