// The command line every gate runner shares: the built-in kvconform and each kvconform_add_suite runner.
#pragma once

#include <string>
#include <vector>

#include "properties/executor/subject.h"

namespace kvconform {

/// Parses argv and runs its subcommand (list, gate, replay, selftest, port, vectors, schema) over `impls`.
/// Returns the exit code: 0 all pass, 1 a failure, 2 a usage or input error, 3 a cell of the baseline passed
/// (docs/reliability.md §1), 128 + a signal that stopped it. `left_out`, when not empty, says which implementations this
/// build leaves out and how to build them; an unknown name and a selftest without mutants repeat it.
int run_cli(int argc, char** argv, const std::vector<implementation>& impls, const std::string& description,
            const std::string& left_out = {});

}  // namespace kvconform
