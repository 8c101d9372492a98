/* A latent (MLA) cache in plain C behind kvconform's C ABI (include/kvconform/c_port.h, version 5): one pool of blocks
 * of rows [c ; k_r], sequences that fork by sharing blocks and copy a shared, partly filled last block before writing
 * into it, rollback, an absorbed decode per query head and a prefill of such decodes (docs/kinds/latent.md).
 * Built as is, and with -DLATENT_BUG_WRONG_HEAD, whose head h folds its query with the next head's W_uk. With
 * -DPOOL_KEEP_ROLLED_BACK a rollback keeps its blocks until the release, declared as rollback_blocks=kept unless
 * -DLATENT_UNDECLARED (docs/kinds/latent.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kvconform/c_port.h>

#include "block_pool.h"

struct kvc_cache {
  block_pool pool;
  size_t d_k, d_c;           /* d_k = d_c + d_r: a row; its first d_c entries are its value */
  double* rows;              /* blocks x block_size rows of d_k */
  double *absorbed, *latent; /* one head's q~ = [W_uk^T q_nope ; q_r] (d_k) and its latent average (d_c) */
};

/* Tests build the cache claiming version 4, which has no kvc_prefill_latent, while it declares "prefill". */
#ifndef LATENT_ABI_VERSION
#define LATENT_ABI_VERSION KVC_ABI_VERSION
#endif

int kvc_abi_version(void) { return LATENT_ABI_VERSION; }

#if defined(POOL_KEEP_ROLLED_BACK) && !defined(LATENT_UNDECLARED) /* block_pool.h keeps a rollback's blocks: declared */
#define LATENT_POLICIES ", \"policies\": {\"rollback_blocks\": \"kept\"}"
#else
#define LATENT_POLICIES ""
#endif
const char* kvc_hello(void) {
  return "{\"protocol\": 2, \"name\": \"c-latent\", \"kinds\": {\"latent\": {\"profile\": {\"latent_path\": "
         "\"absorbed\"}, \"capabilities\": [\"decode\", \"prefill\", \"rollback\"]" LATENT_POLICIES "}}}";
}

void kvc_close(kvc_cache* c) {
  if (!c) return;
  pool_free(&c->pool);
  free(c->rows), free(c->absorbed), free(c->latent), free(c);
}

kvc_status kvc_open(const kvc_config* config, kvc_cache** out) {
  if (strcmp(config->kind, "latent") != 0 || config->capacity == 0 || config->block_size == 0 ||
      config->d_v >= config->d_k)
    return KVC_UNSUPPORTED;
  kvc_cache* c = calloc(1, sizeof *c);
  if (!c) return KVC_CAPACITY;
  c->d_k = config->d_k, c->d_c = config->d_v;
  c->rows = calloc(config->capacity * config->block_size * c->d_k + 1, sizeof(double));
  c->absorbed = calloc(c->d_k, sizeof(double));
  c->latent = calloc(c->d_c, sizeof(double));
  if (!pool_init(&c->pool, config->capacity, config->block_size) || !c->rows || !c->absorbed || !c->latent) {
    kvc_close(c);
    return KVC_CAPACITY;
  }
  *out = c;
  return KVC_OK;
}

/* Row i of the sequence, in the pool. */
static const double* row_at(const kvc_cache* c, const sequence* s, size_t i) {
  return c->rows + row_of(&c->pool, s, i) * c->d_k;
}

kvc_status kvc_append(kvc_cache* c, int64_t seq, kvc_array k, kvc_array v, const int64_t* tokens, size_t n_tokens,
                      kvc_preempted* preempted) {
  (void)tokens, (void)n_tokens, (void)preempted;
  sequence* s = live_sequence(&c->pool, seq);
  if (!s) return KVC_INDEX;
  const size_t steps = k.rank == 1 ? 1 : k.rank == 2 ? k.dims[0] : 0, width = k.rank ? k.dims[k.rank - 1] : 0;
  if (v.rank != 0 || (k.rank != 1 && k.rank != 2) || width != c->d_k) return KVC_SHAPE; /* a latent append has no v */
  if (blocks_needed(&c->pool, s, steps) > c->pool.n_free) return KVC_CAPACITY;
  size_t copy[2];
  const size_t bs = c->pool.block_size, row = c->d_k * sizeof(double);
  grow_table(&c->pool, s, steps, copy);
  if (copy[1] < c->pool.blocks) memcpy(c->rows + copy[1] * bs * c->d_k, c->rows + copy[0] * bs * c->d_k, bs * row);
  for (size_t i = 0; i < steps; ++i, ++s->length) memcpy((double*)row_at(c, s, s->length), k.data + i * c->d_k, row);
  return KVC_OK;
}

