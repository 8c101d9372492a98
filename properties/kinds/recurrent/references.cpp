// The built-in recurrent references: double, and one whose state is kept in float (docs/kinds/recurrent.md).
#include "impls/recurrent/recurrent.h"
#include "impls/recurrent/variants.h"
#include "properties/kinds/recurrent/adapter.h"
#include "properties/runners/builtin.h"

namespace kvconform::kinds {

std::vector<implementation> recurrent_references() {
  return {
      reference<recurrent>("recurrent", "a recurrent head per sequence, chunks of 4 within an append; double"),
      reference<variants::recurrent_f32>("recurrent-f32",
                                         "recurrent in float: inputs, arithmetic and state, declared as f32"),
  };
}

}  // namespace kvconform::kinds
