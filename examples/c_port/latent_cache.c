/* A latent (MLA) cache in plain C behind kvconform's C ABI (include/kvconform/c_port.h, version 4): one pool of blocks
 * of rows [c ; k_r], sequences that fork by sharing blocks and copy a shared, partly filled last block before writing
 * into it, rollback, and an absorbed decode per query head (docs/kinds/latent.md).
 * Built as is, and with -DLATENT_BUG_WRONG_HEAD, whose head h folds its query with the next head's W_uk. */
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
  size_t blocks, block_size, d_k, d_c; /* d_k = d_c + d_r: a row; its first d_c entries are its value */
  double* rows;                        /* blocks x block_size rows of d_k */
  size_t* refs;                        /* the tables holding each block */
  size_t* free_list;                   /* the blocks no table holds; the last is taken first */
  size_t n_free;
  sequence* seqs;
  size_t n_seqs, seqs_cap;
  double *absorbed, *latent; /* one head's q~ = [W_uk^T q_nope ; q_r] (d_k) and its latent average (d_c) */
};

int kvc_abi_version(void) { return KVC_ABI_VERSION; }

const char* kvc_hello(void) {
  return "{\"protocol\": 2, \"name\": \"c-latent\", \"kinds\": {\"latent\": {\"profile\": {\"latent_path\": "
         "\"absorbed\"}, \"capabilities\": [\"decode\", \"rollback\"]}}}";
}

void kvc_close(kvc_cache* c) {
  if (!c) return;
  for (size_t i = 0; i < c->n_seqs; ++i) free(c->seqs[i].table);
  free(c->rows), free(c->refs), free(c->free_list), free(c->seqs), free(c->absorbed), free(c->latent), free(c);
}