/* Head h of an absorbed decode: q~ = W_uk^T q_nope beside q_r, scores over the rows with the full head's scale
 * 1/sqrt(d_nope + d_r), the latent average of the rows' first d_c entries, then W_uv applied to it. */
static void attend_head(kvc_cache* c, const sequence* s, size_t n, size_t h, size_t heads, size_t d_nope, size_t d_vh,
                        const double* q, kvc_array w_uk, kvc_array w_uv, double* output, double* weights) {
  const size_t d_r = c->d_k - c->d_c;
#ifdef LATENT_BUG_WRONG_HEAD
  const size_t fold = (h + 1) % heads;
#else
  const size_t fold = h;
  (void)heads;
#endif
  const double* qh = q + h * (d_nope + d_r);
  const double* uk = w_uk.data + fold * d_nope * c->d_c;
  for (size_t m = 0; m < c->d_c; ++m) {
    double sum = 0;
    for (size_t j = 0; j < d_nope; ++j) sum += uk[j * c->d_c + m] * qh[j];
    c->absorbed[m] = sum;
  }
  for (size_t j = 0; j < d_r; ++j) c->absorbed[c->d_c + j] = qh[d_nope + j];
  const double scale = 1 / sqrt((double)(d_nope + d_r));
  double top = -INFINITY, total = 0;
  for (size_t i = 0; i < n; ++i) {
    double score = 0;
    for (size_t j = 0; j < c->d_k; ++j) score += row_at(c, s, i)[j] * c->absorbed[j];
    weights[i] = score * scale;
    if (weights[i] > top) top = weights[i];
  }
  for (size_t i = 0; i < n; ++i) total += (weights[i] = exp(weights[i] - top));
  for (size_t m = 0; m < c->d_c; ++m) c->latent[m] = 0;
  for (size_t i = 0; i < n; ++i) {
    weights[i] /= total;
    for (size_t m = 0; m < c->d_c; ++m) c->latent[m] += weights[i] * row_at(c, s, i)[m];
  }
  const double* uv = w_uv.data + h * d_vh * c->d_c;
  for (size_t o = 0; o < d_vh; ++o) {
    double sum = 0;
    for (size_t m = 0; m < c->d_c; ++m) sum += uv[o * c->d_c + m] * c->latent[m];
    output[o] = sum;
  }
}

/* The heads of q (rank `rank`: a decode's (Hq, d_nope + d_r) or a prefill's (m, Hq, d_nope + d_r)) when its
 * projections agree with it and the rows; 0 otherwise (KVC_SHAPE). */
static size_t head_shape(const kvc_cache* c, kvc_array q, size_t rank, kvc_array w_uk, kvc_array w_uv, size_t* d_nope,
                         size_t* d_vh) {
  const size_t d_r = c->d_k - c->d_c, heads = q.rank == rank ? q.dims[rank - 2] : 0;
  if (heads == 0 || q.dims[rank - 1] <= d_r || w_uk.rank != 3 || w_uv.rank != 3) return 0;
  *d_nope = q.dims[rank - 1] - d_r, *d_vh = w_uv.dims[1];
  if (w_uk.dims[0] != heads || w_uk.dims[1] != *d_nope || w_uk.dims[2] != c->d_c || w_uv.dims[0] != heads ||
      *d_vh == 0 || w_uv.dims[2] != c->d_c)
    return 0;
  return heads;
}

