/* A sliding-window KV cache in plain C behind kvconform's C ABI (include/kvconform/c_port.h), with attention sinks
 * (keep), a reserve of rows beyond the window, prefill and rollback (docs/kinds/ring.md).
 * Built as is, with -DRING_BUG_HEAD_OFF_BY_ONE, which reads every row after the sinks one slot too far once the
 * ring has wrapped, and with -DRING_BUG_ROLLBACK_STALE_WINDOW, whose decodes after a rollback still attend the
 * window that ended at the rolled-back steps, read from their slots. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kvconform/c_port.h>

/* W + R slots (R the reserve): the first `keep` hold the sinks (the first steps ever appended); every later step p
 * shares the other W + R - keep in turn (slot keep + (p - keep) mod (W + R - keep)). Decode attends the sinks and
 * the last W - keep steps; the rows beyond let a rollback of up to R steps restore the earlier window. */
struct kvc_cache {
  size_t window, keep, slots, d_k, d_v;
  size_t held, total;  /* rows held; steps appended (less those rolled back) */
  size_t ghost;        /* the stale-window twin: steps rolled back that its decodes still count */
  double *k, *v;       /* slots rows each */
  size_t* row_slot;    /* scratch: the slot of each row an attention reads */
  unsigned char* live; /* scratch: whether the attention sees that row */
  double* scratch;     /* scratch: one query's weights over the held rows */
};

/* Tests build the cache claiming another version of the ABI: 1, which the harness refuses, or 2, which has no
 * reserve, prefill or rollback (RING_SPECULATION 0), also while it declares and exports them (RING_SPECULATION 1). */
#ifndef RING_ABI_VERSION
#define RING_ABI_VERSION KVC_ABI_VERSION
#endif
#ifndef RING_SPECULATION
#define RING_SPECULATION (RING_ABI_VERSION >= 3)
#endif

int kvc_abi_version(void) { return RING_ABI_VERSION; }

const char* kvc_hello(void) {
#if RING_SPECULATION
  return "{\"protocol\": 2, \"name\": \"c-ring\", \"kinds\": {\"ring\": {\"capabilities\": "
         "[\"decode\", \"prefill\", \"rollback\", \"sinks\"]}}}";
#else
  return "{\"protocol\": 2, \"name\": \"c-ring\", \"kinds\": {\"ring\": {\"capabilities\": [\"decode\", \"sinks\"]}}}";
#endif
}

void kvc_close(kvc_cache* r) {
  if (!r) return;
  free(r->k), free(r->v), free(r->row_slot), free(r->live), free(r->scratch), free(r);
}

kvc_status kvc_open(const kvc_config* c, kvc_cache** out) {
  if (strcmp(c->kind, "ring") != 0 || c->keep >= c->capacity) return KVC_UNSUPPORTED;
  kvc_cache* r = calloc(1, sizeof *r);
  if (!r) return KVC_CAPACITY;
  r->window = c->capacity, r->keep = c->keep, r->d_k = c->d_k, r->d_v = c->d_v;
#if RING_SPECULATION
  r->slots = c->capacity + c->reserve;
#else
  r->slots = c->capacity; /* a version 2 library knows no reserve (the harness sends it none) */
#endif
  r->k = calloc(r->slots * r->d_k, sizeof(double));
  r->v = calloc(r->slots * r->d_v, sizeof(double));
  r->row_slot = calloc(r->slots, sizeof(size_t));
  r->live = calloc(r->slots, 1);
  r->scratch = calloc(r->slots, sizeof(double));
  if (!r->k || !r->v || !r->row_slot || !r->live || !r->scratch) {
    kvc_close(r);
    return KVC_CAPACITY;
  }
  *out = r;
  return KVC_OK;
}

/* Steps and width of a 1-D (one step) or 2-D (rows are steps) array; 0 when the rank is wrong. */
static int steps_of(kvc_array a, size_t* steps, size_t* width) {
  if (a.rank == 1) return *steps = 1, *width = a.dims[0], 1;
  if (a.rank == 2) return *steps = a.dims[0], *width = a.dims[1], 1;
  return 0;
}

/* The steps of an append's k and v, or 0 (KVC_SHAPE) when they are not steps of this cache's widths. */
static int append_steps(const kvc_cache* r, kvc_array k, kvc_array v, size_t* steps) {
  size_t ks, kw, vs, vw;
  if (!steps_of(k, &ks, &kw) || !steps_of(v, &vs, &vw) || kw != r->d_k || vw != r->d_v || ks != vs) return 0;
  return *steps = ks, 1;
}

