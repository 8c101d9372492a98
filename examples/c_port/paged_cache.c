/* A paged KV cache in plain C behind kvconform's C ABI (include/kvconform/c_port.h): one pool of blocks, sequences
 * that fork by sharing blocks and copy a shared, partly filled last block before writing into it, prefill and
 * rollback (docs/kinds/paged.md); the pool is block_pool.h.
 * Built as is, and with -DPAGED_BUG_ROLLBACK_TRUNCATES_SHARED, whose rollback clears the rows past the sequence's
 * new end in the block it keeps, although a fork may still hold that block and read them. With
 * -DPOOL_KEEP_ROLLED_BACK a rollback keeps the blocks past the new end until the release (vLLM's rejected drafts),
 * which -DPAGED_DECLARE_KEPT declares as the policy rollback_blocks=kept (docs/kinds/paged.md); -DPAGED_ABI_VERSION=N
 * reports another version of the C ABI. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kvconform/c_port.h>

#include "block_pool.h"

struct kvc_cache {
  block_pool pool;
  size_t d_k, d_v;
  double *k, *v;   /* blocks x block_size rows each */
  double* scratch; /* one query's weights */
};

#ifndef PAGED_ABI_VERSION
#define PAGED_ABI_VERSION KVC_ABI_VERSION
#endif
int kvc_abi_version(void) { return PAGED_ABI_VERSION; }

#ifdef PAGED_DECLARE_KEPT
#define PAGED_POLICIES ", \"policies\": {\"rollback_blocks\": \"kept\"}"
#else
#define PAGED_POLICIES ""
#endif
/* Test builds that also claim the tiered, the recurrent or the radix kind, or the prefix kind's phases, which the C ABI
 * cannot carry: the harness refuses the library. */
#if defined(PAGED_CLAIM_TIERED)
#define PAGED_OTHER_KINDS ", \"tiered\": {\"capabilities\": [\"decode\"]}"
#elif defined(PAGED_CLAIM_RECURRENT)
#define PAGED_OTHER_KINDS ", \"recurrent\": {\"capabilities\": [\"rollback\"]}"
#elif defined(PAGED_CLAIM_RADIX)
#define PAGED_OTHER_KINDS ", \"radix\": {\"capabilities\": [\"decode\"]}"
#elif defined(PAGED_CLAIM_PHASES)
#define PAGED_OTHER_KINDS ", \"prefix\": {\"capabilities\": [\"phases\"]}"
#else
#define PAGED_OTHER_KINDS ""
#endif
const char* kvc_hello(void) {
  return "{\"protocol\": 2, \"name\": \"c-paged\", \"kinds\": {\"paged\": {\"capabilities\": "
         "[\"decode\", \"prefill\", \"rollback\"]" PAGED_POLICIES "}" PAGED_OTHER_KINDS "}}";
}

void kvc_close(kvc_cache* c) {
  if (!c) return;
  pool_free(&c->pool);
  free(c->k), free(c->v), free(c->scratch), free(c);
}

kvc_status kvc_open(const kvc_config* config, kvc_cache** out) {
  if (strcmp(config->kind, "paged") != 0 || config->preempt || config->capacity == 0 || config->block_size == 0)
    return KVC_UNSUPPORTED;
  kvc_cache* c = calloc(1, sizeof *c);
  if (!c) return KVC_CAPACITY;
  c->d_k = config->d_k, c->d_v = config->d_v;
  const size_t rows = config->capacity * config->block_size;
  c->k = calloc(rows * c->d_k + 1, sizeof(double));
  c->v = calloc(rows * c->d_v + 1, sizeof(double));
  c->scratch = calloc(rows + 1, sizeof(double));
  if (!pool_init(&c->pool, config->capacity, config->block_size) || !c->k || !c->v || !c->scratch) {
    kvc_close(c);
    return KVC_CAPACITY;
  }
  *out = c;
  return KVC_OK;
}

