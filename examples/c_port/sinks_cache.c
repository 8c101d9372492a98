/* A flat KV cache in plain C whose decode is gpt-oss's: learned sinks on a sliding window of 8 rows
 * (docs/numerics.md §7), behind kvconform's C ABI version 6 (include/kvconform/c_port.h): kvc_sinks gives each
 * decode and prefill its sink logit. With prefill and rollback (docs/kinds/flat.md).
 * Built as is, and with -DSINKS_BUG_KEY0_BIAS, which adds the sink to key 0's score (vLLM PR #49815). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kvconform/c_port.h>

enum { WINDOW = 8 };

struct kvc_cache {
  size_t capacity, rows, d_k, d_v;
  double *keys, *values; /* capacity x d_k, capacity x d_v */
  double sink;           /* the next decode's or prefill's sink logit */
};

int kvc_abi_version(void) { return KVC_ABI_VERSION; }

const char* kvc_hello(void) {
  return "{\"protocol\": 2, \"name\": \"c-sinks\", \"kinds\": {\"flat\": {\"profile\": {"
         "\"attention\": {\"sinks\": \"learned\", \"window\": \"sliding 8\"}}, "
         "\"capabilities\": [\"decode\", \"prefill\", \"rollback\"]}}}";
}

void kvc_close(kvc_cache* c) {
  if (!c) return;
  free(c->keys), free(c->values), free(c);
}

kvc_status kvc_open(const kvc_config* config, kvc_cache** out) {
  if (strcmp(config->kind, "flat") != 0) return KVC_UNSUPPORTED;
  kvc_cache* c = calloc(1, sizeof *c);
  if (!c) return KVC_CAPACITY;
  c->capacity = config->capacity, c->d_k = config->d_k, c->d_v = config->d_v;
  c->keys = malloc(c->capacity * c->d_k * sizeof(double)), c->values = malloc(c->capacity * c->d_v * sizeof(double));
  if (!c->keys || !c->values) {
    kvc_close(c);
    return KVC_CAPACITY;
  }
  *out = c;
  return KVC_OK;
}

kvc_status kvc_sinks(kvc_cache* c, kvc_array sinks) {
  if (sinks.rank != 1 || sinks.dims[0] != 1) return KVC_SHAPE;
  c->sink = sinks.data[0];
  return KVC_OK;
}

/* Steps of an append's k and v (1-D: one step; 2-D: rows are steps) of this cache's widths; 0 otherwise. */
static int append_steps(const kvc_cache* c, kvc_array k, kvc_array v, size_t* steps) {
  size_t ks, vs;
  if (k.rank == 1 && k.dims[0] == c->d_k) ks = 1;
  else if (k.rank == 2 && k.dims[1] == c->d_k) ks = k.dims[0];
  else return 0;
  if (v.rank == 1 && v.dims[0] == c->d_v) vs = 1;
  else if (v.rank == 2 && v.dims[1] == c->d_v) vs = v.dims[0];
  else return 0;
  return ks == vs ? (*steps = ks, 1) : 0;
}

kvc_status kvc_append(kvc_cache* c, int64_t seq, kvc_array k, kvc_array v, const int64_t* tokens, size_t n_tokens,
                      kvc_preempted* preempted) {
  (void)seq, (void)tokens, (void)n_tokens, (void)preempted;
  size_t steps;
  if (!append_steps(c, k, v, &steps)) return KVC_SHAPE;
  if (c->rows + steps > c->capacity) return KVC_CAPACITY;
  memcpy(c->keys + c->rows * c->d_k, k.data, steps * c->d_k * sizeof(double));
  memcpy(c->values + c->rows * c->d_v, v.data, steps * c->d_v * sizeof(double));
  c->rows += steps;
  return KVC_OK;
}

/* The query at row p over rows p - WINDOW < r <= p: w_r = e^(s_r - m) / (e^(sink - m) + sum e^(s - m)), weights over
 * rows 0 .. p (0 outside the window). */
static void attend(const kvc_cache* c, const double* q, size_t p, double* output, double* weights) {
  const size_t first = p + 1 > WINDOW ? p + 1 - WINDOW : 0;
  double m = -INFINITY;
  for (size_t i = 0; i <= p; ++i) {
    weights[i] = 0;
    if (i < first) continue;
    double s = 0;
    for (size_t j = 0; j < c->d_k; ++j) s += c->keys[i * c->d_k + j] * q[j];
    weights[i] = s / sqrt((double)c->d_k);
#ifdef SINKS_BUG_KEY0_BIAS
    if (i == first) weights[i] += c->sink;
#endif
    if (weights[i] > m) m = weights[i];
  }
#ifdef SINKS_BUG_KEY0_BIAS
  double sum = 0;
#else
  if (c->sink > m) m = c->sink;
  double sum = exp(c->sink - m);
#endif
  for (size_t i = first; i <= p; ++i) sum += (weights[i] = exp(weights[i] - m));
  for (size_t j = 0; j < c->d_v; ++j) output[j] = 0;
  for (size_t i = first; i <= p; ++i) {
    weights[i] /= sum;
    for (size_t j = 0; j < c->d_v; ++j) output[j] += weights[i] * c->values[i * c->d_v + j];
  }
}

