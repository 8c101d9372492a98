// The op vocabulary as data: every op and op field of trace.h's lists with its name, form, range and meaning.
#pragma once

#include <cstddef>

#include "properties/trace/trace.h"

namespace kvconform {

/// One op of the vocabulary (KVCONFORM_OPS).
struct op_info {
  op_kind kind;
  const char* name;
  const char* meaning;
};
#define KVCONFORM_OP_INFO(name, meaning) {op_kind::name, #name, meaning},
inline constexpr op_info op_infos[] = {KVCONFORM_OPS(KVCONFORM_OP_INFO)};
#undef KVCONFORM_OP_INFO
constexpr const op_info& info_of(op_kind k) { return op_infos[static_cast<std::size_t>(k)]; }

/// An op field's form: what the codec reads and writes and the schemas describe.
enum class field_type : unsigned char { tensor, optional_tensor, integer, integers, optional_integer };
/// What an op field's integers name: a sequence handle, a layer, a step (a position or a number of steps), rows
/// (a list of row indices, one per batch row) or tokens (a list, one per step). The fuzz byte format draws each
/// from its own range (fuzz/byte_trace.cpp); a tensor's is `none`.
enum class field_range : unsigned char { none, handle, layer, step, rows, tokens };

namespace detail {
#define KVCONFORM_FIELD_POSITION(name, type, range, meaning) name,
enum class field_position : unsigned { KVCONFORM_OP_FIELDS(KVCONFORM_FIELD_POSITION) };
#undef KVCONFORM_FIELD_POSITION
}  // namespace detail

/// The fields an op may carry, as bits (field_k, field_seq, ...). A kind's op carries exactly the fields its spec
/// lists (kind_spec.h).
#define KVCONFORM_FIELD_BIT(name, type, range, meaning) \
  field_##name = 1u << static_cast<unsigned>(detail::field_position::name),
enum op_field : unsigned { KVCONFORM_OP_FIELDS(KVCONFORM_FIELD_BIT) };
#undef KVCONFORM_FIELD_BIT

/// One op field of the vocabulary (KVCONFORM_OP_FIELDS).
struct op_field_info {
  op_field bit;
  const char* name;
  field_type type;
  field_range range;
  const char* meaning;
};
#define KVCONFORM_FIELD_INFO(name, type, range, meaning) \
  {field_##name, #name, field_type::type, field_range::range, meaning},
/// Every op field, in the order every encoding carries them.
inline constexpr op_field_info op_fields[] = {KVCONFORM_OP_FIELDS(KVCONFORM_FIELD_INFO)};
#undef KVCONFORM_FIELD_INFO

/// Calls f(info, member) for every field of `o` among `fields` (op_field bits), in the vocabulary's order; member
/// is `o`'s own (const when `o` is), a tensor, an std::int64_t or a vector of them.
template <class Op, class F>
void visit_fields(Op& o, unsigned fields, F&& f) {
#define KVCONFORM_VISIT_FIELD(name, type, range, meaning) \
  if (fields & field_##name) f(op_fields[static_cast<unsigned>(detail::field_position::name)], o.name);
  KVCONFORM_OP_FIELDS(KVCONFORM_VISIT_FIELD)
#undef KVCONFORM_VISIT_FIELD
}

/// Whether two ops are the same op with bitwise the same fields (pinned values aside).
inline bool same_fields(const op& a, const op& b) {
  bool same = a.kind == b.kind;
#define KVCONFORM_SAME_FIELD(name, type, range, meaning) same = same && a.name == b.name;
  KVCONFORM_OP_FIELDS(KVCONFORM_SAME_FIELD)
#undef KVCONFORM_SAME_FIELD
  return same;
}

}  // namespace kvconform
