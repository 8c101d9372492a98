// The HTML report: every text escaped and valid UTF-8, failures with their traces, histograms as SVG bars, and the
// histograms' exact trip through a -j worker.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "properties/runners/builtin.h"
#include "properties/runners/html_report.h"
#include "properties/runners/parallel.h"
#include "properties/runners/report_text.h"

namespace kv = kvconform;

namespace {
std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

kv::ratio_histogram histogram(std::initializer_list<double> ratios) {
  kv::ratio_histogram h;
  for (const double r : ratios) h.add(r);
  return h;
}

/// A run of one implementation with a hostile name: a passing cell with histograms, and a failing one.
std::vector<kv::impl_report> hostile_run(kv::implementation& impl) {
  impl = *kv::find_implementation("flat");
  impl.name = "<script>alert('x')</script> & \xff\x1b[31m";
  kv::property_report pass;
  pass.property = "decode_within_bound", pass.cases = 3;
  pass.ratios["moderate"] = histogram({0, 1e-3, 2e-3}), pass.ratios["peaked"] = histogram({0.4});
  pass.search_cases = 2, pass.search_stats.numeric = 2, pass.search_stats.worst_ratio = 0.3;
  pass.search_stats.ratios = histogram({0.2, 0.3});
  kv::property_report fail;
  fail.property = "exact_fill", fail.result = kv::status::fail, fail.cases = 1, fail.source = "generated";
  fail.fail = kv::failure{1, "decode", "decode-bound", "output[0] = 2 > bound </pre>"};
  fail.message = fail.fail->signature() + ": " + fail.fail->message;
  fail.ratios["ramp"] = histogram({0.01, 7});
  kv::trace t;
  t.config = {kv::cache_kind::flat, 4, 2, 2};
  t.ops = {kv::op{.kind = kv::op_kind::append, .k = kv::tensor::vector({1, 0}), .v = kv::tensor::vector({5, 6})},
           kv::op{.kind = kv::op_kind::decode, .q = kv::tensor::vector({1, 0})}};
  fail.counterexample = t, fail.saved_path = "store/x y.json", fail.replay = "kvconform replay 'store/x y.json'";
  return {kv::impl_report{&impl, {pass, fail}}};
}
}  // namespace

TEST(HtmlReport, EscapesMarkupAndKeepsOnlyValidUtf8) {
  EXPECT_EQ(kv::markup_escape("<a href=\"x\" title='y'>&</a>"),
            "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
  EXPECT_EQ(kv::markup_escape("caf\xc3\xa9 \xe2\x89\xa4 1"), "caf\xc3\xa9 \xe2\x89\xa4 1");  // UTF-8 passes as it is
  EXPECT_EQ(kv::markup_escape("a\xff"
                              "b\xc3"),
            "a\\xffb\\xc3");                                   // as valid_utf8 makes it
  EXPECT_EQ(kv::markup_escape("\x1b[31m<"), "\\x1b[31m&lt;");  // no terminal escapes either
  EXPECT_EQ(kv::markup_escape("line\nand\ttab"), "line\nand\ttab");
}

TEST(HtmlReport, AHostileNameNeverBecomesMarkup) {
  kv::implementation impl;
  const std::string page = kv::html_report(hostile_run(impl));
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("\xff"), std::string::npos);
  EXPECT_EQ(page.find('\x1b'), std::string::npos);
  EXPECT_NE(page.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; \\xff\\x1b[31m"), std::string::npos);
  EXPECT_NE(page.find("bound &lt;/pre&gt;"), std::string::npos);  // a message cannot close the trace's <pre>
  EXPECT_EQ(page.find("://"), std::string::npos);                 // nothing to fetch, not even a namespace
  EXPECT_NE(page.find("default-src 'none'"), std::string::npos);
}

TEST(HtmlReport, TheMatrixLinksEachFailureToItsTraceAndReplayCommand) {
  kv::implementation impl;
  const std::string page = kv::html_report(hostile_run(impl));
  EXPECT_NE(page.find("<td class=\"pass\">PASS</td>"), std::string::npos);
  EXPECT_NE(page.find("<td class=\"fail\"><a href=\"#fail-0-1\">FAIL</a></td>"), std::string::npos);
  EXPECT_NE(page.find("<section id=\"fail-0-1\">"), std::string::npos);
  EXPECT_NE(page.find("<mark>  1  decode"), std::string::npos);  // the op it fails at, marked
  EXPECT_NE(page.find("replay: <code>kvconform replay &#39;store/x y.json&#39;</code>"), std::string::npos);
  EXPECT_NE(page.find("1 passed, 1 failed, 0 not supported"), std::string::npos);
  EXPECT_NE(page.find("3.00e-01 (2)"), std::string::npos);  // the search's best ratio and its traces
}

TEST(HtmlReport, OneChartPerClassPlusAllAndTheSearch) {
  kv::implementation impl;
  const std::string page = kv::html_report(hostile_run(impl));
  // all random cases, moderate, peaked, ramp, the targeted search
  EXPECT_EQ(occurrences(page, "<svg class=\"hist\""), 5u);
  EXPECT_NE(page.find("<b>(targeted search)</b>: 2 decodes"), std::string::npos);
  EXPECT_NE(page.find("<b>all random cases</b>: 6 decodes; highest: failed (err/bound &gt; 1, or not finite)"),
            std::string::npos);
}

TEST(HtmlReport, ABarPerNonEmptyBinOnALogScale) {
  kv::ratio_histogram h;
  h.counts[0] = 1000, h.counts[5] = 1, h.counts[13] = 2;
  const std::string svg = kv::histogram_svg(h);
  EXPECT_EQ(occurrences(svg, "<rect class=\"bar"), 3u);
  EXPECT_EQ(occurrences(svg, "<rect class=\"bar over\""), 1u);
  EXPECT_NE(svg.find("height=\"80\"><title>err/bound &lt; 1e-6: 1000 decodes</title>"), std::string::npos);
  // One decode beside a thousand still shows: log(2) / log(1001) of the plot, about 8 pixels.
  EXPECT_NE(svg.find("height=\"8\"><title>1e-4 ≤ err/bound &lt; 3.2e-4: 1 decode</title>"), std::string::npos);
  EXPECT_EQ(occurrences(kv::histogram_svg(kv::ratio_histogram{}), "<rect"), 0u);
}

TEST(HtmlReport, HistogramsTravelExactlyThroughAWorker) {
  kv::implementation impl;
  const kv::property_report sent = hostile_run(impl)[0].properties[0];
  kv::property_report got = kv::decode_report(kv::encode_report(sent));
  EXPECT_EQ(got.ratios, sent.ratios);
  EXPECT_EQ(got.search_stats.ratios, sent.search_stats.ratios);
  got.stats.ratios.add(0.5);
  EXPECT_EQ(kv::decode_report(kv::encode_report(got)).stats.ratios, got.stats.ratios);
}