kvc_status kvc_decode(kvc_cache* c, int64_t seq, kvc_array q, kvc_array mask, double* output, size_t output_cap,
                      size_t* n_output, double* weights, size_t weights_cap, size_t* n_weights) {
  (void)seq, (void)mask;
  if (q.rank != 1 || q.dims[0] != c->d_k) return KVC_SHAPE;
  if (c->rows == 0) return KVC_EMPTY;
  *n_output = c->d_v, *n_weights = c->rows;
  if (output_cap < c->d_v || weights_cap < c->rows) return KVC_MORE;
  attend(c, q.data, c->rows - 1, output, weights);
  return KVC_OK;
}

/* Stores the chunk, then query i attends at row before + i; weights (m, before + m). */
kvc_status kvc_prefill(kvc_cache* c, int64_t seq, kvc_array k, kvc_array v, const int64_t* tokens, size_t n_tokens,
                       kvc_array q, double* output, size_t output_cap, size_t* n_output, double* weights,
                       size_t weights_cap, size_t* n_weights, kvc_preempted* preempted) {
  size_t m;
  if (!append_steps(c, k, v, &m) || q.rank != 2 || q.dims[0] != m || q.dims[1] != c->d_k) return KVC_SHAPE;
  if (c->rows + m > c->capacity) return KVC_CAPACITY;
  const size_t before = c->rows, width = before + m;
  *n_output = m * c->d_v, *n_weights = m * width;
  if (output_cap < *n_output || weights_cap < *n_weights) return KVC_MORE; /* before anything is stored */
  kvc_append(c, seq, k, v, tokens, n_tokens, preempted);
  for (size_t i = 0; i < m; ++i) {
    double* row = weights + i * width;
    attend(c, q.data + i * c->d_k, before + i, output + i * c->d_v, row);
    for (size_t j = before + i + 1; j < width; ++j) row[j] = 0;
  }
  return KVC_OK;
}

kvc_status kvc_rollback(kvc_cache* c, int64_t seq, int64_t count) {
  (void)seq;
  if (count < 0 || (uint64_t)count > c->rows) return KVC_INDEX;
  c->rows -= (size_t)count;
  return KVC_OK;
}

kvc_status kvc_observe(kvc_cache* c, kvc_observation* o) {
  o->n_streams = 1, o->n_counters = 1, o->n_block_refs = 0;
  if (o->streams_cap < 1 || o->counters_cap < 1) return KVC_MORE;
  kvc_stream* s = &o->streams[0];
  s->name[0] = '\0';
  s->rows = c->rows, s->d_k = c->d_k, s->d_v = c->d_v, s->n_positions = 0, s->n_blocks = 0;
  s->key_scales.n = s->key_zeros.n = s->value_scales.n = s->value_zeros.n = 0;
  if (s->keys_cap < c->rows * c->d_k || s->values_cap < c->rows * c->d_v) return KVC_MORE;
  memcpy(s->keys, c->keys, c->rows * c->d_k * sizeof(double));
  memcpy(s->values, c->values, c->rows * c->d_v * sizeof(double));
  snprintf(o->counters[0].name, sizeof o->counters[0].name, "size");
  o->counters[0].value = (int64_t)c->rows;
  return KVC_OK;
}

/* The ops of other kinds. */
kvc_status kvc_create(kvc_cache* c, const int64_t* t, size_t n, int64_t* id) {
  return (void)c, (void)t, (void)n, (void)id, KVC_UNSUPPORTED;
}
kvc_status kvc_fork(kvc_cache* c, int64_t seq, int64_t* id) { return (void)c, (void)seq, (void)id, KVC_UNSUPPORTED; }
kvc_status kvc_release(kvc_cache* c, int64_t seq) { return (void)c, (void)seq, KVC_UNSUPPORTED; }
kvc_status kvc_update(kvc_cache* c, int64_t l, int64_t s, kvc_array k, kvc_array v) {
  return (void)c, (void)l, (void)s, (void)k, (void)v, KVC_UNSUPPORTED;
}
kvc_status kvc_reorder(kvc_cache* c, const int64_t* index, size_t n) {
  return (void)c, (void)index, (void)n, KVC_UNSUPPORTED;
}
