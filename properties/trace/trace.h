// The trace language: the one vocabulary of operations shared by generators, fuzzers, JSON and ports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <kvconform/array_view.h>
#include "properties/trace/kind_list.h"
#include "properties/trace/policy.h"

namespace kvconform {

#define KVCONFORM_KIND_ENUMERATOR(name) name,
/// The cache kinds, one per row of the kind table (docs/design.md §3); their vocabularies are in
/// properties/trace/kind_spec.h.
enum class cache_kind : unsigned char { KVCONFORM_KINDS(KVCONFORM_KIND_ENUMERATOR) };
#undef KVCONFORM_KIND_ENUMERATOR
const char* to_string(cache_kind k);

/// A dense row-major array with its shape, owned by a trace op.
struct tensor {
  std::vector<std::size_t> shape;
  std::vector<double> data;

  static tensor vector(std::vector<double> d) {
    const std::size_t n = d.size();
    return {{n}, std::move(d)};
  }
  static tensor matrix(std::size_t rows, std::size_t cols, std::vector<double> d) {
    return {{rows, cols}, std::move(d)};
  }
  /// True when data.size() equals the product of the shape (rank <= 4).
  bool consistent() const;
  array_view view() const { return view_of(data.data()); }
  array_view view_of(const double* storage) const;
  friend bool operator==(const tensor&, const tensor&);  ///< bitwise on data
};

/// The op vocabulary, declared once (docs/design.md §3.2): X(name, meaning) for every op, in `op_kind` order.
/// Which fields an op carries is its kind's (properties/trace/kind_spec.h). Sequences are named by handle (`seq`),
/// whatever ids the implementation uses; released handles are never reused.
#define KVCONFORM_OPS(X)                                                                                            \
  X(append, "appends the steps of k and v (to sequence seq where the kind has sequences)")                          \
  X(decode, "attends with q over the held rows (of sequence seq, or of layer)")                                     \
  X(create, "starts a new sequence, named by the next handle")                                                      \
  X(fork, "starts a new sequence that shares every block of seq")                                                   \
  X(release, "ends sequence seq, dropping its hold on each of its blocks")                                          \
  X(update, "writes k and v at positions [start, start + n) of layer; a start below its length truncates first")    \
  X(reorder, "makes row b of every layer a copy of old row index[b]")                                               \
  X(prefill, "appends the steps of k and v and attends with each step's query row of q, causally")                  \
  X(rollback, "drops the newest count steps (of sequence seq where the kind has sequences)")                        \
  X(store, "starts copying tier block `block` of seq to tier `tier` (1 host: from the device; 2 disk: from host)")  \
  X(load, "starts copying seq's next tier blocks from tier `tier` (1 host: to device blocks; 2 disk: to host)")     \
  X(complete, "ends the pending transfer `transfer`: its copy is done")                                             \
  X(fail, "ends the pending transfer `transfer`: its copy failed")                                                  \
  X(evict, "evicts the count least recently used evictable entries of tier `tier` (0 device, 1 host, 2 disk)")      \
  X(put, "stores the rows k, v of tokens, whole tier blocks, in tier `tier` at once, as a producer outside would")  \
  X(lookup, "starts a waiting sequence, named by the next handle, whose prompt is tokens: its hit found, not held") \
  X(admit, "holds waiting seq's hit found again and takes the blocks of its next count rows")                       \
  X(retract, "puts running seq back to waiting: its blocks let go of, its tokens kept in its prompt")               \
  X(abort, "ends seq, running or waiting, letting go of its blocks without the insert of a release")

/// X(name, type, range, meaning) for every op field, in the order the fuzz byte format visits an op's fields
/// (reordering these lines changes what the committed corpora mean). `type` is the field's form: tensor,
/// optional_tensor (an empty shape is absent), integer or integers (a list); `range` what its integers name
/// (properties/trace/op_vocabulary.h, `field_range`), from which the fuzz byte format bounds what it draws.
#define KVCONFORM_OP_FIELDS(X)                                                                                         \
  X(k, tensor, none, "keys: 1-D of width d_k (one step) or 2-D (n steps); beam (B, H, n, D)")                          \
  X(v, tensor, none, "values: shaped as k, of width d_v")                                                              \
  X(q, tensor, none,                                                                                                   \
    "query: 1-D of width d_k, a prefill's (m, d_k); beam (B, Hq, D) or (B, Hq, m, D); latent (Hq, d_q)")               \
  X(seq, integer, handle, "a sequence's handle: the 0-based count of create and fork ops before the one that made it") \
  X(layer, integer, layer, "the layer written or read")                                                                \
  X(start, integer, step, "the first position written")                                                                \
  X(mask, optional_tensor, none, "(B, len), a prefill's (B, len + m): 0 takes no weight; absent, all attend")          \
  X(index, integers, rows, "new row b is old row index[b]")                                                            \
  X(tokens, integers, tokens, "the token of each step appended, or the prefix a create looks up")                      \
  X(count, integer, step, "the number of newest steps a rollback drops; an admit's rows to come; what evict takes")    \
  X(w_uk, tensor, none, "latent: each query head's key up-projection (Hq, d_nope, d_c)")                               \
  X(w_uv, tensor, none, "latent: each query head's value up-projection (Hq, d_vh, d_c)")                               \
  X(extra_key, optional_integer, tokens,                                                                               \
    "prefix: a key of the created sequence's chain besides its tokens (an adapter, a tenant's salt); absent: 0, none") \
  X(tier, integer, layer, "tiered: a tier, 0 the device, 1 host, 2 disk")                                              \
  X(block, integer, layer, "tiered: a tier block of seq, rows [block F, (block + 1) F) for F rows per tier block")     \
  X(transfer, integer, handle,                                                                                         \
    "tiered: a transfer, the 0-based count of store and load ops before the one that began it")                        \
  X(x, tensor, none,                                                                                                   \
    "recurrent: each step's raw inputs [q | k | v], 1-D of width 2 d_k + d_v (one step) or 2-D (n steps)")             \
  X(g, tensor, none, "recurrent: each step's log decay, 1-D of n values, each finite and at most 0")                   \
  X(beta, tensor, none,                                                                                                \
    "recurrent: each step's write strength in [0, 1], 1-D of n values (the delta rule; else empty)")                   \
  X(sinks, optional_tensor, none,                                                                                      \
    "learned sinks: the decode's sink logit of each query head (flat: 1-D of 1); ignored unless the profile declares " \
    "them")                                                                                                            \
  X(index_k, optional_tensor, none,                                                                                    \
    "sparse top-k: the index key of each step appended, shaped as k with the indexer's width; ignored unless "         \
    "declared")                                                                                                        \
  X(index_q, optional_tensor, none,                                                                                    \
    "sparse top-k: the indexer's queries (heads, width), a prefill's (m, heads, width); ignored unless declared")      \
  X(index_w, optional_tensor, none,                                                                                    \
    "sparse top-k: the indexer's weight of each head (heads), a prefill's (m, heads); ignored unless declared")

#define KVCONFORM_OP_ENUMERATOR(name, meaning) name,
enum class op_kind { KVCONFORM_OPS(KVCONFORM_OP_ENUMERATOR) };
#undef KVCONFORM_OP_ENUMERATOR
const char* to_string(op_kind k);
std::optional<op_kind> op_kind_from_string(const std::string& s);

/// Values an op must produce, when a trace pins them (the seed's worked example, vectors).
struct pinned {
  std::optional<bool> accepted;
  std::optional<std::size_t> size;
  std::vector<double> output, weights;  ///< compared after rounding to `decimals`
  int decimals = 8;
};

/// The C++ type of each field form of KVCONFORM_OP_FIELDS.
namespace op_field_types {
using tensor = kvconform::tensor;
using optional_tensor = kvconform::tensor;
using integer = std::int64_t;
using optional_integer = std::int64_t;  ///< absent when 0
using integers = std::vector<std::int64_t>;
}  // namespace op_field_types

/// One operation of a trace with its data: a member per op field (KVCONFORM_OP_FIELDS), in its order.
struct op {
  op_kind kind = op_kind::append;
#define KVCONFORM_OP_MEMBER(name, type, range, meaning) op_field_types::type name{};
  KVCONFORM_OP_FIELDS(KVCONFORM_OP_MEMBER)
#undef KVCONFORM_OP_MEMBER
  std::optional<pinned> expect;
};

/// The construction parameters of a cache. `capacity` is max_len (flat), the window (ring),
/// the number of blocks (paged, prefix, hybrid), max_len T (beam; there d_k = d_v = head_dim D) or the
/// growth step (growing).
struct cache_config {
  cache_kind kind = cache_kind::flat;
  std::size_t capacity = 0, d_k = 0, d_v = 0;
  std::size_t keep = 0;        ///< ring: attention sinks, never evicted
  std::size_t reserve = 0;     ///< ring: rows held beyond the window, so that a rollback can restore it
  std::size_t block_size = 0;  ///< paged, prefix
  bool preempt = false;        ///< paged: preempt instead of refusing
  std::size_t layers = 0, batch = 0, heads = 0, q_heads = 0;  ///< beam: L, B, kv heads H, query heads Hq
  /// hybrid (docs/kinds/hybrid.md): the sliding window, every how many layers one keeps every row, the shared
  /// decoder layers at the end, and the cross-attention layer's encoder rows (`layers`, `keep` as above)
  std::size_t window = 0, global_every = 0, shared = 0, cross = 0;
  bool prefix_caching = false;  ///< hybrid: a create reuses the longest prefix of its tokens every writing group holds
  /// tiered (docs/kinds/tiered.md): the host tier's blocks, device blocks per tier block, the disk tier's blocks
  std::size_t host_blocks = 0, host_factor = 0, disk_blocks = 0;
  /// recurrent (docs/kinds/recurrent.md): the causal convolution's width, and the gated delta rule instead of the decay
  std::size_t conv_width = 0;
  bool delta = false;
  /// Per-tensor scales of keys and values, for a cache whose declared element format is scaled
  /// (docs/numerics.md §6.1: stored = round(x / scale), exposed = stored * scale); ignored otherwise.
  double k_scale = 1, v_scale = 1;
  friend bool operator==(const cache_config&, const cache_config&) = default;
};

/// A replayable trace: the cache it builds, its ops, and where it came from.
struct trace {
  static constexpr int schema_version = 1;
  cache_config config;
  std::vector<op> ops;
  std::string implementation;  ///< registry name it failed on, if any
  std::string property;        ///< the property that produced it, if any
  std::string note;            ///< the failure message when saved
  /// The policies the implementation declared when the trace was saved (docs/design.md §2.4): a cache declaring
  /// others is not held to it.
  policy_set policies;
  /// For a trace a driver made (a generation loop): the driver's seed and size, so that replay
  /// runs the driver again and repeats the comparisons it makes beyond the ops themselves.
  std::optional<std::uint64_t> drive_seed;
  std::size_t drive_size = 0;
};

/// FNV-1a of `text`, and the same as 16 hex digits: stable names for stored traces, fuzz
/// artifacts and corpus files, and per-property seeds. `from` continues the hash of a prefix:
/// fnv1a(b, fnv1a(a)) == fnv1a(a + b).
std::uint64_t fnv1a(std::string_view text, std::uint64_t from = 1469598103934665603ull);
std::string content_hash(std::string_view text);

/// A short human-readable rendering of an op (shapes, not data), for messages and `show`.
std::string describe(const op& o);
std::string describe(const cache_config& c);

/// A stream's keys or values, row-major, read in place: contiguous pieces that point into the
/// cache or model observed (valid until it next changes) or into storage this object shares, so
/// that the executor compares state after every op at memcmp speed without copying rows
/// (docs/design.md §1).
class row_data {
 public:
  row_data() = default;
  /// Owns `values` (a port's answer, a test's expectation).
  row_data(std::vector<double> values) {  // NOLINT: implicit, so `stream.keys = doubles` reads naturally
    auto owned = std::make_shared<const std::vector<double>>(std::move(values));
    add(owned->data(), owned->size(), owned);
  }
  row_data(std::initializer_list<double> values) : row_data(std::vector<double>(values)) {}  // NOLINT: as above
  /// Appends the n doubles at `data`. `keep`, if given, holds the storage they live in; otherwise
  /// the caller keeps them alive and unchanged while this is read.
  void add(const double* data, std::size_t n, std::shared_ptr<const void> keep = nullptr) {
    if (keep) kept_.push_back(std::move(keep));
    if (n == 0) return;
    size_ += n;
    if (!pieces_.empty() && pieces_.back().data() + pieces_.back().size() == data)  // adjacent: one piece
      pieces_.back() = {pieces_.back().data(), pieces_.back().size() + n};
    else
      pieces_.emplace_back(data, n);
  }
  /// Replaces the contents with an owned copy of [first, last) (a port's answer read from a buffer).
  void assign(const double* first, const double* last) { *this = row_data(std::vector<double>(first, last)); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  double operator[](std::size_t i) const;
  /// Calls f(x) for every double, in order.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& piece : pieces_)
      for (double x : piece) f(x);
  }
  /// Doubles [begin, begin + n) as a vector, for messages and JSON.
  std::vector<double> copy(std::size_t begin = 0, std::size_t n = SIZE_MAX) const;
  /// The index of the first double whose bits differ from `other`'s (sizes equal), or size() if none.
  std::size_t mismatch(const row_data& other) const;
  friend bool operator==(const row_data& a, const std::vector<double>& b);

