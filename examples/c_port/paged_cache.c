/* A paged KV cache in plain C behind kvconform's C ABI (include/kvconform/c_port.h): one pool of blocks, sequences
 * that fork by sharing blocks and copy a shared, partly filled last block before writing into it, prefill and
 * rollback (docs/kinds/paged.md).
 * Built as is, and with -DPAGED_BUG_ROLLBACK_TRUNCATES_SHARED, whose rollback clears the rows past the sequence's
 * new end in the block it keeps, although a fork may still hold that block and read them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kvconform/c_port.h>

typedef struct {
  int live;
  size_t length, n_table;
  size_t* table; /* block numbers; a table never holds more blocks than the pool has */
} sequence;

/* Sequence ids are the harness's handles: every create and fork takes the next one, a refused fork too, so that the
 * observation names its streams "seq H" in handle order (docs/port-protocol.md §7). */
struct kvc_cache {
  size_t blocks, block_size, d_k, d_v;
  double *k, *v;     /* blocks x block_size rows each */
  size_t* refs;      /* the tables holding each block */
  size_t* free_list; /* the blocks no table holds; the last is taken first */
  size_t n_free;
  sequence* seqs;
  size_t n_seqs, seqs_cap;
  double* scratch; /* one query's weights */
};

int kvc_abi_version(void) { return KVC_ABI_VERSION; }

const char* kvc_hello(void) {
  return "{\"protocol\": 2, \"name\": \"c-paged\", \"kinds\": {\"paged\": {\"capabilities\": "
         "[\"decode\", \"prefill\", \"rollback\"]}}}";
}

void kvc_close(kvc_cache* c) {
  if (!c) return;
  for (size_t i = 0; i < c->n_seqs; ++i) free(c->seqs[i].table);
  free(c->k), free(c->v), free(c->refs), free(c->free_list), free(c->seqs), free(c->scratch), free(c);
}

kvc_status kvc_open(const kvc_config* config, kvc_cache** out) {
  if (strcmp(config->kind, "paged") != 0 || config->preempt || config->capacity == 0 || config->block_size == 0)
    return KVC_UNSUPPORTED;
  kvc_cache* c = calloc(1, sizeof *c);
  if (!c) return KVC_CAPACITY;
  c->blocks = config->capacity, c->block_size = config->block_size, c->d_k = config->d_k, c->d_v = config->d_v;
  const size_t rows = c->blocks * c->block_size;
  c->k = calloc(rows * c->d_k + 1, sizeof(double));
  c->v = calloc(rows * c->d_v + 1, sizeof(double));
  c->refs = calloc(c->blocks, sizeof(size_t));
  c->free_list = calloc(c->blocks, sizeof(size_t));
  c->scratch = calloc(rows + 1, sizeof(double));
  if (!c->k || !c->v || !c->refs || !c->free_list || !c->scratch) {
    kvc_close(c);
    return KVC_CAPACITY;
  }
  for (size_t b = 0; b < c->blocks; ++b) c->free_list[c->n_free++] = c->blocks - 1 - b; /* block 0 first */
  *out = c;
  return KVC_OK;
}

/* The next id, for a live sequence that copies sequence `from` (-1: an empty one), or for a dead one (a refused
 * fork); -1 when memory runs out. */
static int64_t add_sequence(kvc_cache* c, int64_t from, int live) {
  if (c->n_seqs == c->seqs_cap) {
    const size_t cap = c->seqs_cap ? 2 * c->seqs_cap : 16;
    sequence* grown = realloc(c->seqs, cap * sizeof *grown);
    if (!grown) return -1;
    c->seqs = grown, c->seqs_cap = cap;
  }
  sequence* s = &c->seqs[c->n_seqs];
  memset(s, 0, sizeof *s);
  if (live && !(s->table = calloc(c->blocks, sizeof(size_t)))) return -1;
  s->live = live;
  if (live && from >= 0) { /* read after the realloc above */
    const sequence* f = &c->seqs[from];
    s->length = f->length, s->n_table = f->n_table;
    memcpy(s->table, f->table, f->n_table * sizeof(size_t));
    for (size_t i = 0; i < s->n_table; ++i) c->refs[s->table[i]] += 1;
  }
  return (int64_t)c->n_seqs++;
}

static sequence* live_sequence(kvc_cache* c, int64_t id) {
  return id >= 0 && (size_t)id < c->n_seqs && c->seqs[id].live ? &c->seqs[id] : NULL;
}

static size_t take_block(kvc_cache* c) {
  const size_t b = c->free_list[--c->n_free];
  c->refs[b] = 1;
  return b;
}

static void drop_block(kvc_cache* c, size_t b) {
  if (--c->refs[b] == 0) c->free_list[c->n_free++] = b;
}

/* Whether the next write copies the sequence's last block first: it is partly filled and another table holds it. */
static int shares_last_block(const kvc_cache* c, const sequence* s) {
  return s->length % c->block_size != 0 && c->refs[s->table[s->n_table - 1]] > 1;
}

