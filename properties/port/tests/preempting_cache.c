/* The least paged cache behind the C ABI that can preempt, for properties/port/tests/library_test.cpp: sequences
 * that count their rows in a pool of blocks and no data, ids that are not handles, and the config's per-tensor
 * scales echoed as counters so that the test sees them arrive. */
#include <stdio.h>
#include <string.h>

#include <kvconform/c_port.h>

enum { MAX_SEQS = 16, FIRST_ID = 100 };

struct kvc_cache {
  size_t block_size, free_blocks;
  int preempt;
  double k_scale, v_scale;
  size_t n_seqs;
  struct {
    int live;
    size_t rows;
  } seqs[MAX_SEQS];
};

static struct kvc_cache the_cache; /* one open cache at a time is all the test needs */

int kvc_abi_version(void) { return KVC_ABI_VERSION; }

const char* kvc_hello(void) {
  return "{\"protocol\": 2, \"name\": \"c-preempting\", \"kinds\": {\"paged\": {\"capabilities\": [\"preempt\"]}}}";
}

kvc_status kvc_open(const kvc_config* c, kvc_cache** out) {
  if (strcmp(c->kind, "paged") != 0) return KVC_UNSUPPORTED;
  memset(&the_cache, 0, sizeof the_cache);
  the_cache.block_size = c->block_size, the_cache.free_blocks = c->capacity, the_cache.preempt = c->preempt;
  the_cache.k_scale = c->k_scale, the_cache.v_scale = c->v_scale;
  *out = &the_cache;
  return KVC_OK;
}

void kvc_close(kvc_cache* c) { (void)c; }

static size_t blocks_of(const kvc_cache* c, size_t rows) { return (rows + c->block_size - 1) / c->block_size; }

static int live(const kvc_cache* c, int64_t id) {
  return id >= FIRST_ID && id < FIRST_ID + (int64_t)c->n_seqs && c->seqs[id - FIRST_ID].live;
}

static void release(kvc_cache* c, size_t s) {
  c->seqs[s].live = 0, c->free_blocks += blocks_of(c, c->seqs[s].rows);
}

kvc_status kvc_create(kvc_cache* c, const int64_t* tokens, size_t n, int64_t* id) {
  (void)tokens, (void)n;
  if (c->n_seqs == MAX_SEQS) return KVC_CAPACITY;
  c->seqs[c->n_seqs].live = 1, c->seqs[c->n_seqs].rows = 0;
  *id = FIRST_ID + (int64_t)c->n_seqs++;
  return KVC_OK;
}

/* Takes the blocks the rows need; with preemption releases the newest other sequences first, and only when
 * releasing all of them would make room. */
kvc_status kvc_append(kvc_cache* c, int64_t seq, kvc_array k, kvc_array v, const int64_t* tokens, size_t n_tokens,
                      kvc_preempted* preempted) {
  (void)v, (void)tokens, (void)n_tokens;
  if (!live(c, seq)) return KVC_INDEX;
  const size_t s = (size_t)(seq - FIRST_ID), steps = k.rank == 2 ? k.dims[0] : 1;
  const size_t need = blocks_of(c, c->seqs[s].rows + steps) - blocks_of(c, c->seqs[s].rows);
  size_t reachable = c->free_blocks;
  for (size_t o = 0; o < c->n_seqs; ++o)
    if (c->preempt && o != s && c->seqs[o].live) reachable += blocks_of(c, c->seqs[o].rows);
  if (need > reachable) return KVC_CAPACITY;
  for (size_t o = c->n_seqs; need > c->free_blocks && o-- > 0;)
    if (o != s && c->seqs[o].live) release(c, o), preempted->ids[preempted->n++] = FIRST_ID + (int64_t)o;
  c->free_blocks -= need, c->seqs[s].rows += steps;
  return KVC_OK;
}

kvc_status kvc_release(kvc_cache* c, int64_t seq) {
  if (!live(c, seq)) return KVC_INDEX;
  release(c, (size_t)(seq - FIRST_ID));
  return KVC_OK;
}

kvc_status kvc_observe(kvc_cache* c, kvc_observation* o) {
  o->n_streams = 0, o->n_counters = 3, o->n_block_refs = 0;
  if (o->counters_cap < 3) return KVC_MORE;
  const char* names[] = {"free_blocks", "k_scale_milli", "v_scale_milli"};
  const double values[] = {(double)c->free_blocks, c->k_scale * 1000, c->v_scale * 1000};
  for (int i = 0; i < 3; ++i) {
    snprintf(o->counters[i].name, sizeof o->counters[i].name, "%s", names[i]);
    o->counters[i].value = (int64_t)values[i];
  }
  return KVC_OK;
}

kvc_status kvc_decode(kvc_cache* c, int64_t seq, kvc_array q, kvc_array mask, double* output, size_t output_cap,
                      size_t* n_output, double* weights, size_t weights_cap, size_t* n_weights) {
  (void)c, (void)seq, (void)q, (void)mask, (void)output, (void)output_cap, (void)n_output, (void)weights;
  return (void)weights_cap, (void)n_weights, KVC_UNSUPPORTED;
}
kvc_status kvc_fork(kvc_cache* c, int64_t seq, int64_t* id) { return (void)c, (void)seq, (void)id, KVC_UNSUPPORTED; }
kvc_status kvc_update(kvc_cache* c, int64_t l, int64_t s, kvc_array k, kvc_array v) {
  return (void)c, (void)l, (void)s, (void)k, (void)v, KVC_UNSUPPORTED;
}
kvc_status kvc_reorder(kvc_cache* c, const int64_t* index, size_t n) {
  return (void)c, (void)index, (void)n, KVC_UNSUPPORTED;
}
