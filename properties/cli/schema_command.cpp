// `kvconform schema`: the JSON Schema of trace files, of the port protocol or of the vectors.
#include <iostream>
#include <memory>

#include "properties/cli/subcommand.h"
#include "properties/port/port.h"
#include "properties/trace/schema.h"
#include "properties/vectors/vectors.h"

namespace kvconform::cli {

subcommand add_schema(CLI::App& app) {
  auto which = std::make_shared<std::string>();
  CLI::App* sub =
      app.add_subcommand("schema", "Print the JSON Schema of trace files, the port protocol or the vectors");
  sub->add_option("which", *which, "trace, port or vectors")
      ->required()
      ->check(CLI::IsMember({"trace", "port", "vectors"}));
  return {sub, [which] {
            const auto s = *which == "trace"  ? schema::trace_file()
                           : *which == "port" ? port_protocol_schema()
                                              : vectors_schema();
            std::cout << s.dump(2) << "\n";
            return exit_pass;
          }};
}

}  // namespace kvconform::cli