static size_t write_slot(const kvc_cache* r, size_t step) {
  return step < r->keep ? step : r->keep + (step - r->keep) % (r->slots - r->keep);
}

static size_t sinks_held(const kvc_cache* r) { return r->held < r->keep ? r->held : r->keep; }

/* The step of held row i (oldest first): the sinks, then the newest steps up to total - 1. */
static size_t position(const kvc_cache* r, size_t i) { return i < sinks_held(r) ? i : r->total - (r->held - i); }

static size_t slot(const kvc_cache* r, size_t i) {
  const size_t p = position(r, i);
#ifdef RING_BUG_HEAD_OFF_BY_ONE
  if (p >= r->keep && r->total > r->slots) return r->keep + (p - r->keep + 1) % (r->slots - r->keep);
#endif
  return write_slot(r, p);
}

/* Whether step p is attended with t steps appended: a sink, or among the last W - keep. */
static int in_window(const kvc_cache* r, size_t p, size_t t) { return p < r->keep || p + (r->window - r->keep) >= t; }

/* Stores one step: a later step in the same slot overwrites an earlier one. */
static void store(kvc_cache* r, const double* k, const double* v) {
  const size_t s = write_slot(r, r->total);
  memcpy(r->k + s * r->d_k, k, r->d_k * sizeof(double));
  memcpy(r->v + s * r->d_v, v, r->d_v * sizeof(double));
  r->total += 1;
  if (r->held < r->slots) r->held += 1;
}

kvc_status kvc_append(kvc_cache* r, int64_t seq, kvc_array k, kvc_array v, const int64_t* tokens, size_t n,
                      kvc_preempted* preempted) {
  (void)seq, (void)tokens, (void)n, (void)preempted;
  size_t steps;
  if (!append_steps(r, k, v, &steps)) return KVC_SHAPE;
  for (size_t i = 0; i < steps; ++i) store(r, k.data + i * r->d_k, v.data + i * r->d_v);
  return KVC_OK;
}

/* The held rows as an attention reads them, each live when the window at the newest step attends it. */
static size_t window_rows(const kvc_cache* r) {
  for (size_t i = 0; i < r->held; ++i)
    r->row_slot[i] = slot(r, i), r->live[i] = (unsigned char)in_window(r, position(r, i), r->total);
  return r->held;
}

/* Two-pass softmax of q over the n rows in row_slot, those not live weighing exactly 0. */
static void attend(const kvc_cache* r, const double* q, size_t n, double* output, double* weights) {
  double m = -INFINITY, sum = 0;
  for (size_t i = 0; i < n; ++i) { /* scores, then their max */
    double s = 0;
    for (size_t j = 0; j < r->d_k; ++j) s += r->k[r->row_slot[i] * r->d_k + j] * q[j];
    weights[i] = s / sqrt((double)r->d_k);
    if (r->live[i] && weights[i] > m) m = weights[i];
  }
  for (size_t i = 0; i < n; ++i) sum += (weights[i] = r->live[i] ? exp(weights[i] - m) : 0);
  for (size_t c = 0; c < r->d_v; ++c) output[c] = 0;
  for (size_t i = 0; i < n; ++i) {
    weights[i] /= sum;
    if (r->live[i])
      for (size_t c = 0; c < r->d_v; ++c) output[c] += weights[i] * r->v[r->row_slot[i] * r->d_v + c];
  }
}

#ifdef RING_BUG_ROLLBACK_STALE_WINDOW
/* The bug: the sinks and the last W - keep steps up to total + ghost, read from their slots. */
static size_t stale_rows(const kvc_cache* r) {
  const size_t end = r->total + r->ghost, ring = r->window - r->keep;
  size_t n = 0;
  for (size_t p = 0; p < r->keep && p < end; ++p) r->row_slot[n] = write_slot(r, p), r->live[n++] = 1;
  for (size_t p = end > r->keep + ring ? end - ring : r->keep; p < end; ++p)
    r->row_slot[n] = write_slot(r, p), r->live[n++] = 1;
  return n;
}
#endif

