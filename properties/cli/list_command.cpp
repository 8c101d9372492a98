// `kvconform list`: the implementations the runner knows and each kind's properties.
#include <iostream>

#include "properties/cli/subcommand.h"
#include "properties/generate/property.h"
#include "properties/trace/kind_spec.h"

namespace kvconform::cli {

namespace {
/// A kind's policies, each with its choices (the default first) and what each does (docs/design.md §2.4).
void list_policies(const kind_spec& k) {
  if (k.policies.empty()) return;
  std::cout << k.name << " policies (declared by a cache; the first choice is the default):\n";
  for (const policy_spec& p : k.policies) {
    std::cout << "  " << p.name << ":";
    for (const policy_choice& c : p.choices) std::cout << (&c == &p.choices.front() ? " " : " | ") << c.name;
    std::cout << "\n      " << p.summary << "\n";
    for (const policy_choice& c : p.choices)
      std::cout << "      " << c.name << ": " << c.summary << (*c.engines ? std::string("; engines: ") + c.engines : "")
                << "\n";
  }
}

int list(const command_line& cmd) {
  std::cout << "implementations:\n";
  for (const auto& i : cmd.impls())
    std::cout << "  " << i.name << "  [" << to_string(i.kind) << ", " << to_string(i.group) << "; "
              << i.profile.describe() << (i.policies.empty() ? "" : "; policies " + i.policies.describe())
              << "]\n      " << i.note << (i.killer.empty() ? "" : " (killed by " + i.killer + ")") << "\n";
  for (const kind_spec* k : kind_specs()) {
    list_policies(*k);
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
