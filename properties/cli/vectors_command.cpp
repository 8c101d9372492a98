// `kvconform vectors`: Wycheproof-style test vectors of the runner's implementations, and their JSON Schema.
#include <iostream>
#include <memory>

#include "properties/cli/run_params.h"
#include "properties/cli/subcommand.h"
#include "properties/trace/kind_spec.h"
#include "properties/vectors/vectors.h"

namespace kvconform::cli {

namespace {
struct vectors_flags {
  std::string out, kind;
  std::uint64_t seed = 1;
};

int write_all(const command_line& cmd, const vectors_flags& f) {
  std::vector<cache_kind> kinds;
  for (const kind_spec* k : kind_specs())
    if (f.kind.empty() || f.kind == k->name) kinds.push_back(k->kind);
  announce_seed(f.seed);
  for (const std::string& file : write_vectors(f.out, kinds, cmd.impls(), f.seed))
    std::cout << "wrote " << file << "\n";
  return exit_pass;
}
}  // namespace

subcommand add_vectors(CLI::App& app, const command_line& cmd) {
  auto f = std::make_shared<vectors_flags>();
  CLI::App* sub = app.add_subcommand("vectors", "Write Wycheproof-style test vectors and their JSON Schema");
  sub->add_option("--out", f->out, "Directory to write into")->required();
  sub->add_option("--kind", f->kind, "Only this kind")->check(CLI::IsMember(kind_name_list()));
  sub->add_option("--seed", f->seed, "Seed of the generated data")->check(count_in(0, any_seed))->capture_default_str();
  return {sub, [f, &cmd] { return write_all(cmd, *f); }};
}

}  // namespace kvconform::cli
