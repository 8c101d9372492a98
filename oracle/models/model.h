// The executable specification: a model per cache kind decides every expected outcome.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "oracle/models/stored_rows.h"
#include "oracle/numeric/attention_problem.h"
#include "oracle/numeric/numeric_profile.h"
#include "properties/trace/refusal.h"
#include "properties/trace/trace.h"

namespace kvconform {

/// What the model says an op must do. A refused op changes nothing in the model.
struct expectation {
  bool accepted = true;
  unsigned reasons = refuse_none;  ///< acceptable refusal reasons when !accepted
  /// A decode: one problem per output block, over the rows as stored. For integer groups those are
  /// the quantizer's inputs, and the executor attends over the rows the cache exposes instead.
  std::vector<attention_problem> problems;
  std::vector<std::size_t> streams;          ///< per problem: the snapshot stream whose rows it attends, in order
  std::vector<attention_problem> originals;  ///< per problem, over the rows as given (when the storage rounds)
  std::vector<std::int64_t> preempted;       ///< paged: handles an accepted append must preempt
  /// A latent op's problems (all over one stream) materialised again over `rows` (n x d_k, the stream's rows as the
  /// cache exposes them): for integer groups, whose decodes are judged over the cache's rows (docs/numerics.md §6).
  /// Empty otherwise.
  std::function<std::vector<attention_problem>(const shared_doubles& rows)> rematerialise;
  /// False when the rows a decode attended were never observable (docs/numerics.md §3.7): shapes and masked
  /// weights are still checked, the numbers are not judged.
  bool judge_numbers = true;
  /// A recurrent append (docs/kinds/recurrent.md): the oracle's output of every step (d_v each) and the bound on each
  /// entry's error (docs/numerics.md §3.9); empty for other ops.
  std::vector<double> output, output_bound;
  std::size_t width = 1;  ///< entries per step of `output` (d_v), for messages
  /// What makes the op's situation worth naming, added to a failure at it (a create whose tokens another extra key
  /// cached: a hit there leaks rows between tenants); "" for most ops.
  std::string note;
};

/// The model interface the executor drives. Each kind implements it with plain, obviously
/// correct state; its inputs are rounded to the implementation's storage format first.
class model {
 public:
  virtual ~model() = default;
  virtual expectation apply(const op& o) = 0;
  virtual snapshot observe() const = 0;
};

/// Steps of a well-formed append: k and v 1-D (one step) or 2-D (rows are steps) of widths
/// d_k and d_v with as many steps each; nullopt otherwise.
std::optional<std::size_t> append_steps(const op& o, std::size_t d_k, std::size_t d_v);
/// Step i of a well-formed 1-D or 2-D k or v, rounded to the storage precision as it arrives.
std::vector<double> stored_row(const tensor& t, std::size_t i, precision storage);
/// Adds the oracle's problem for a decode of `q` (d_k values, already rounded to the storage
/// precision) over every row of `s`, snapshot stream `index`; `live` (n entries, or empty) masks rows.
void add_decode(expectation& e, const stored_stream& s, std::size_t index, std::vector<double> q,
                const numeric_profile& p, std::vector<unsigned char> live = {});
/// Adds the problems of a prefill whose queries are the rows of `q` (m x d_k, as given) over every row of `s`,
/// snapshot stream `index`: query i sits at row before + i and sees the rows up to its own (docs/numerics.md §3.7).
void add_prefill(expectation& e, const stored_stream& s, std::size_t index, const tensor& q, std::size_t before,
                 const numeric_profile& p);
/// Adds a problem per query row i of `q` (m rows of d_k, as given) over every row of `s`, row j taking part when
/// sees(i, j) (no mask where every row does); add_prefill is the causal rule.
void add_queries(expectation& e, const stored_stream& s, std::size_t index, const double* q, std::size_t m,
                 std::size_t d_k, const numeric_profile& p, const std::function<bool(std::size_t, std::size_t)>& sees);

/// Whether an op's `sinks` fit the profile's declared attention (docs/numerics.md §7.1): one logit per head when it
/// declares learned sinks (`heads` of them); anything when it does not, which ignores the field.
bool sinks_fit(const numeric_profile& p, const tensor& sinks, std::size_t heads);
/// Gives the op's problems the declared soft cap and, with learned sinks, logit i / per of `sinks` to problem i (a
/// decode's problems share one head's; a hybrid prefill's n problems per layer one layer's).
void stamp_attention(expectation& e, const numeric_profile& p, const tensor& sinks, std::size_t per);

/// Whether an op's indexer inputs fit the declared top-k (docs/numerics.md §7.4): index_k of k's rank, a row of the
/// indexer's width per step of `steps`; index_q (heads, width) and index_w (heads) per query, a prefill's with a
/// leading m; every entry finite. Anything fits when top-k is not declared, which ignores the fields.
bool index_inputs_fit(const numeric_profile& p, const op& o, std::size_t steps);
/// Gives every problem of a decode or prefill whose query sees more than k rows the declared top-k: the choice
/// scored over `index_rows` (the problem's rows' stored index keys, in its order) and the declared rows as `live`.
void choose_top_k(expectation& e, const numeric_profile& p, const op& o,
                  const std::vector<std::vector<double>>& index_rows);
/// Replaces each choosing problem's declared rows by the cache's, read from its `weights` (all problems' in order)
/// and judged as a set (resolve_choice); "" on success, else the first problem's failure.
std::string resolve_choices(expectation& e, const std::vector<double>& weights);

}  // namespace kvconform