kvc_status kvc_decode_latent(kvc_cache* c, int64_t seq, kvc_array q, kvc_array w_uk, kvc_array w_uv, double* output,
                             size_t output_cap, size_t* n_output, double* weights, size_t weights_cap,
                             size_t* n_weights) {
  const sequence* s = live_sequence(&c->pool, seq);
  if (!s) return KVC_INDEX;
  size_t d_nope, d_vh;
  const size_t heads = head_shape(c, q, 2, w_uk, w_uv, &d_nope, &d_vh);
  if (heads == 0) return KVC_SHAPE;
  if (s->length == 0) return KVC_EMPTY;
  *n_output = heads * d_vh, *n_weights = heads * s->length;
  if (output_cap < *n_output || weights_cap < *n_weights) return KVC_MORE;
  for (size_t h = 0; h < heads; ++h)
    attend_head(c, s, s->length, h, heads, d_nope, d_vh, q.data, w_uk, w_uv, output + h * d_vh,
                weights + h * s->length);
  return KVC_OK;
}

/* The append of k, then step i's heads attend over the rows up to its own; every refusal and KVC_MORE come first. */
kvc_status kvc_prefill_latent(kvc_cache* c, int64_t seq, kvc_array k, kvc_array q, kvc_array w_uk, kvc_array w_uv,
                              double* output, size_t output_cap, size_t* n_output, double* weights, size_t weights_cap,
                              size_t* n_weights) {
  sequence* s = live_sequence(&c->pool, seq);
  if (!s) return KVC_INDEX;
  size_t d_nope, d_vh;
  const size_t heads = head_shape(c, q, 3, w_uk, w_uv, &d_nope, &d_vh), steps = k.rank == 2 ? k.dims[0] : 0;
  if (k.rank != 2 || k.dims[1] != c->d_k || heads == 0 || q.dims[0] != steps) return KVC_SHAPE;
  if (blocks_needed(&c->pool, s, steps) > c->pool.n_free) return KVC_CAPACITY;
  const size_t before = s->length, n = before + steps;
  *n_output = steps * heads * d_vh, *n_weights = steps * heads * n;
  if (output_cap < *n_output || weights_cap < *n_weights) return KVC_MORE;
  const kvc_array none = {0};
  const kvc_status appended = kvc_append(c, seq, k, none, NULL, 0, NULL);
  if (appended != KVC_OK) return appended;
  for (size_t i = 0; i < steps; ++i)
    for (size_t h = 0; h < heads; ++h) {
      double* w = weights + (i * heads + h) * n;
      attend_head(c, s, before + i + 1, h, heads, d_nope, d_vh, q.data + i * heads * q.dims[2], w_uk, w_uv,
                  output + (i * heads + h) * d_vh, w);
      for (size_t j = before + i + 1; j < n; ++j) w[j] = 0; /* rows after its own: not read */
    }
  return KVC_OK;
}

kvc_status kvc_rollback(kvc_cache* c, int64_t seq, int64_t count) { return pool_rollback(&c->pool, seq, count); }
kvc_status kvc_create(kvc_cache* c, const int64_t* tokens, size_t n_tokens, int64_t* id) {
  return (void)tokens, (void)n_tokens, pool_create(&c->pool, id);
}
kvc_status kvc_fork(kvc_cache* c, int64_t seq, int64_t* id) { return pool_fork(&c->pool, seq, id); }
kvc_status kvc_release(kvc_cache* c, int64_t seq) { return pool_release(&c->pool, seq); }

/* The rows, and as values each row's first d_c entries. */
static void fill_stream(const void* cache, const sequence* s, kvc_stream* out) {
  const kvc_cache* c = cache;
  for (size_t i = 0; i < s->length; ++i) {
    memcpy(out->keys + i * c->d_k, row_at(c, s, i), c->d_k * sizeof(double));
    memcpy(out->values + i * c->d_c, row_at(c, s, i), c->d_c * sizeof(double));
  }
}

/* No value storage: a block holds block_size rows of d_k. */
kvc_status kvc_observe(kvc_cache* c, kvc_observation* o) {
  return pool_observe(&c->pool, o, c->d_k, c->d_c, c->pool.block_size * c->d_k * sizeof(double), fill_stream, c);
}

/* A latent decode is kvc_decode_latent. */
kvc_status kvc_decode(kvc_cache* c, int64_t seq, kvc_array q, kvc_array mask, double* output, size_t output_cap,
                      size_t* n_output, double* weights, size_t weights_cap, size_t* n_weights) {
  return (void)c, (void)seq, (void)q, (void)mask, (void)output, (void)output_cap, (void)n_output, (void)weights,
         (void)weights_cap, (void)n_weights, KVC_UNSUPPORTED;
}
