/* A flat KV cache in plain C storing keys and values as llama.cpp's q8_0 (blocks of 32 int8 along d, symmetric,
 * an fp16 scale of amax / 127) behind kvconform's C ABI (include/kvconform/c_port.h), exposing its scales, with
 * prefill and rollback (docs/kinds/flat.md).
 * Built as is, and with -DQ8_BUG_SCALE_128, which divides by 128 (the code range's size) instead of 127. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kvconform/c_port.h>

enum { BLOCK = 32 };

#ifdef Q8_BUG_SCALE_128
#define Q8_DIVISOR 128.0
#else
#define Q8_DIVISOR 127.0
#endif

/* One side (keys or values): per row, its codes and one fp16 scale (held as the double it stands for) per block. */
typedef struct {
  size_t width, blocks;
  int8_t* codes;  /* capacity x width */
  double* scales; /* capacity x blocks */
} q8_side;

struct kvc_cache {
  size_t capacity, rows;
  q8_side k, v;
};

int kvc_abi_version(void) { return KVC_ABI_VERSION; }

const char* kvc_hello(void) {
  return "{\"protocol\": 2, \"name\": \"c-q8_0\", \"kinds\": {\"flat\": {\"profile\": {"
         "\"keys\": \"int8 group 32 token symmetric scale f16 residual 0\", "
         "\"values\": \"int8 group 32 token symmetric scale f16 residual 0\"}, "
         "\"capabilities\": [\"decode\", \"prefill\", \"rollback\"]}}}";
}

/* x rounded to the nearest fp16 value, ties to even; beyond the largest finite one, infinity. */
static double to_fp16(double x) {
  if (x == 0 || !isfinite(x)) return x;
  int e = ilogb(x);
  if (e < -14) e = -14; /* subnormals share the smallest normal exponent's spacing */
  const double spacing = ldexp(1.0, e - 10);
  const double r = nearbyint(x / spacing) * spacing; /* the default rounding mode: to nearest even */
  return fabs(r) > 65504 ? copysign(INFINITY, x) : r;
}

static int side_init(q8_side* s, size_t capacity, size_t width) {
  s->width = width, s->blocks = (width + BLOCK - 1) / BLOCK;
  s->codes = malloc(capacity * width);
  s->scales = malloc(capacity * s->blocks * sizeof(double));
  return s->codes && s->scales;
}

/* Row r of the side from the doubles at x: llama.cpp's quantize_row_q8_0 (codes from the unrounded scale, rounded
 * half away from zero; the scale stored in fp16). */
static void side_store(q8_side* s, size_t r, const double* x) {
  for (size_t b = 0; b < s->blocks; ++b) {
    const size_t first = b * BLOCK, n = s->width - first < BLOCK ? s->width - first : BLOCK;
    double amax = 0;
    for (size_t j = 0; j < n; ++j) amax = fmax(amax, fabs(x[first + j]));
    const double d = amax / Q8_DIVISOR, id = d != 0 ? 1 / d : 0;
    s->scales[r * s->blocks + b] = to_fp16(d);
    for (size_t j = 0; j < n; ++j) {
      const double c = round(x[first + j] * id); /* NaN for an infinite input: code 0 */
      s->codes[r * s->width + first + j] = (int8_t)(isnan(c) ? 0 : c > 127 ? 127 : c < -127 ? -127 : c);
    }
  }
}

/* Value j of row r, dequantized: what the cache attends over and exposes. */
static double side_value(const q8_side* s, size_t r, size_t j) {
  return s->scales[r * s->blocks + j / BLOCK] * s->codes[r * s->width + j];
}

void kvc_close(kvc_cache* c) {
  if (!c) return;
  free(c->k.codes), free(c->k.scales), free(c->v.codes), free(c->v.scales), free(c);
}

