// The kvconform executable: the shared command line over every built-in implementation.
#include "properties/runners/builtin.h"
#include "properties/runners/cli.h"

#ifdef KVCONFORM_TCMALLOC
#include <gperftools/malloc_extension_c.h>
#endif

int main(int argc, char** argv) {
#ifdef KVCONFORM_TCMALLOC
  // Freed pages go back to the system at once, so that the peak RSS promised on hostile inputs
  // (docs/reliability.md §2) holds: parsing the costliest accepted trace peaked at 208 MB without
  // this, 162 MB with it (glibc's malloc: 186 MB), at no measurable cost to the gate.
  MallocExtension_SetNumericProperty("tcmalloc.aggressive_memory_decommit", 1);
#endif
  return kvconform::run_cli(argc, argv, kvconform::builtin_implementations(),
                            "kvconform: conformance harness for transformer KV caches");
}
