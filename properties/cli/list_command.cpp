// `kvconform list`: the implementations the runner knows and each kind's properties.
#include <iostream>

#include "properties/cli/subcommand.h"
#include "properties/generate/property.h"
#include "properties/trace/kind_spec.h"

namespace kvconform::cli {

namespace {
int list(const command_line& cmd) {
  std::cout << "implementations:\n";
  for (const auto& i : cmd.impls())
    std::cout << "  " << i.name << "  [" << to_string(i.kind) << ", " << to_string(i.group) << "; "
              << i.profile.describe() << "]\n      " << i.note
              << (i.killer.empty() ? "" : " (killed by " + i.killer + ")") << "\n";
  for (const kind_spec* k : kind_specs()) {
    std::cout << k->name << " properties:\n";
    for (const property* p : properties_of(k->kind)) std::cout << "  " << p->name << "\n      " << p->summary << "\n";
  }
  return exit_pass;
}
}  // namespace

subcommand add_list(CLI::App& app, const command_line& cmd) {
  return {app.add_subcommand("list", "List implementations and properties"), [&cmd] { return list(cmd); }};
}

}  // namespace kvconform::cli
