// `kvconform selftest`: every mutant killed and every valid variant passing, as a kill matrix.
#include <algorithm>
#include <iostream>
#include <memory>

#include "properties/cli/run_params.h"
#include "properties/cli/subcommand.h"
#include "properties/runners/selftest.h"
#include "properties/trace/kind_spec.h"

namespace kvconform::cli {

namespace {
struct selftest_flags {
  std::string profile = "quick", json, kind;
  int seeds = 5;
  std::optional<int> search;
};

int selftest(const command_line& cmd, const selftest_flags& f) {
  run_options o = profile_options(f.profile);
  if (f.search) o.search = *f.search;
  std::vector<implementation> impls = cmd.impls();
  if (!f.kind.empty()) {
    const auto kind = kind_from_string(f.kind);
    if (!kind) throw usage_error("--kind " + f.kind + ": unknown kind (known: " + kind_names() + ")");
    std::erase_if(impls, [&](const implementation& i) { return i.kind != *kind; });
  }
  if (std::none_of(impls.begin(), impls.end(), [](const implementation& i) { return i.group != impl_group::reference; }))
    throw usage_error("selftest: no mutants or valid variants to run" +
                      (cmd.left_out().empty() ? std::string() : ": " + cmd.left_out()));
  announce_seed(o.seed);
  std::cerr << "kvconform selftest: profile " << f.profile << ", " << f.seeds << " seeds per mutant\n";
  const auto report = run_selftest(impls, o, f.seeds, std::cerr);
  print_selftest(report, std::cout);
  if (!f.json.empty()) write_selftest_json(report, f.json);
  return report.ok() ? exit_pass : exit_fail;
}
}  // namespace

subcommand add_selftest(CLI::App& app, const command_line& cmd) {
  auto f = std::make_shared<selftest_flags>();
  CLI::App* sub = app.add_subcommand("selftest", "Prove every mutant is killed and every valid variant passes");
  sub->add_option("--profile", f->profile, "quick or deep")
      ->check(CLI::IsMember({"quick", "deep"}))
      ->capture_default_str();
  sub->add_option("--seeds", f->seeds, "Seeds per mutant (cases to kill is the median over them)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  sub->add_option("--json", f->json, "Write the kill matrix as JSON here");
  sub->add_option("--kind", f->kind, "Only this kind's mutants and variants");
  sub->add_option("--search", f->search,
                  "Traces of the targeted numeric search per decode property (0: random cases only)")
      ->check(count_in(0, max_cases));
  return {sub, [f, &cmd] { return selftest(cmd, *f); }};
}

}  // namespace kvconform::cli