/* Steps and width of a 1-D (one step) or 2-D (rows are steps) array; 0 when the rank is wrong. */
static int steps_of(kvc_array a, size_t* steps, size_t* width) {
  if (a.rank == 1) return *steps = 1, *width = a.dims[0], 1;
  if (a.rank == 2) return *steps = a.dims[0], *width = a.dims[1], 1;
  return 0;
}

/* The steps of an append's k and v, or 0 (KVC_SHAPE) when they are not steps of this cache's widths. */
static int append_steps(const kvc_cache* c, kvc_array k, kvc_array v, size_t* steps) {
  size_t ks, kw, vs, vw;
  if (!steps_of(k, &ks, &kw) || !steps_of(v, &vs, &vw) || kw != c->d_k || vw != c->d_v || ks != vs) return 0;
  return *steps = ks, 1;
}

/* Writes the steps after the sequence's rows, its shared last block copied first; the blocks were counted. */
static void write_steps(kvc_cache* c, sequence* s, const double* k, const double* v, size_t steps) {
  size_t copy[2];
  const size_t bs = c->pool.block_size;
  grow_table(&c->pool, s, steps, copy);
  if (copy[1] < c->pool.blocks) {
    memcpy(c->k + copy[1] * bs * c->d_k, c->k + copy[0] * bs * c->d_k, bs * c->d_k * sizeof(double));
    memcpy(c->v + copy[1] * bs * c->d_v, c->v + copy[0] * bs * c->d_v, bs * c->d_v * sizeof(double));
  }
  for (size_t i = 0; i < steps; ++i, ++s->length) {
    memcpy(c->k + row_of(&c->pool, s, s->length) * c->d_k, k + i * c->d_k, c->d_k * sizeof(double));
    memcpy(c->v + row_of(&c->pool, s, s->length) * c->d_v, v + i * c->d_v, c->d_v * sizeof(double));
  }
}

kvc_status kvc_append(kvc_cache* c, int64_t seq, kvc_array k, kvc_array v, const int64_t* tokens, size_t n_tokens,
                      kvc_preempted* preempted) {
  (void)tokens, (void)n_tokens, (void)preempted;
  sequence* s = live_sequence(&c->pool, seq);
  size_t steps;
  if (!s) return KVC_INDEX;
  if (!append_steps(c, k, v, &steps)) return KVC_SHAPE;
  if (blocks_needed(&c->pool, s, steps) > c->pool.n_free) return KVC_CAPACITY;
  write_steps(c, s, k.data, v.data, steps);
  return KVC_OK;
}

/* Two-pass softmax of q over the sequence's first n rows. */
static void attend(const kvc_cache* c, const sequence* s, const double* q, size_t n, double* output, double* weights) {
  double m = -INFINITY, sum = 0;
  for (size_t i = 0; i < n; ++i) {
    double score = 0;
    for (size_t j = 0; j < c->d_k; ++j) score += c->k[row_of(&c->pool, s, i) * c->d_k + j] * q[j];
    weights[i] = score / sqrt((double)c->d_k);
    if (weights[i] > m) m = weights[i];
  }
  for (size_t i = 0; i < n; ++i) sum += (weights[i] = exp(weights[i] - m));
  for (size_t j = 0; j < c->d_v; ++j) output[j] = 0;
  for (size_t i = 0; i < n; ++i) {
    weights[i] /= sum;
    for (size_t j = 0; j < c->d_v; ++j) output[j] += weights[i] * c->v[row_of(&c->pool, s, i) * c->d_v + j];
  }
}

kvc_status kvc_decode(kvc_cache* c, int64_t seq, kvc_array q, kvc_array mask, double* output, size_t output_cap,
                      size_t* n_output, double* weights, size_t weights_cap, size_t* n_weights) {
  (void)mask;
  const sequence* s = live_sequence(&c->pool, seq);
  if (!s) return KVC_INDEX;
  if (q.rank != 1 || q.dims[0] != c->d_k) return KVC_SHAPE;
  if (s->length == 0) return KVC_EMPTY;
  *n_output = c->d_v, *n_weights = s->length;
  if (output_cap < *n_output || weights_cap < *n_weights) return KVC_MORE;
  attend(c, s, q.data, s->length, output, weights);
  return KVC_OK;
}

