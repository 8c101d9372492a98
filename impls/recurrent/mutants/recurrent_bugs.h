// Mutants of the recurrent reference after this year's reports on recurrent state with speculation and prefix caching.
#pragma once

#include <map>
#include <vector>

#include "impls/recurrent/recurrent.h"

namespace kvconform::mutants {

/// vLLM #39273 (fixed by PR #52942): after a round that accepted several steps the next step reads the state of the
/// first position (column 0) instead of the last accepted one.
struct recurrent_reads_first_position : basic_recurrent<> {
  using basic_recurrent::basic_recurrent;
  void rollback(sequence_id id, std::size_t count) override {
    basic_recurrent::rollback(id, count);
    sequence& s = live(id);
    if (count == 0 || s.droppable < 2) return;
    s.now = s.committed;
    std::vector<double> out(dv_);
    advance(s, 1, out.data());
  }
};

/// mlx-lm #846 (fixed by PR #1109): trimming a recurrent cache did nothing: the length drops, the state and window
/// keep the rejected drafts.
struct recurrent_rollback_no_op : basic_recurrent<> {
  using basic_recurrent::basic_recurrent;
  void rollback(sequence_id id, std::size_t count) override {
    const head before = live(id).now;
    basic_recurrent::rollback(id, count);
    live(id).now = before;
  }
};

/// mlx-lm PR #1486, llama.cpp PR #28123: a rollback restores the state but the convolution window keeps the rows of
/// the rejected drafts.
struct recurrent_rollback_keeps_window : basic_recurrent<> {
  using basic_recurrent::basic_recurrent;
  void rollback(sequence_id id, std::size_t count) override {
    const std::vector<double> rows = live(id).now.window();
    basic_recurrent::rollback(id, count);
    live(id).now.window_rows() = rows;
  }
};

/// llama.cpp PR #20075: the recurrent memory's slot search copies a fork's state from the wrong cell (here the newest
/// other sequence's).
struct recurrent_fork_wrong_cell : basic_recurrent<> {
  using basic_recurrent::basic_recurrent;
  sequence_id fork(sequence_id from) override {
    const sequence_id made = basic_recurrent::fork(from);
    for (sequence_id other = made; other-- > 0;)
      if (seqs_[other]) {
        seqs_[made]->now = seqs_[other]->now;
        break;
      }
    return made;
  }
};

/// vLLM PR #48375 and #53912: under speculation a boundary's checkpoint is published when the step is verified, before
/// the drafts are accepted: a rollback leaves it holding rejected steps' chain.
struct recurrent_publish_before_accept : basic_recurrent<> {
  using basic_recurrent::basic_recurrent;
  void appended(sequence_id, sequence& s) override {
    for (const auto& [at, h] : s.pending)
      publish(std::vector<std::int64_t>(s.tokens.begin(), s.tokens.begin() + at), h);
  }
};

/// SGLang #36537: the checkpoint is taken from the running slot after the whole step, not at its block boundary, so a
/// step that crosses a boundary stores the state of later tokens under the boundary's chain.
struct recurrent_checkpoint_from_running_slot : basic_recurrent<> {
  using basic_recurrent::basic_recurrent;
  void appended(sequence_id, sequence& s) override {
    for (auto& [at, h] : s.pending) h = s.now;
  }
};

/// vLLM PR #57908: a sequence resumed from a checkpoint runs in the checkpoint's own slot, so its steps change what
/// every later hit resumes from.
struct recurrent_resume_shares_checkpoint : basic_recurrent<> {
  using basic_recurrent::basic_recurrent;
  sequence_id create(std::span<const std::int64_t> tokens) override {
    const std::size_t hits = hit_tokens_;
    const sequence_id id = basic_recurrent::create(tokens);
    if (hit_tokens_ > hits) shared_[id] = live(id).tokens;
    return id;
  }
  void appended(sequence_id id, sequence& s) override {
    if (const auto it = shared_.find(id); it != shared_.end())
      if (const auto cp = store_.find(it->second); cp != store_.end()) cp->second.state = s.now;
  }
  std::map<sequence_id, std::vector<std::int64_t>> shared_;
};

/// vLLM PR #46281 (issue #43559): the hit is the state's longest checkpoint while the attention layers found fewer
/// blocks; the tokens of the missing blocks never reach the attention layers.
struct recurrent_hit_past_attention_blocks : basic_recurrent<> {
  using basic_recurrent::basic_recurrent;
  bool hit_at(bool checkpoint, bool) const override { return checkpoint; }
};

/// vLLM #43090 (after PR #47491): the state misses, the attention layers' hit is kept, and the state starts empty as
/// if it had been resumed.
struct recurrent_hit_past_state : basic_recurrent<> {
  using basic_recurrent::basic_recurrent;
  bool hit_at(bool checkpoint, bool blocks) const override { return checkpoint || (layers_ > 0 && blocks); }
};

struct float_state_rules : recurrent_rules {
  using scalar = float;
};
/// A state kept and computed in float in a cache declared double (the numerics a bf16/f32 SSM state silently loses).
struct recurrent_float_state : basic_recurrent<float_state_rules> {
  using basic_recurrent::basic_recurrent;
};

}  // namespace kvconform::mutants
