/* <kvconform/c_port.h>: the C ABI of a cache under test, loaded by `kvconform port --library`
 * (docs/port-protocol.md §12).
 */
#ifndef KVCONFORM_PORT_H
#define KVCONFORM_PORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The version of this header; a library reports the one it was built with (kvc_abi_version). The harness drives
 * versions 2 to 5 and refuses any other (docs/port-protocol.md §12 says why, and what versions 3 to 5 added). */
#define KVC_ABI_VERSION 6

/** A cache of the library's own making: the harness only passes the pointer back. */
typedef struct kvc_cache kvc_cache;

/** What a call did. A refusal (capacity, shape, empty, index) must leave the cache unchanged. */
typedef enum {
  KVC_OK = 0,
  KVC_CAPACITY = 1,     /**< a full cache or block pool */
  KVC_SHAPE = 2,        /**< a wrong rank, width, step or token count */
  KVC_EMPTY = 4,        /**< a decode of no rows */
  KVC_INDEX = 8,        /**< an unknown or released sequence, a layer or reorder index out of range */
  KVC_UNSUPPORTED = 32, /**< the library does not implement this op for this kind */
  KVC_MORE = 64         /**< observe, decode, prefill: a caller buffer is too small; sizes set, nothing changed */
} kvc_status;

/** A read-only row-major array of rank 0..4, valid only during the call: copy what you keep. */
typedef struct {
  const double* data;
  size_t rank;
  size_t dims[4];
} kvc_array;

/** A cache's config (docs/port-protocol.md §4); fields the kind does not use are 0, the scales 1. Fields only ever
 * come at the end, so that a library built for an earlier version reads the ones it knows. */
typedef struct {
  const char* kind; /**< "flat", "ring", "paged", "beam", "growing", "prefix", "latent" (version 4) */
  size_t capacity, d_k, d_v, keep, block_size;
  int preempt;
  size_t layers, batch, heads, q_heads;
  double k_scale, v_scale; /**< per-tensor scales of a scaled element format (docs/numerics.md §6.1) */
  size_t reserve;          /**< version 3, ring: rows held beyond the window, so that a rollback can restore it */
} kvc_config;

/** Numbers the library writes into a caller buffer: it sets n (the count needed on KVC_MORE). */
typedef struct {
  double* data;
  size_t cap, n;
} kvc_numbers;

/** One observed stream (docs/port-protocol.md §7). The harness sets the pointers and capacities;
 * the library fills the rest, and returns KVC_MORE (having set rows, n_positions, n_blocks and the
 * numbers' n) when a capacity is too small, so that the harness grows the buffers and asks again. */
typedef struct {
  char name[64];
  size_t rows, d_k, d_v;
  double* keys; /**< rows x d_k, capacity keys_cap doubles */
  size_t keys_cap;
  double* values; /**< rows x d_v */
  size_t values_cap;
  int64_t* positions; /**< ring: one per row */
  size_t positions_cap, n_positions;
  int64_t* blocks; /**< paged, prefix: the block table */
  size_t blocks_cap, n_blocks;
  /** A side declared as integer groups exposes its scales and, when asymmetric, its minima (docs/port-protocol.md
   * §7); n stays 0 for a side in an element format. */
  kvc_numbers key_scales, key_zeros, value_scales, value_zeros;
} kvc_stream;

/** The sequences a paged append released to make room (with `preempt`), as the library's ids: the harness sets ids
 * and cap (room for every sequence it has open) and n = 0; the library sets n. */
typedef struct {
  int64_t* ids;
  size_t cap, n;
} kvc_preempted;

/** A named integer of the observation (size, total, free_blocks, ...). */
typedef struct {
  char name[64];
  int64_t value;
} kvc_counter;

/** A whole observation in caller buffers; n_* are set by the library (needed sizes on KVC_MORE). */
typedef struct {
  kvc_stream* streams;
  size_t streams_cap, n_streams;
  kvc_counter* counters;
  size_t counters_cap, n_counters;
  int64_t* block_refs; /**< pairs (block, count) for every block with a non-zero count */
  size_t block_refs_cap, n_block_refs;
} kvc_observation;

/* Every library exports these, with C linkage; kvc_prefill and kvc_rollback (version 3) only when it declares their
 * capabilities, kvc_decode_latent (version 4) only when it serves the latent kind with "decode", kvc_prefill_latent
 * (version 5) only when it serves the latent kind with "prefill", kvc_sinks (version 6) only when it declares learned
 * sinks. Sequence ids (paged, prefix) are the library's own:
 * the harness maps trace handles to them. `seq` is ignored by the single-sequence kinds; `layer` selects a beam layer.
 */

