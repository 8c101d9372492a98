/* The block pool of the C block-pool caches (paged_cache.c, latent_cache.c): sequences whose block tables fork by
 * sharing blocks and give them back by reference count. A cache embeds one and keeps its rows itself, block b holding
 * pool rows [b * block_size, (b + 1) * block_size). */
#ifndef KVC_EXAMPLE_BLOCK_POOL_H
#define KVC_EXAMPLE_BLOCK_POOL_H

#include <stdint.h>
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
typedef struct {
  size_t blocks, block_size;
  size_t* refs;      /* the tables holding each block */
  size_t* free_list; /* the blocks no table holds; the last is taken first */
  size_t n_free;
  sequence* seqs;
  size_t n_seqs, seqs_cap;
} block_pool;

static void pool_free(block_pool* p) {
  for (size_t i = 0; i < p->n_seqs; ++i) free(p->seqs[i].table);
  free(p->refs), free(p->free_list), free(p->seqs);
}

/* 0 when memory runs out (pool_free then frees what was taken). */
static int pool_init(block_pool* p, size_t blocks, size_t block_size) {
  p->blocks = blocks, p->block_size = block_size;
  p->refs = calloc(blocks, sizeof(size_t));
  p->free_list = calloc(blocks, sizeof(size_t));
  if (!p->refs || !p->free_list) return 0;
  for (size_t b = 0; b < blocks; ++b) p->free_list[p->n_free++] = blocks - 1 - b; /* block 0 first */
  return 1;
}

/* The next id, for a live sequence that copies sequence `from` (-1: an empty one), or for a dead one (a refused
 * fork); -1 when memory runs out. */
static int64_t add_sequence(block_pool* p, int64_t from, int live) {
  if (p->n_seqs == p->seqs_cap) {
    const size_t cap = p->seqs_cap ? 2 * p->seqs_cap : 16;
    sequence* grown = realloc(p->seqs, cap * sizeof *grown);
    if (!grown) return -1;
    p->seqs = grown, p->seqs_cap = cap;
  }
  sequence* s = &p->seqs[p->n_seqs];
  memset(s, 0, sizeof *s);
  if (live && !(s->table = calloc(p->blocks, sizeof(size_t)))) return -1;
  s->live = live;
  if (live && from >= 0) { /* read after the realloc above; not the blocks a rollback kept past its end */
    const sequence* f = &p->seqs[from];
    s->length = f->length, s->n_table = (f->length + p->block_size - 1) / p->block_size;
    memcpy(s->table, f->table, f->n_table * sizeof(size_t));
    for (size_t i = 0; i < s->n_table; ++i) p->refs[s->table[i]] += 1;
  }
  return (int64_t)p->n_seqs++;
}

static sequence* live_sequence(block_pool* p, int64_t id) {
  return id >= 0 && (size_t)id < p->n_seqs && p->seqs[id].live ? &p->seqs[id] : NULL;
}

static size_t take_block(block_pool* p) {
  const size_t b = p->free_list[--p->n_free];
  p->refs[b] = 1;
  return b;
}

static void drop_block(block_pool* p, size_t b) {
  if (--p->refs[b] == 0) p->free_list[p->n_free++] = b;
}

/* The table entries a write of `steps` rows reaches: from the one holding the next row to the last it writes. */
static size_t first_entry(const block_pool* p, const sequence* s) { return s->length / p->block_size; }
static size_t end_entry(const block_pool* p, const sequence* s, size_t steps) {
  return (s->length + steps + p->block_size - 1) / p->block_size;
}

static size_t blocks_needed(const block_pool* p, const sequence* s, size_t steps) {
  if (steps == 0) return 0; /* an empty append copies nothing */
  const size_t end = end_entry(p, s, steps);
  size_t n = end > s->n_table ? end - s->n_table : 0;
  for (size_t j = first_entry(p, s); j < end && j < s->n_table; ++j) n += p->refs[s->table[j]] > 1; /* copied */
  return n;
}

/* The pool row of the sequence's row i. */
static size_t row_of(const block_pool* p, const sequence* s, size_t i) {
  return s->table[i / p->block_size] * p->block_size + i % p->block_size;
}

/* Makes room for `steps` more rows (the blocks were counted): each entry it writes into that another table holds is
 * replaced by a fresh block; the partly filled one's numbers go to `copy` (the shared one's, then the fresh one's) so
 * that the cache copies its rows; then new blocks to the end. */
static void grow_table(block_pool* p, sequence* s, size_t steps, size_t copy[2]) {
  copy[0] = copy[1] = p->blocks;
  for (size_t j = first_entry(p, s); steps && j < end_entry(p, s, steps) && j < s->n_table; ++j) {
    if (p->refs[s->table[j]] < 2) continue;
    const size_t fresh = take_block(p);
    if (j * p->block_size < s->length) copy[0] = s->table[j], copy[1] = fresh;
    drop_block(p, s->table[j]); /* another table still holds it */
    s->table[j] = fresh;
  }
  while (s->n_table * p->block_size < s->length + steps) s->table[s->n_table++] = take_block(p);
}

