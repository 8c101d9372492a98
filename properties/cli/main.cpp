// The kvconform executable: the shared command line over every built-in implementation.
#include "properties/cli/cli.h"
#include "properties/runners/builtin.h"

int main(int argc, char** argv) {
  return kvconform::run_cli(
      argc, argv, kvconform::builtin_implementations(), "kvconform: conformance harness for transformer KV caches",
      kvconform::zoo_built() ? ""
                             : "mutants and valid variants (the zoo, docs/mutants.md) are not in "
                               "this build: configure with -DKVCONFORM_ZOO=ON, as `bash .ci/setup "
                               "--tests` does");
}