kvc_status kvc_decode(kvc_cache* r, int64_t seq, kvc_array q, kvc_array mask, double* output, size_t output_cap,
                      size_t* n_output, double* weights, size_t weights_cap, size_t* n_weights) {
  (void)seq, (void)mask;
  if (q.rank != 1 || q.dims[0] != r->d_k) return KVC_SHAPE;
  if (r->held == 0) return KVC_EMPTY;
#ifdef RING_BUG_ROLLBACK_STALE_WINDOW
  const size_t n = r->ghost ? stale_rows(r) : window_rows(r);
#else
  const size_t n = window_rows(r);
#endif
  *n_output = r->d_v, *n_weights = n;
  if (output_cap < r->d_v || weights_cap < n) return KVC_MORE;
  attend(r, q.data, n, output, weights);
  return KVC_OK;
}

#if RING_SPECULATION
/* Appends the chunk one step at a time, attending with query i once step i is held: a chunk longer than the
 * window evicts rows its early queries see. Weights row i runs over the `before` rows held before the chunk, then
 * the chunk's steps. */
kvc_status kvc_prefill(kvc_cache* r, int64_t seq, kvc_array k, kvc_array v, const int64_t* tokens, size_t n_tokens,
                       kvc_array q, double* output, size_t output_cap, size_t* n_output, double* weights,
                       size_t weights_cap, size_t* n_weights, kvc_preempted* preempted) {
  (void)seq, (void)tokens, (void)n_tokens, (void)preempted;
  size_t m;
  if (!append_steps(r, k, v, &m) || q.rank != 2 || q.dims[0] != m || q.dims[1] != r->d_k) return KVC_SHAPE;
  const size_t before = r->held, t0 = r->total, width = before + m;
  *n_output = m * r->d_v, *n_weights = m * width;
  if (output_cap < *n_output || weights_cap < *n_weights) return KVC_MORE; /* before anything is appended */
  for (size_t i = 0; i < m; ++i) {
    store(r, k.data + i * r->d_k, v.data + i * r->d_v);
    const size_t n = window_rows(r);
    attend(r, q.data + i * r->d_k, n, output + i * r->d_v, r->scratch);
    double* row = weights + i * width;
    for (size_t c = 0; c < width; ++c) row[c] = 0;
    for (size_t h = 0; h < n; ++h) { /* each held row at its column: a sink, a row held before, or the chunk's */
      const size_t p = position(r, h);
      row[p >= t0 ? before + (p - t0) : p < r->keep && p < before ? p : before - (t0 - p)] = r->scratch[h];
    }
  }
  return KVC_OK;
}

/* Drops the newest count steps, unless the window at the earlier step attends a row no longer held. */
kvc_status kvc_rollback(kvc_cache* r, int64_t seq, int64_t count) {
  (void)seq;
  if (count < 0 || (uint64_t)count > r->total) return KVC_INDEX;
  const size_t n = (size_t)count, t = r->total - n, ring = r->window - r->keep, sinks = sinks_held(r);
  const size_t first_needed = t > r->keep + ring ? t - ring : r->keep; /* the oldest step after the sinks it sees */
  const size_t oldest_held = r->total - (r->held - sinks);
  if (first_needed < t && first_needed < oldest_held) return KVC_INDEX;
  const size_t others = r->held - sinks, kept = sinks + others - (others < n ? others : n);
  r->held = kept < t ? kept : t, r->total = t;
#ifdef RING_BUG_ROLLBACK_STALE_WINDOW
  r->ghost += n;
#endif
  return KVC_OK;
}
#endif

kvc_status kvc_observe(kvc_cache* r, kvc_observation* o) {
  const size_t n = r->held;
  o->n_streams = 1, o->n_counters = 2, o->n_block_refs = 0;
  if (o->streams_cap < 1 || o->counters_cap < 2) return KVC_MORE;
  kvc_stream* s = &o->streams[0];
  s->name[0] = '\0';
  s->rows = n, s->d_k = r->d_k, s->d_v = r->d_v, s->n_positions = n, s->n_blocks = 0;
  if (s->keys_cap < n * r->d_k || s->values_cap < n * r->d_v || s->positions_cap < n) return KVC_MORE;
  for (size_t i = 0; i < n; ++i) {
    memcpy(s->keys + i * r->d_k, r->k + slot(r, i) * r->d_k, r->d_k * sizeof(double));
    memcpy(s->values + i * r->d_v, r->v + slot(r, i) * r->d_v, r->d_v * sizeof(double));
    s->positions[i] = (int64_t)position(r, i);
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
