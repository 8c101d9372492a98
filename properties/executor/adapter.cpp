// Refusal mapping shared by every in-process adapter, and the names of groups and capabilities.
#include "properties/executor/adapter.h"

#include <iterator>

namespace kvconform {

op_outcome refusal_from_current_exception() {
  op_outcome r;
  r.accepted = false;
  try {
    throw;
  } catch (const capacity_error& e) {
    r.reason = refuse_capacity, r.message = e.what();
  } catch (const shape_error& e) {
    r.reason = refuse_shape, r.message = e.what();
  } catch (const empty_error& e) {
    r.reason = refuse_empty, r.message = e.what();
  } catch (const index_error& e) {
    r.reason = refuse_index, r.message = e.what();
  } catch (const pending_error& e) {
    r.reason = refuse_pending, r.message = e.what();
  } catch (const order_error& e) {
    r.reason = refuse_order, r.message = e.what();
  } catch (const error& e) {
    r.reason = refuse_none, r.message = e.what();  // a refusal of no known kind never matches
  }
  return r;
}

const char* to_string(impl_group g) {
  switch (g) {
    case impl_group::reference: return "reference";
    case impl_group::mutant: return "mutant";
    case impl_group::variant: return "variant";
  }
  return "?";
}

const char* to_string(capability c) {
  switch (c) {
    case capability::decode: return "decode";
    case capability::preempt: return "preempt";
    case capability::sinks: return "sinks";
    case capability::prefill: return "prefill";
    case capability::rollback: return "rollback";
    case capability::prefix: return "prefix";
    case capability::extra_keys: return "extra_keys";
    case capability::phases: return "phases";
  }
  return "?";
}

std::optional<capability> capability_from_string(std::string_view name) {
  for (capability c : all_capabilities)
    if (name == to_string(c)) return c;
  return std::nullopt;
}

std::optional<capability> capability_set::missing_from(capability_set have) const {
  for (capability c : all_capabilities)
    if (has(c) && !have.has(c)) return c;
  return std::nullopt;
}

std::string capability_set::describe() const {
  std::string s;
  for (capability c : all_capabilities)
    if (has(c)) s += (s.empty() ? "" : ", ") + std::string(to_string(c));
  return s;
}

}  // namespace kvconform