kvc_status kvc_open(const kvc_config* config, kvc_cache** out) {
  if (strcmp(config->kind, "latent") != 0 || config->capacity == 0 || config->block_size == 0 ||
      config->d_v >= config->d_k)
    return KVC_UNSUPPORTED;
  kvc_cache* c = calloc(1, sizeof *c);
  if (!c) return KVC_CAPACITY;
  c->blocks = config->capacity, c->block_size = config->block_size, c->d_k = config->d_k, c->d_c = config->d_v;
  c->rows = calloc(c->blocks * c->block_size * c->d_k + 1, sizeof(double));
  c->refs = calloc(c->blocks, sizeof(size_t));
  c->free_list = calloc(c->blocks, sizeof(size_t));
  c->absorbed = calloc(c->d_k, sizeof(double));
  c->latent = calloc(c->d_c, sizeof(double));
  if (!c->rows || !c->refs || !c->free_list || !c->absorbed || !c->latent) {
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

static int shares_last_block(const kvc_cache* c, const sequence* s) {
  return s->length % c->block_size != 0 && c->refs[s->table[s->n_table - 1]] > 1;
}

static size_t blocks_needed(const kvc_cache* c, const sequence* s, size_t steps) {
  if (steps == 0) return 0; /* an empty append copies nothing */
  const size_t blocks = (s->length + steps + c->block_size - 1) / c->block_size;
  return blocks - s->n_table + (size_t)shares_last_block(c, s);
}

/* Row i of the sequence, in the pool. */
static const double* row_of(const kvc_cache* c, const sequence* s, size_t i) {
  return c->rows + (s->table[i / c->block_size] * c->block_size + i % c->block_size) * c->d_k;
}

kvc_status kvc_append(kvc_cache* c, int64_t seq, kvc_array k, kvc_array v, const int64_t* tokens, size_t n_tokens,
                      kvc_preempted* preempted) {
  (void)tokens, (void)n_tokens, (void)preempted;
  sequence* s = live_sequence(c, seq);
  if (!s) return KVC_INDEX;
  const size_t steps = k.rank == 1 ? 1 : k.rank == 2 ? k.dims[0] : 0, width = k.rank ? k.dims[k.rank - 1] : 0;
  if (v.rank != 0 || (k.rank != 1 && k.rank != 2) || width != c->d_k) return KVC_SHAPE; /* a latent append has no v */
  if (blocks_needed(c, s, steps) > c->n_free) return KVC_CAPACITY;
  const size_t bs = c->block_size, row = c->d_k * sizeof(double);
  if (steps && shares_last_block(c, s)) {
    const size_t shared = s->table[s->n_table - 1], own = take_block(c);
    memcpy(c->rows + own * bs * c->d_k, c->rows + shared * bs * c->d_k, bs * row);
    drop_block(c, shared); /* another table still holds it */
    s->table[s->n_table - 1] = own;
  }
  while (s->n_table * bs < s->length + steps) s->table[s->n_table++] = take_block(c);
  for (size_t i = 0; i < steps; ++i, ++s->length) memcpy((double*)row_of(c, s, s->length), k.data + i * c->d_k, row);
  return KVC_OK;
}

/* Head h of an absorbed decode: q~ = W_uk^T q_nope beside q_r, scores over the rows with the full head's scale
 * 1/sqrt(d_nope + d_r), the latent average of the rows' first d_c entries, then W_uv applied to it. */
static void attend_head(kvc_cache* c, const sequence* s, size_t h, size_t heads, size_t d_nope, size_t d_vh,
                        kvc_array q, kvc_array w_uk, kvc_array w_uv, double* output, double* weights) {
  const size_t d_r = c->d_k - c->d_c, n = s->length;
#ifdef LATENT_BUG_WRONG_HEAD
  const size_t fold = (h + 1) % heads;
#else
  const size_t fold = h;
  (void)heads;
#endif
  const double* qh = q.data + h * (d_nope + d_r);
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
    for (size_t j = 0; j < c->d_k; ++j) score += row_of(c, s, i)[j] * c->absorbed[j];
    weights[i] = score * scale;
    if (weights[i] > top) top = weights[i];
  }
  for (size_t i = 0; i < n; ++i) total += (weights[i] = exp(weights[i] - top));
  for (size_t m = 0; m < c->d_c; ++m) c->latent[m] = 0;
  for (size_t i = 0; i < n; ++i) {
    weights[i] /= total;
    for (size_t m = 0; m < c->d_c; ++m) c->latent[m] += weights[i] * row_of(c, s, i)[m];
  }
  const double* uv = w_uv.data + h * d_vh * c->d_c;
  for (size_t o = 0; o < d_vh; ++o) {
    double sum = 0;
    for (size_t m = 0; m < c->d_c; ++m) sum += uv[o * c->d_c + m] * c->latent[m];
    output[o] = sum;
  }
}

kvc_status kvc_decode_latent(kvc_cache* c, int64_t seq, kvc_array q, kvc_array w_uk, kvc_array w_uv, double* output,
                             size_t output_cap, size_t* n_output, double* weights, size_t weights_cap,
                             size_t* n_weights) {
  const sequence* s = live_sequence(c, seq);
  if (!s) return KVC_INDEX;
  const size_t d_r = c->d_k - c->d_c, heads = q.rank == 2 ? q.dims[0] : 0;
  if (heads == 0 || q.dims[1] <= d_r || w_uk.rank != 3 || w_uv.rank != 3) return KVC_SHAPE;
  const size_t d_nope = q.dims[1] - d_r, d_vh = w_uv.dims[1];
  if (w_uk.dims[0] != heads || w_uk.dims[1] != d_nope || w_uk.dims[2] != c->d_c || w_uv.dims[0] != heads ||
      d_vh == 0 || w_uv.dims[2] != c->d_c)
    return KVC_SHAPE;
  if (s->length == 0) return KVC_EMPTY;
  *n_output = heads * d_vh, *n_weights = heads * s->length;
  if (output_cap < *n_output || weights_cap < *n_weights) return KVC_MORE;
  for (size_t h = 0; h < heads; ++h)
    attend_head(c, s, h, heads, d_nope, d_vh, q, w_uk, w_uv, output + h * d_vh, weights + h * s->length);
  return KVC_OK;
}

/* Drops the newest count steps; the blocks past the new end leave the table, last first. */
kvc_status kvc_rollback(kvc_cache* c, int64_t seq, int64_t count) {
  sequence* s = live_sequence(c, seq);
  if (!s || count < 0 || (uint64_t)count > s->length) return KVC_INDEX;
  s->length -= (size_t)count;
  while (s->n_table * c->block_size >= s->length + c->block_size) drop_block(c, s->table[--s->n_table]);
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
  out->rows = s->length, out->d_k = c->d_k, out->d_v = c->d_c, out->n_positions = 0, out->n_blocks = s->n_table;
  out->key_scales.n = out->key_zeros.n = out->value_scales.n = out->value_zeros.n = 0;
  return out->keys_cap >= s->length * c->d_k && out->values_cap >= s->length * c->d_c && out->blocks_cap >= s->n_table;
}

/* The rows, and as values each row's first d_c entries. */
static void fill_stream(const kvc_cache* c, const sequence* s, kvc_stream* out) {
  for (size_t i = 0; i < s->length; ++i) {
    memcpy(out->keys + i * c->d_k, row_of(c, s, i), c->d_k * sizeof(double));
    memcpy(out->values + i * c->d_c, row_of(c, s, i), c->d_c * sizeof(double));
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
  o->counters[1].value = (int64_t)(held * c->block_size * c->d_k * sizeof(double)); /* no value storage */
  for (size_t b = 0, n = 0; b < c->blocks; ++b)
    if (c->refs[b]) o->block_refs[2 * n] = (int64_t)b, o->block_refs[2 * n + 1] = (int64_t)c->refs[b], ++n;
  return KVC_OK;
}

/* The ops of other kinds: a latent decode is kvc_decode_latent. */
kvc_status kvc_decode(kvc_cache* c, int64_t seq, kvc_array q, kvc_array mask, double* output, size_t output_cap,
                      size_t* n_output, double* weights, size_t weights_cap, size_t* n_weights) {
  return (void)c, (void)seq, (void)q, (void)mask, (void)output, (void)output_cap, (void)n_output, (void)weights,
         (void)weights_cap, (void)n_weights, KVC_UNSUPPORTED;
}
kvc_status kvc_update(kvc_cache* c, int64_t l, int64_t s, kvc_array k, kvc_array v) {
  return (void)c, (void)l, (void)s, (void)k, (void)v, KVC_UNSUPPORTED;
}
kvc_status kvc_reorder(kvc_cache* c, const int64_t* index, size_t n) {
  return (void)c, (void)index, (void)n, KVC_UNSUPPORTED;
}