/* Appends the chunk, then query i attends the rows before the chunk and the chunk's first i + 1 steps; its weights
 * row runs over all before + m rows, exactly 0 past its own step. */
kvc_status kvc_prefill(kvc_cache* c, int64_t seq, kvc_array k, kvc_array v, const int64_t* tokens, size_t n_tokens,
                       kvc_array q, double* output, size_t output_cap, size_t* n_output, double* weights,
                       size_t weights_cap, size_t* n_weights, kvc_preempted* preempted) {
  (void)tokens, (void)n_tokens, (void)preempted;
  sequence* s = live_sequence(&c->pool, seq);
  size_t m;
  if (!s) return KVC_INDEX;
  if (!append_steps(c, k, v, &m) || q.rank != 2 || q.dims[0] != m || q.dims[1] != c->d_k) return KVC_SHAPE;
  const size_t before = s->length, width = before + m;
  *n_output = m * c->d_v, *n_weights = m * width;
  if (output_cap < *n_output || weights_cap < *n_weights) return KVC_MORE; /* before anything is appended */
  if (blocks_needed(&c->pool, s, m) > c->pool.n_free) return KVC_CAPACITY;
  write_steps(c, s, k.data, v.data, m);
  for (size_t i = 0; i < m; ++i) {
    double* row = weights + i * width;
    attend(c, s, q.data + i * c->d_k, before + i + 1, output + i * c->d_v, row);
    for (size_t j = before + i + 1; j < width; ++j) row[j] = 0;
  }
  return KVC_OK;
}

/* Drops the newest count steps (block_pool.h). */
kvc_status kvc_rollback(kvc_cache* c, int64_t seq, int64_t count) {
  const kvc_status st = pool_rollback(&c->pool, seq, count);
#ifdef PAGED_BUG_ROLLBACK_TRUNCATES_SHARED
  const sequence* s = live_sequence(&c->pool, seq);
  const size_t bs = c->pool.block_size, kept = st == KVC_OK ? s->length % bs : 0;
  if (kept) {
    const size_t block = s->table[s->n_table - 1];
    for (size_t r = block * bs + kept; r < (block + 1) * bs; ++r) {
      for (size_t j = 0; j < c->d_k; ++j) c->k[r * c->d_k + j] = NAN;
      for (size_t j = 0; j < c->d_v; ++j) c->v[r * c->d_v + j] = NAN;
    }
  }
#endif
  return st;
}

kvc_status kvc_create(kvc_cache* c, const int64_t* tokens, size_t n_tokens, int64_t* id) {
  return (void)tokens, (void)n_tokens, pool_create(&c->pool, id);
}
kvc_status kvc_fork(kvc_cache* c, int64_t seq, int64_t* id) { return pool_fork(&c->pool, seq, id); }
kvc_status kvc_release(kvc_cache* c, int64_t seq) { return pool_release(&c->pool, seq); }

static void fill_stream(const void* cache, const sequence* s, kvc_stream* out) {
  const kvc_cache* c = cache;
  for (size_t i = 0; i < s->length; ++i) {
    memcpy(out->keys + i * c->d_k, c->k + row_of(&c->pool, s, i) * c->d_k, c->d_k * sizeof(double));
    memcpy(out->values + i * c->d_v, c->v + row_of(&c->pool, s, i) * c->d_v, c->d_v * sizeof(double));
  }
}

kvc_status kvc_observe(kvc_cache* c, kvc_observation* o) {
  const size_t block_bytes = c->pool.block_size * (c->d_k + c->d_v) * sizeof(double);
  return pool_observe(&c->pool, o, c->d_k, c->d_v, block_bytes, fill_stream, c);
}
