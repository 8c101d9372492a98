// Refusal mapping shared by every in-process adapter.
#include "properties/executor/adapter.h"

#include "oracle/models/model.h"

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
  } catch (const error& e) {
    r.reason = refuse_none, r.message = e.what();  // a refusal of no known kind never matches
  }
  return r;
}

}  // namespace kvconform