static size_t blocks_needed(const kvc_cache* c, const sequence* s, size_t steps) {
  if (steps == 0) return 0; /* an empty append copies nothing */
  const size_t blocks = (s->length + steps + c->block_size - 1) / c->block_size;
  return blocks - s->n_table + (size_t)shares_last_block(c, s);
}

/* The pool row of the sequence's row i. */
static size_t row_of(const kvc_cache* c, const sequence* s, size_t i) {
  return s->table[i / c->block_size] * c->block_size + i % c->block_size;
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
  if (steps && shares_last_block(c, s)) {
    const size_t shared = s->table[s->n_table - 1], own = take_block(c), bs = c->block_size;
    memcpy(c->k + own * bs * c->d_k, c->k + shared * bs * c->d_k, bs * c->d_k * sizeof(double));
    memcpy(c->v + own * bs * c->d_v, c->v + shared * bs * c->d_v, bs * c->d_v * sizeof(double));
    drop_block(c, shared); /* another table still holds it */
    s->table[s->n_table - 1] = own;
  }
  while (s->n_table * c->block_size < s->length + steps) s->table[s->n_table++] = take_block(c);
  for (size_t i = 0; i < steps; ++i, ++s->length) {
    memcpy(c->k + row_of(c, s, s->length) * c->d_k, k + i * c->d_k, c->d_k * sizeof(double));
    memcpy(c->v + row_of(c, s, s->length) * c->d_v, v + i * c->d_v, c->d_v * sizeof(double));
  }
}

kvc_status kvc_append(kvc_cache* c, int64_t seq, kvc_array k, kvc_array v, const int64_t* tokens, size_t n_tokens,
                      kvc_preempted* preempted) {
  (void)tokens, (void)n_tokens, (void)preempted;
  sequence* s = live_sequence(c, seq);
  size_t steps;
  if (!s) return KVC_INDEX;
  if (!append_steps(c, k, v, &steps)) return KVC_SHAPE;
  if (blocks_needed(c, s, steps) > c->n_free) return KVC_CAPACITY;
  write_steps(c, s, k.data, v.data, steps);
  return KVC_OK;
}

/* Two-pass softmax of q over the sequence's first n rows. */
static void attend(const kvc_cache* c, const sequence* s, const double* q, size_t n, double* output, double* weights) {
  double m = -INFINITY, sum = 0;
  for (size_t i = 0; i < n; ++i) {
    double score = 0;
    for (size_t j = 0; j < c->d_k; ++j) score += c->k[row_of(c, s, i) * c->d_k + j] * q[j];
    weights[i] = score / sqrt((double)c->d_k);
    if (weights[i] > m) m = weights[i];
  }
  for (size_t i = 0; i < n; ++i) sum += (weights[i] = exp(weights[i] - m));
  for (size_t j = 0; j < c->d_v; ++j) output[j] = 0;
  for (size_t i = 0; i < n; ++i) {
    weights[i] /= sum;
    for (size_t j = 0; j < c->d_v; ++j) output[j] += weights[i] * c->v[row_of(c, s, i) * c->d_v + j];
  }
}

kvc_status kvc_decode(kvc_cache* c, int64_t seq, kvc_array q, kvc_array mask, double* output, size_t output_cap,
                      size_t* n_output, double* weights, size_t weights_cap, size_t* n_weights) {
  (void)mask;
  const sequence* s = live_sequence(c, seq);
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
  sequence* s = live_sequence(c, seq);
  size_t m;
  if (!s) return KVC_INDEX;
  if (!append_steps(c, k, v, &m) || q.rank != 2 || q.dims[0] != m || q.dims[1] != c->d_k) return KVC_SHAPE;
  const size_t before = s->length, width = before + m;
  *n_output = m * c->d_v, *n_weights = m * width;
  if (output_cap < *n_output || weights_cap < *n_weights) return KVC_MORE; /* before anything is appended */
  if (blocks_needed(c, s, m) > c->n_free) return KVC_CAPACITY;
  write_steps(c, s, k.data, v.data, m);
  for (size_t i = 0; i < m; ++i) {
    double* row = weights + i * width;
    attend(c, s, q.data + i * c->d_k, before + i + 1, output + i * c->d_v, row);
    for (size_t j = before + i + 1; j < width; ++j) row[j] = 0;
  }
  return KVC_OK;
}

/* Drops the newest count steps; the blocks past the new end leave the table, last first. A kept block another table
 * holds is left as it is: the next append copies it first. */
