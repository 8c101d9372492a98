/* A sliding-window KV cache in plain C behind kvconform's C ABI (include/kvconform/c_port.h).
 * Built as is, and with -DRING_BUG_HEAD_OFF_BY_ONE, which reads the oldest row from the wrong slot
 * once the ring has wrapped. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kvconform/c_port.h>

struct kvc_cache {
  size_t window, d_k, d_v, total;
  double *k, *v; /* window rows each, slot = step mod window */
};

/* A test builds the cache claiming version 1 of the ABI, which the harness must refuse. */
#ifndef RING_ABI_VERSION
#define RING_ABI_VERSION KVC_ABI_VERSION
#endif

int kvc_abi_version(void) { return RING_ABI_VERSION; }

const char* kvc_hello(void) {
  return "{\"protocol\": 2, \"name\": \"c-ring\", \"kinds\": {\"ring\": {\"capabilities\": [\"decode\"]}}}";
}

kvc_status kvc_open(const kvc_config* c, kvc_cache** out) {
  if (strcmp(c->kind, "ring") != 0) return KVC_UNSUPPORTED;
  if (c->keep != 0) return KVC_UNSUPPORTED; /* no attention sinks */
  kvc_cache* r = calloc(1, sizeof *r);
  if (!r) return KVC_CAPACITY;
  r->window = c->capacity, r->d_k = c->d_k, r->d_v = c->d_v;
  r->k = malloc(c->capacity * c->d_k * sizeof(double));
  r->v = malloc(c->capacity * c->d_v * sizeof(double));
  if (!r->k || !r->v) {
    kvc_close(r);
    return KVC_CAPACITY;
  }
  *out = r;
  return KVC_OK;
}

void kvc_close(kvc_cache* r) {
  if (!r) return;
  free(r->k), free(r->v), free(r);
}

/* Steps and width of a 1-D (one step) or 2-D (rows are steps) array; 0 when the rank is wrong. */
static int steps_of(kvc_array a, size_t* steps, size_t* width) {
  if (a.rank == 1) return *steps = 1, *width = a.dims[0], 1;
  if (a.rank == 2) return *steps = a.dims[0], *width = a.dims[1], 1;
  return 0;
}

static size_t size_of(const kvc_cache* r) { return r->total < r->window ? r->total : r->window; }

/* The slot of held row i, oldest first. */
static size_t slot(const kvc_cache* r, size_t i) {
  size_t oldest = (r->total - size_of(r)) % r->window;
#ifdef RING_BUG_HEAD_OFF_BY_ONE
  if (r->total > r->window) oldest = (oldest + 1) % r->window;
#endif
  return (oldest + i) % r->window;
}

kvc_status kvc_append(kvc_cache* r, int64_t seq, kvc_array k, kvc_array v, const int64_t* tokens, size_t n,
                      kvc_preempted* preempted) {
  (void)seq, (void)tokens, (void)n, (void)preempted;
  size_t ks, kw, vs, vw;
  if (!steps_of(k, &ks, &kw) || !steps_of(v, &vs, &vw) || kw != r->d_k || vw != r->d_v || ks != vs) return KVC_SHAPE;
  for (size_t i = 0; i < ks; ++i) { /* in order: a later row in the same slot overwrites an earlier one */
    const size_t s = (r->total + i) % r->window;
    memcpy(r->k + s * r->d_k, k.data + i * r->d_k, r->d_k * sizeof(double));
    memcpy(r->v + s * r->d_v, v.data + i * r->d_v, r->d_v * sizeof(double));
  }
  r->total += ks;
  return KVC_OK;
}

kvc_status kvc_decode(kvc_cache* r, int64_t seq, kvc_array q, kvc_array mask, double* output, size_t output_cap,
                      size_t* n_output, double* weights, size_t weights_cap, size_t* n_weights) {
  (void)seq, (void)mask;
  const size_t n = size_of(r);
  if (q.rank != 1 || q.dims[0] != r->d_k) return KVC_SHAPE;
  if (n == 0) return KVC_EMPTY;
  *n_output = r->d_v, *n_weights = n;
  if (output_cap < r->d_v || weights_cap < n) return KVC_MORE;
  double m = -INFINITY, sum = 0;
  for (size_t i = 0; i < n; ++i) { /* scores, then their max */
    double s = 0;
    for (size_t j = 0; j < r->d_k; ++j) s += r->k[slot(r, i) * r->d_k + j] * q.data[j];
    weights[i] = s / sqrt((double)r->d_k);
    if (weights[i] > m) m = weights[i];
  }
  for (size_t i = 0; i < n; ++i) sum += (weights[i] = exp(weights[i] - m));
  for (size_t c = 0; c < r->d_v; ++c) output[c] = 0;
  for (size_t i = 0; i < n; ++i) {
    weights[i] /= sum;
    for (size_t c = 0; c < r->d_v; ++c) output[c] += weights[i] * r->v[slot(r, i) * r->d_v + c];
  }
  return KVC_OK;
}

kvc_status kvc_observe(kvc_cache* r, kvc_observation* o) {
  const size_t n = size_of(r);
  o->n_streams = 1, o->n_counters = 2, o->n_block_refs = 0;
  if (o->streams_cap < 1 || o->counters_cap < 2) return KVC_MORE;
  kvc_stream* s = &o->streams[0];
  s->name[0] = '\0';
  s->rows = n, s->d_k = r->d_k, s->d_v = r->d_v, s->n_positions = n, s->n_blocks = 0;
  if (s->keys_cap < n * r->d_k || s->values_cap < n * r->d_v || s->positions_cap < n) return KVC_MORE;
  for (size_t i = 0; i < n; ++i) {
    memcpy(s->keys + i * r->d_k, r->k + slot(r, i) * r->d_k, r->d_k * sizeof(double));
    memcpy(s->values + i * r->d_v, r->v + slot(r, i) * r->d_v, r->d_v * sizeof(double));
    s->positions[i] = (int64_t)(r->total - n + i);
  }
  snprintf(o->counters[0].name, sizeof o->counters[0].name, "size");
  o->counters[0].value = (int64_t)n;
  snprintf(o->counters[1].name, sizeof o->counters[1].name, "total");
  o->counters[1].value = (int64_t)r->total;
  return KVC_OK;
}

/* The ops of other kinds. */
kvc_status kvc_create(kvc_cache* r, const int64_t* t, size_t n, int64_t* id) {
  return (void)r, (void)t, (void)n, (void)id, KVC_UNSUPPORTED;
}
kvc_status kvc_fork(kvc_cache* r, int64_t seq, int64_t* id) { return (void)r, (void)seq, (void)id, KVC_UNSUPPORTED; }
kvc_status kvc_release(kvc_cache* r, int64_t seq) { return (void)r, (void)seq, KVC_UNSUPPORTED; }
kvc_status kvc_update(kvc_cache* r, int64_t l, int64_t s, kvc_array k, kvc_array v) {
  return (void)r, (void)l, (void)s, (void)k, (void)v, KVC_UNSUPPORTED;
}
kvc_status kvc_reorder(kvc_cache* r, const int64_t* index, size_t n) {
  return (void)r, (void)index, (void)n, KVC_UNSUPPORTED;
}