/** KVC_ABI_VERSION as the library was built. */
int kvc_abi_version(void);
/** The handshake answer of docs/port-protocol.md §3 without "id" and "ok", as a JSON object:
 * {"protocol": 2, "name": ..., "kinds": {KIND: {"profile": {...}, "capabilities": [...]}}}. */
const char* kvc_hello(void);
kvc_status kvc_open(const kvc_config* config, kvc_cache** out);
void kvc_close(kvc_cache* cache);
kvc_status kvc_append(kvc_cache* cache, int64_t seq, kvc_array k, kvc_array v, const int64_t* tokens, size_t n_tokens,
                      kvc_preempted* preempted);
/** Output and weights into caller buffers (KVC_MORE with the sizes when too small). */
kvc_status kvc_decode(kvc_cache* cache, int64_t seq_or_layer, kvc_array q, kvc_array mask, double* output,
                      size_t output_cap, size_t* n_output, double* weights, size_t weights_cap, size_t* n_weights);
/** Version 3, capability "prefill" (docs/port-protocol.md §12): appends the m steps of k and v as kvc_append does
 * (refused alike), and answers one causal attention per row of q, 2-D (m, d_k) (else KVC_SHAPE): output (m, d_v)
 * and weights (m, n + m) row-major, n the rows held before; `preempted` as in kvc_append. KVC_MORE (with the sizes)
 * only before anything is appended: the harness grows its buffers and calls again with the same arguments. */
kvc_status kvc_prefill(kvc_cache* cache, int64_t seq, kvc_array k, kvc_array v, const int64_t* tokens, size_t n_tokens,
                       kvc_array q, double* output, size_t output_cap, size_t* n_output, double* weights,
                       size_t weights_cap, size_t* n_weights, kvc_preempted* preempted);
/** Version 4, the latent kind's decode (docs/kinds/latent.md): q (Hq, d_nope + d_r), w_uk (Hq, d_nope, d_c) and
 * w_uv (Hq, d_vh, d_c); output (Hq, d_vh) and weights (Hq, n), head after head. A latent append's v is an empty array
 * (rank 0): the values are the rows' first d_c entries. */
kvc_status kvc_decode_latent(kvc_cache* cache, int64_t seq, kvc_array q, kvc_array w_uk, kvc_array w_uv, double* output,
                             size_t output_cap, size_t* n_output, double* weights, size_t weights_cap,
                             size_t* n_weights);
/** Version 5, the latent kind's prefill (capability "prefill"): appends k (m, d_k) as kvc_append does (refused
 * alike), then step i's heads, q (m, Hq, d_nope + d_r) with the projections of kvc_decode_latent, attend over the rows
 * up to its own: output (m, Hq, d_vh) and weights (m, Hq, n + m), n the rows held before, step after step, head after
 * head, exactly 0 where a step does not read. KVC_MORE as kvc_prefill: before anything is appended. */
kvc_status kvc_prefill_latent(kvc_cache* cache, int64_t seq, kvc_array k, kvc_array q, kvc_array w_uk, kvc_array w_uv,
                              double* output, size_t output_cap, size_t* n_output, double* weights, size_t weights_cap,
                              size_t* n_weights);
/** Version 6, exported by a library whose profile declares learned sinks (docs/numerics.md §7.1): the sink logits
 * (1-D, one per query head; flat: one) that the next kvc_decode or kvc_prefill of `cache` attends with. The harness
 * calls it before each; KVC_SHAPE for any other shape refuses that decode or prefill. */
kvc_status kvc_sinks(kvc_cache* cache, kvc_array sinks);
/** Version 3, capability "rollback": drops the newest `count` steps; KVC_INDEX for a negative count, more steps than
 * appended, or (ring) more than the reserve keeps. */
kvc_status kvc_rollback(kvc_cache* cache, int64_t seq, int64_t count);
kvc_status kvc_create(kvc_cache* cache, const int64_t* tokens, size_t n_tokens, int64_t* id);
kvc_status kvc_fork(kvc_cache* cache, int64_t seq, int64_t* id);
kvc_status kvc_release(kvc_cache* cache, int64_t seq);
kvc_status kvc_update(kvc_cache* cache, int64_t layer, int64_t start, kvc_array k, kvc_array v);
kvc_status kvc_reorder(kvc_cache* cache, const int64_t* index, size_t n);
kvc_status kvc_observe(kvc_cache* cache, kvc_observation* out);

#ifdef __cplusplus
}
#endif

#endif /* KVCONFORM_PORT_H */