kvc_status kvc_rollback(kvc_cache* c, int64_t seq, int64_t count) {
  sequence* s = live_sequence(c, seq);
  if (!s || count < 0 || (uint64_t)count > s->length) return KVC_INDEX;
  s->length -= (size_t)count;
  while (s->n_table * c->block_size >= s->length + c->block_size) drop_block(c, s->table[--s->n_table]);
#ifdef PAGED_BUG_ROLLBACK_TRUNCATES_SHARED
  const size_t kept = s->length % c->block_size, bs = c->block_size;
  if (kept) {
    const size_t block = s->table[s->n_table - 1];
    for (size_t r = block * bs + kept; r < (block + 1) * bs; ++r) {
      for (size_t j = 0; j < c->d_k; ++j) c->k[r * c->d_k + j] = NAN;
      for (size_t j = 0; j < c->d_v; ++j) c->v[r * c->d_v + j] = NAN;
    }
  }
#endif
  return KVC_OK;
}

kvc_status kvc_create(kvc_cache* c, const int64_t* tokens, size_t n_tokens, int64_t* id) {
  (void)tokens, (void)n_tokens;
  const int64_t made = add_sequence(c, -1, 1);
  if (made < 0) return KVC_CAPACITY;
  *id = made;
  return KVC_OK;
}

kvc_status kvc_fork(kvc_cache* c, int64_t seq, int64_t* id) {
  const int live = live_sequence(c, seq) != NULL;
  const int64_t made = add_sequence(c, live ? seq : -1, live); /* a refused fork uses up its handle too */
  if (!live) return KVC_INDEX;
  if (made < 0) return KVC_CAPACITY;
  *id = made;
  return KVC_OK;
}

kvc_status kvc_release(kvc_cache* c, int64_t seq) {
  sequence* s = live_sequence(c, seq);
  if (!s) return KVC_INDEX;
  while (s->n_table) drop_block(c, s->table[--s->n_table]); /* last block first */
  s->live = 0;
  return KVC_OK;
}

/* Sizes one live sequence's stream needs; whether its buffers hold it. */
static int size_stream(const kvc_cache* c, const sequence* s, int64_t id, kvc_stream* out) {
  snprintf(out->name, sizeof out->name, "seq %lld", (long long)id);
  out->rows = s->length, out->d_k = c->d_k, out->d_v = c->d_v, out->n_positions = 0, out->n_blocks = s->n_table;
  out->key_scales.n = out->key_zeros.n = out->value_scales.n = out->value_zeros.n = 0;
  return out->keys_cap >= s->length * c->d_k && out->values_cap >= s->length * c->d_v && out->blocks_cap >= s->n_table;
}

static void fill_stream(const kvc_cache* c, const sequence* s, kvc_stream* out) {
  for (size_t i = 0; i < s->length; ++i) {
    memcpy(out->keys + i * c->d_k, c->k + row_of(c, s, i) * c->d_k, c->d_k * sizeof(double));
    memcpy(out->values + i * c->d_v, c->v + row_of(c, s, i) * c->d_v, c->d_v * sizeof(double));
  }
  for (size_t b = 0; b < s->n_table; ++b) out->blocks[b] = (int64_t)s->table[b];
}

/* One stream "seq H" per live sequence in id order; free_blocks and bytes_in_use; [block, count] of held blocks. */
kvc_status kvc_observe(kvc_cache* c, kvc_observation* o) {
  size_t live = 0, held = 0;
  for (size_t i = 0; i < c->n_seqs; ++i) live += (size_t)c->seqs[i].live;
  for (size_t b = 0; b < c->blocks; ++b) held += c->refs[b] > 0;
  o->n_streams = live, o->n_counters = 2, o->n_block_refs = held;
  int fits = o->streams_cap >= live && o->counters_cap >= 2 && o->block_refs_cap >= 2 * held;
  for (size_t i = 0, n = 0; i < c->n_seqs; ++i)
    if (c->seqs[i].live && n < o->streams_cap) fits &= size_stream(c, &c->seqs[i], (int64_t)i, &o->streams[n++]);
  if (!fits) return KVC_MORE;
  for (size_t i = 0, n = 0; i < c->n_seqs; ++i)
    if (c->seqs[i].live) fill_stream(c, &c->seqs[i], &o->streams[n++]);
  snprintf(o->counters[0].name, sizeof o->counters[0].name, "free_blocks");
  o->counters[0].value = (int64_t)c->n_free;
  snprintf(o->counters[1].name, sizeof o->counters[1].name, "bytes_in_use");
  o->counters[1].value = (int64_t)(held * c->block_size * (c->d_k + c->d_v) * sizeof(double));
  for (size_t b = 0, n = 0; b < c->blocks; ++b)
    if (c->refs[b]) o->block_refs[2 * n] = (int64_t)b, o->block_refs[2 * n + 1] = (int64_t)c->refs[b], ++n;
  return KVC_OK;
}

/* The ops of other kinds. */
kvc_status kvc_update(kvc_cache* c, int64_t l, int64_t s, kvc_array k, kvc_array v) {
  return (void)c, (void)l, (void)s, (void)k, (void)v, KVC_UNSUPPORTED;
}
kvc_status kvc_reorder(kvc_cache* c, const int64_t* index, size_t n) {
  return (void)c, (void)index, (void)n, KVC_UNSUPPORTED;
}