 private:
  std::vector<std::span<const double>> pieces_;
  std::vector<std::shared_ptr<const void>> kept_;
  std::size_t size_ = 0;
};

/// Everything observable about a cache between ops, in a form every kind shares: named
/// streams of rows (flat, ring and growing have one, paged and prefix one per live sequence,
/// beam one per layer, row and head), named integer counters (size, total, free_blocks, ...) and, for block
/// pools, each stream's block table and every referenced block's reference count.
/// One side of a stream stored in integer groups (docs/numerics.md §6.2). The implementation
/// fills `scales` and `zeros` (minima; asymmetric only) with what it exposes; the model fills them
/// with the ideal values, says how many leading rows are quantized (the rest are residual rows,
/// exact), and for per-channel groups where each group starts among the held rows.
struct group_view {
  std::vector<double> scales, zeros;
  std::size_t quantized = 0;
  std::vector<std::size_t> starts;
  bool empty() const { return scales.empty() && zeros.empty(); }
};

struct stream {
  std::string name;
  std::size_t d_k = 0, d_v = 0;
  row_data keys, values;                ///< rows x d_k and rows x d_v, read in place
  /// The model's, for keys computed rather than stored (a recurrent state): each observed key may differ from the
  /// expected one by at most its bound (docs/numerics.md §3.9); empty: bit for bit.
  std::vector<double> key_bounds;
  group_view key_groups, value_groups;  ///< integer-group storage only
  std::vector<std::int64_t> positions;  ///< absolute step index per row, when the kind has them
  std::vector<std::int64_t> blocks;     ///< block table, when the kind has one
  bool sliding = false;                 ///< the model's: rows stored in the profile's sliding-group formats (hybrid)
  std::size_t rows() const { return d_k ? keys.size() / d_k : 0; }
};
struct snapshot {
  std::vector<stream> streams;
  std::vector<std::pair<std::string, std::int64_t>> counters;
  std::vector<std::pair<std::int64_t, std::int64_t>> block_refs;  ///< block id -> reference count (> 0 only)
};

/// The first difference between an expected and an observed snapshot, or "" when equal. Both must
/// still be valid: neither the model nor the cache they view has changed since.
/// Rows compare bit-for-bit; block ids compare up to renaming (the implementation may pick
/// any free block), so sharing, copy-on-write and reference counts must match exactly.
std::string diff(const snapshot& expected, const snapshot& observed);

}  // namespace kvconform