kvc_status kvc_open(const kvc_config* config, kvc_cache** out) {
  if (strcmp(config->kind, "flat") != 0) return KVC_UNSUPPORTED;
  kvc_cache* c = calloc(1, sizeof *c);
  if (!c) return KVC_CAPACITY;
  c->capacity = config->capacity;
  if (!side_init(&c->k, c->capacity, config->d_k) || !side_init(&c->v, c->capacity, config->d_v)) {
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

/* The steps of an append's k and v; 0 when they are not steps of this cache's widths. */
static int append_steps(const kvc_cache* c, kvc_array k, kvc_array v, size_t* steps) {
  size_t ks, kw, vs, vw;
  if (!steps_of(k, &ks, &kw) || !steps_of(v, &vs, &vw) || kw != c->k.width || vw != c->v.width || ks != vs) return 0;
  return *steps = ks, 1;
}

static void store(kvc_cache* c, kvc_array k, kvc_array v, size_t steps) {
  for (size_t i = 0; i < steps; ++i, ++c->rows) {
    side_store(&c->k, c->rows, k.data + i * c->k.width);
    side_store(&c->v, c->rows, v.data + i * c->v.width);
  }
}

kvc_status kvc_append(kvc_cache* c, int64_t seq, kvc_array k, kvc_array v, const int64_t* tokens, size_t n_tokens,
                      kvc_preempted* preempted) {
  (void)seq, (void)tokens, (void)n_tokens, (void)preempted;
  size_t steps;
  if (!append_steps(c, k, v, &steps)) return KVC_SHAPE;
  if (c->rows + steps > c->capacity) return KVC_CAPACITY;
  store(c, k, v, steps);
  return KVC_OK;
}

/* Two-pass softmax of q over the first n dequantized rows, in double. A live key that is not finite (a scale that
 * overflowed fp16) makes every output NaN: the edge rule of docs/numerics.md §4.3. */
static void attend(const kvc_cache* c, const double* q, size_t n, double* output, double* weights) {
  const size_t dk = c->k.width, dv = c->v.width;
  double m = -INFINITY, sum = 0; /* plain IEEE two-pass: non-finite rows give what docs/numerics.md §4.5 lists */
  for (size_t i = 0; i < n; ++i) {
    double s = 0;
    for (size_t j = 0; j < dk; ++j) {
      const double key = side_value(&c->k, i, j);
      s += key * q[j];
    }
    weights[i] = s / sqrt((double)dk);
    if (weights[i] > m) m = weights[i];
  }
  for (size_t i = 0; i < n; ++i) sum += (weights[i] = exp(weights[i] - m));
  for (size_t j = 0; j < dv; ++j) output[j] = 0;
  for (size_t i = 0; i < n; ++i) {
    weights[i] /= sum;
    for (size_t j = 0; j < dv; ++j) output[j] += weights[i] * side_value(&c->v, i, j);
  }
}

kvc_status kvc_decode(kvc_cache* c, int64_t seq, kvc_array q, kvc_array mask, double* output, size_t output_cap,
                      size_t* n_output, double* weights, size_t weights_cap, size_t* n_weights) {
  (void)seq, (void)mask;
  const size_t n = c->rows, dv = c->v.width;
  if (q.rank != 1 || q.dims[0] != c->k.width) return KVC_SHAPE;
  if (n == 0) return KVC_EMPTY;
  *n_output = dv, *n_weights = n;
  if (output_cap < dv || weights_cap < n) return KVC_MORE;
  attend(c, q.data, n, output, weights);
  return KVC_OK;
}

/* Stores the chunk, then query i attends the stored rows up to the chunk's step i; weights (m, before + m). */
kvc_status kvc_prefill(kvc_cache* c, int64_t seq, kvc_array k, kvc_array v, const int64_t* tokens, size_t n_tokens,
                       kvc_array q, double* output, size_t output_cap, size_t* n_output, double* weights,
                       size_t weights_cap, size_t* n_weights, kvc_preempted* preempted) {
  (void)seq, (void)tokens, (void)n_tokens, (void)preempted;
  size_t m;
  if (!append_steps(c, k, v, &m) || q.rank != 2 || q.dims[0] != m || q.dims[1] != c->k.width) return KVC_SHAPE;
  if (c->rows + m > c->capacity) return KVC_CAPACITY;
  const size_t before = c->rows, width = before + m;
  *n_output = m * c->v.width, *n_weights = m * width;
  if (output_cap < *n_output || weights_cap < *n_weights) return KVC_MORE; /* before anything is stored */
  store(c, k, v, m);
  for (size_t i = 0; i < m; ++i) {
    double* row = weights + i * width;
    attend(c, q.data + i * c->k.width, before + i + 1, output + i * c->v.width, row);
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

/* The side's dequantized rows and their scales into the stream's buffers; 0 when a buffer is too small. */
static int side_observe(const q8_side* s, size_t rows, double* values, size_t values_cap, kvc_numbers* scales) {
  scales->n = rows * s->blocks;
  if (values_cap < rows * s->width || scales->cap < scales->n) return 0;
  for (size_t r = 0; r < rows; ++r)
    for (size_t j = 0; j < s->width; ++j) values[r * s->width + j] = side_value(s, r, j);
  memcpy(scales->data, s->scales, scales->n * sizeof(double));
  return 1;
}

kvc_status kvc_observe(kvc_cache* c, kvc_observation* o) {
  o->n_streams = 1, o->n_counters = 1, o->n_block_refs = 0;
  if (o->streams_cap < 1 || o->counters_cap < 1) return KVC_MORE;
  kvc_stream* s = &o->streams[0];
  s->name[0] = '\0';
  s->rows = c->rows, s->d_k = c->k.width, s->d_v = c->v.width, s->n_positions = 0, s->n_blocks = 0;
  const int fits_k = side_observe(&c->k, c->rows, s->keys, s->keys_cap, &s->key_scales);
  const int fits_v = side_observe(&c->v, c->rows, s->values, s->values_cap, &s->value_scales);
  if (!fits_k || !fits_v) return KVC_MORE;
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