/* Drops the newest count steps; the blocks past the new end leave the table, last first, unless the pool keeps them
 * until the release (POOL_KEEP_ROLLED_BACK: the policy rollback_blocks=kept, vLLM's rejected drafts). A kept block
 * another table holds is left as it is: the next append copies it first. */
static kvc_status pool_rollback(block_pool* p, int64_t seq, int64_t count) {
  sequence* s = live_sequence(p, seq);
  if (!s || count < 0 || (uint64_t)count > s->length) return KVC_INDEX;
  s->length -= (size_t)count;
#ifndef POOL_KEEP_ROLLED_BACK
  while (s->n_table * p->block_size >= s->length + p->block_size) drop_block(p, s->table[--s->n_table]);
#endif
  return KVC_OK;
}

static kvc_status pool_create(block_pool* p, int64_t* id) {
  const int64_t made = add_sequence(p, -1, 1);
  if (made < 0) return KVC_CAPACITY;
  *id = made;
  return KVC_OK;
}

static kvc_status pool_fork(block_pool* p, int64_t seq, int64_t* id) {
  const int live = live_sequence(p, seq) != NULL;
  const int64_t made = add_sequence(p, live ? seq : -1, live); /* a refused fork uses up its handle too */
  if (!live) return KVC_INDEX;
  if (made < 0) return KVC_CAPACITY;
  *id = made;
  return KVC_OK;
}

static kvc_status pool_release(block_pool* p, int64_t seq) {
  sequence* s = live_sequence(p, seq);
  if (!s) return KVC_INDEX;
  while (s->n_table) drop_block(p, s->table[--s->n_table]); /* last block first */
  s->live = 0;
  return KVC_OK;
}

/* The observation's frame: one stream "seq H" per live sequence in id order, whose rows `fill` writes (it is called
 * only once every buffer fits), the counters free_blocks and bytes_in_use (held blocks x block_bytes), and
 * [block, count] of held blocks. Sizes a stream of d_k and d_v wide rows. */
static kvc_status pool_observe(const block_pool* p, kvc_observation* o, size_t d_k, size_t d_v, size_t block_bytes,
                               void (*fill)(const void* cache, const sequence* s, kvc_stream* out), const void* cache) {
  size_t live = 0, held = 0;
  for (size_t i = 0; i < p->n_seqs; ++i) live += (size_t)p->seqs[i].live;
  for (size_t b = 0; b < p->blocks; ++b) held += p->refs[b] > 0;
  o->n_streams = live, o->n_counters = 2, o->n_block_refs = held;
  int fits = o->streams_cap >= live && o->counters_cap >= 2 && o->block_refs_cap >= 2 * held;
  for (size_t i = 0, n = 0; i < p->n_seqs; ++i) {
    const sequence* s = &p->seqs[i];
    if (!s->live || n >= o->streams_cap) continue;
    kvc_stream* out = &o->streams[n++];
    snprintf(out->name, sizeof out->name, "seq %lld", (long long)i);
    out->rows = s->length, out->d_k = d_k, out->d_v = d_v, out->n_positions = 0, out->n_blocks = s->n_table;
    out->key_scales.n = out->key_zeros.n = out->value_scales.n = out->value_zeros.n = 0;
    fits &= out->keys_cap >= s->length * d_k && out->values_cap >= s->length * d_v && out->blocks_cap >= s->n_table;
  }
  if (!fits) return KVC_MORE;
  for (size_t i = 0, n = 0; i < p->n_seqs; ++i) {
    const sequence* s = &p->seqs[i];
    if (!s->live) continue;
    fill(cache, s, &o->streams[n]);
    for (size_t b = 0; b < s->n_table; ++b) o->streams[n].blocks[b] = (int64_t)s->table[b];
    ++n;
  }
  snprintf(o->counters[0].name, sizeof o->counters[0].name, "free_blocks");
  o->counters[0].value = (int64_t)p->n_free;
  snprintf(o->counters[1].name, sizeof o->counters[1].name, "bytes_in_use");
  o->counters[1].value = (int64_t)(held * block_bytes);
  for (size_t b = 0, n = 0; b < p->blocks; ++b)
    if (p->refs[b]) o->block_refs[2 * n] = (int64_t)b, o->block_refs[2 * n + 1] = (int64_t)p->refs[b], ++n;
  return KVC_OK;
}

/* The ops of other kinds. */
kvc_status kvc_update(kvc_cache* c, int64_t l, int64_t s, kvc_array k, kvc_array v) {
  return (void)c, (void)l, (void)s, (void)k, (void)v, KVC_UNSUPPORTED;
}
kvc_status kvc_reorder(kvc_cache* c, const int64_t* index, size_t n) {
  return (void)c, (void)index, (void)n, KVC_UNSUPPORTED;
}

#endif /* KVC_EXAMPLE_BLOCK_POOL_H */
