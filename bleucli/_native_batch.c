/*
 * The pairwise batch engine of bleucli._native: sentence-level BLEU, chrF and TER of every
 * hypothesis of a group against every reference of that group, for MBR decoding.
 *
 *   batch_pairwise(metric, texts, groups, members, options, tok13a, threads, out)
 *       group g = groups[4g:4g + 4] = (hyp_at, n_hyp, ref_at, n_ref): every hypothesis
 *       texts[members[hyp_at + i]] against every single reference texts[members[ref_at + k]],
 *       row-major
 *
 * Texts are preprocessed as the metric preprocesses them (BLEU: tokenised, or with tok13a
 * right-stripped and 13a-tokenised here; chrF: lowercased if asked; TER: tercom-tokenised);
 * index arrays are int64 buffers; `out` is a writable float64 buffer of one score per
 * cell (a numpy array: no copy of the matrix), filled with exactly what bleucli.metrics
 * computes for each cell, then the metric's score, operation for operation
 * (_native_batch.h). Aligned jobs (batch_aligned) are _native_aligned.c's.
 *
 * Groups are cut into blocks of rows; a thread prepares the references of a group once
 * (words to ids, each order's distinct n-grams with their counts in a small hash table),
 * each hypothesis of its block once, and scores a cell by looking the hypothesis' n-grams
 * up in the reference's tables. Everything after the owned strings are read runs without
 * the GIL, on `threads` threads; a cell writes only its own result, so any thread count
 * gives the same bytes.
 */
#include "_native_batch.h"
#include <stdint.h>
#include <string.h>


/* ------------------------------------------------------------------------------------ */
/* Per-thread state.                                                                     */

/* A thread's word table: ids for the words of a group's sentences (the references first,
   then each block's hypotheses), the words' characters copied into an arena. */
typedef struct {
    Py_UCS4 *chars;
    Py_ssize_t n_chars, chars_cap;
    Py_ssize_t *start, *len;
    uint64_t *hash;
    Py_ssize_t n, cap;
    int32_t *slots; /* word id + 1, 0: empty */
    Py_ssize_t slots_cap;
} Vocab;

typedef struct {
    Workspace *w;
    TerWork *ter;            /* TER's arrays */
    Py_ssize_t *row;     /* statistics of a cell */
    Py_ssize_t row_cap;
    double *work;
    /* pairwise: the current group's references and word table, a block's hypotheses */
    struct Prepared *refs, *hyps;
    Py_ssize_t n_refs, refs_cap, hyps_cap, group;
    Vocab vocab;
    unsigned char *found;
    Py_ssize_t found_cap;
    uint64_t *hashes;         /* rolling hashes while n-grams are counted */
    Py_ssize_t hashes_cap;
    Py_ssize_t words[2];      /* the line pair TER refused */
} Thread;

int bleucli_grow(void **ptr, Py_ssize_t *cap, Py_ssize_t need, size_t size) {
    if (need <= *cap)
        return 0;
    Py_ssize_t grown = need + need / 2 + 8;
    if ((size_t)grown > PY_SSIZE_T_MAX / size)
        return -1;
    void *p = PyMem_RawRealloc(*ptr, (size_t)grown * size);
    if (p == NULL)
        return -1;
    *ptr = p;
    *cap = grown;
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* A call.                                                                               */

typedef struct {
    Options o;
    PyObject **texts;
    const int64_t *groups, *members;
    Py_ssize_t n_groups, block_rows;
    Py_ssize_t *block_at;      /* first block of each group (n_groups + 1) */
    Py_ssize_t *cell_at;       /* first cell of each group */
    Py_ssize_t n_blocks;
    Py_ssize_t n_jobs;
    double *out;
    Sharing s;
} Batch;

/* ------------------------------------------------------------------------------------ */
/* Pairwise groups: prepared sentences.                                                  */


static void vocab_clear(Vocab *v) {
    v->n = v->n_chars = 0;
    if (v->slots != NULL)
        memset(v->slots, 0, (size_t)v->slots_cap * sizeof(int32_t));
}

static void vocab_free(Vocab *v) {
    PyMem_RawFree(v->chars);
    PyMem_RawFree(v->start);
    PyMem_RawFree(v->len);
    PyMem_RawFree(v->hash);
    PyMem_RawFree(v->slots);
    memset(v, 0, sizeof(*v));
}

static int vocab_rehash(Vocab *v, Py_ssize_t cap) {
    int32_t *slots = PyMem_RawCalloc((size_t)cap, sizeof(int32_t));
    if (slots == NULL)
        return -1;
    for (Py_ssize_t k = 0; k < v->n; k++) {
        Py_ssize_t slot = (Py_ssize_t)(v->hash[k] & (uint64_t)(cap - 1));
        while (slots[slot])
            slot = (slot + 1) & (cap - 1);
        slots[slot] = (int32_t)(k + 1);
    }
    PyMem_RawFree(v->slots);
    v->slots = slots;
    v->slots_cap = cap;
    return 0;
}

/* The id of the word w[0..len), added if new; -1 without memory. */
static Py_ssize_t vocab_id(Vocab *v, const Py_UCS4 *w, Py_ssize_t len) {
    uint64_t h = 1469598103934665603ULL;
    for (Py_ssize_t i = 0; i < len; i++)
        h = (h ^ w[i]) * 1099511628211ULL;
    h = spread(h);
    if (2 * (v->n + 1) > v->slots_cap && vocab_rehash(v, v->slots_cap ? 2 * v->slots_cap : 1024) < 0)
        return -1;
    Py_ssize_t mask = v->slots_cap - 1, slot = (Py_ssize_t)(h & (uint64_t)mask);
    for (;;) {
        int32_t entry = v->slots[slot];
        if (entry == 0)
            break;
        Py_ssize_t k = entry - 1;
        if (v->hash[k] == h && v->len[k] == len &&
            memcmp(v->chars + v->start[k], w, (size_t)len * sizeof(Py_UCS4)) == 0)
            return k;
        slot = (slot + 1) & mask;
    }
    if (v->n >= INT32_MAX - 1 ||
        bleucli_grow((void **)&v->chars, &v->chars_cap, v->n_chars + len + 1, sizeof(Py_UCS4)) < 0)
        return -1;
    if (v->n == v->cap) {
        Py_ssize_t cap = v->cap ? 2 * v->cap : 1024, c1 = v->cap, c2 = v->cap, c3 = v->cap;
        if (bleucli_grow((void **)&v->start, &c1, cap, sizeof(Py_ssize_t)) < 0 ||
            bleucli_grow((void **)&v->len, &c2, cap, sizeof(Py_ssize_t)) < 0 ||
            bleucli_grow((void **)&v->hash, &c3, cap, sizeof(uint64_t)) < 0)
            return -1;
        v->cap = c1 < c2 ? (c1 < c3 ? c1 : c3) : (c2 < c3 ? c2 : c3);
    }
    memcpy(v->chars + v->n_chars, w, (size_t)len * sizeof(Py_UCS4));
    v->start[v->n] = v->n_chars;
    v->len[v->n] = len;
    v->hash[v->n] = h;
    v->n_chars += len;
    v->slots[slot] = (int32_t)(v->n + 1);
    return v->n++;
}

typedef struct {
    uint64_t h;                /* the n-gram's hash (its ids, at start, tell equal hashes apart) */
    const Py_ssize_t *start;
    int32_t count;
    int32_t sub[2];            /* its (n - 1)-grams' entries, at the same and the next position */
} Distinct;

typedef struct Prepared {
    Py_ssize_t *seq[2];        /* ids: [0] words (BLEU, TER) or characters (chrF), [1] words */
    Py_ssize_t len[2];
    Distinct *grams;           /* per order: grams[at[k]..at[k + 1]) */
    Py_ssize_t *at;
    int32_t *slots;            /* per order: a table of slot_at[k + 1] - slot_at[k] entries */
    Py_ssize_t *slot_at;
} Prepared;

static void prepared_free(Prepared *p) {
    PyMem_RawFree(p->seq[0]);
    PyMem_RawFree(p->seq[1]);
    PyMem_RawFree(p->grams);
    PyMem_RawFree(p->at);
    PyMem_RawFree(p->slots);
    PyMem_RawFree(p->slot_at);
    memset(p, 0, sizeof(*p));
}

static inline Py_ssize_t table_cap(Py_ssize_t n) {
    Py_ssize_t cap = 8;
    while (cap < 2 * n)
        cap *= 2;
    return cap;
}

static inline int same_ids(const Py_ssize_t *a, const Py_ssize_t *b, Py_ssize_t order) {
    for (Py_ssize_t k = 0; k < order; k++)
        if (a[k] != b[k])
            return 0;
    return 1;
}

/* The entry (index into grams) of the n-gram ids[0..order) with hash h in a table of cap
   slots, or -1; *slot_out: where it is or would go. */
static inline Py_ssize_t lookup(const int32_t *slots, Py_ssize_t cap, const Distinct *grams,
                                uint64_t h, const Py_ssize_t *ids, Py_ssize_t order,
                                Py_ssize_t *slot_out) {
    Py_ssize_t mask = cap - 1, slot = (Py_ssize_t)(spread(h) & (uint64_t)mask);
    for (;;) {
        int32_t entry = slots[slot];
        if (entry == 0) {
            *slot_out = slot;
            return -1;
        }
        const Distinct *g = &grams[entry - 1];
        if (g->h == h && same_ids(g->start, ids, order)) {
            *slot_out = slot;
            return entry - 1;
        }
        slot = (slot + 1) & mask;
    }
}

/* Every order's distinct n-grams of a prepared sentence, their counts, tables and the
   entries of their two (n - 1)-grams. */
static int prepare_grams(const Options *o, Thread *t, Prepared *p) {
    Py_ssize_t orders[2] = {o->metric == METRIC_CHRF ? o->char_order : o->max_order,
                            o->metric == METRIC_CHRF ? o->word_order : 0};
    Py_ssize_t total = 0, slots = 0, k = 0;
    for (int kind = 0; kind < 2; kind++)
        for (Py_ssize_t n = 1; n <= orders[kind]; n++) {
            Py_ssize_t count = p->len[kind] >= n ? p->len[kind] - n + 1 : 0;
            total += count;
            slots += count ? table_cap(count) : 0;
        }
    Py_ssize_t n_orders = orders[0] + orders[1];
    p->grams = PyMem_RawMalloc((size_t)(total + 1) * sizeof(Distinct));
    p->at = PyMem_RawMalloc((size_t)(n_orders + 1) * sizeof(Py_ssize_t));
    p->slots = PyMem_RawCalloc((size_t)(slots + 1), sizeof(int32_t));
    p->slot_at = PyMem_RawMalloc((size_t)(n_orders + 1) * sizeof(Py_ssize_t));
    if (p->grams == NULL || p->at == NULL || p->slots == NULL || p->slot_at == NULL)
        return -1;
    Py_ssize_t used = 0, slot_used = 0;
    for (int kind = 0; kind < 2; kind++) {
        const Py_ssize_t *seq = p->seq[kind];
        Py_ssize_t len = p->len[kind];
        /* per position: its n-gram's hash, and its entry at the last order */
        if (bleucli_grow((void **)&t->hashes, &t->hashes_cap, 2 * (len + 1), sizeof(uint64_t)) < 0)
            return -1;
        uint64_t *hashes = t->hashes;
        int32_t *entry_of = (int32_t *)(t->hashes + len + 1);
        memset(hashes, 0, (size_t)(len + 1) * sizeof(uint64_t));
        for (Py_ssize_t n = 1; n <= orders[kind]; n++, k++) {
            Py_ssize_t count = len >= n ? len - n + 1 : 0, cap = count ? table_cap(count) : 0;
            int32_t *table = p->slots + slot_used;
            Distinct *base = p->grams + used;
            Py_ssize_t distinct = 0;
            p->at[k] = used;
            p->slot_at[k] = slot_used;
            for (Py_ssize_t i = 0; i < count; i++) {
                uint64_t h = hashes[i] = mix(hashes[i], (uint64_t)seq[i + n - 1]);
                Py_ssize_t slot, e = lookup(table, cap, base, h, seq + i, n, &slot);
                if (e < 0) {
                    e = distinct++;
                    base[e] = (Distinct){h, seq + i, 0, {n > 1 ? entry_of[i] : -1,
                                                          n > 1 ? entry_of[i + 1] : -1}};
                    table[slot] = (int32_t)(e + 1);
                }
                base[e].count++;
                entry_of[i] = (int32_t)e; /* read back at the next order: i and i + 1 */
            }
            used += distinct;
            slot_used += cap;
        }
    }
    p->at[k] = used;
    p->slot_at[k] = slot_used;
    return 0;
}

/* Prepare texts[idx[0..n)] into prepared[0..n): word ids from the thread's word table
   (shared with everything prepared for the same group), characters for chrF, then, but
   for TER, their n-grams. */
static int prepare_texts(const Batch *b, Thread *t, const int64_t *idx, Py_ssize_t n,
                         Prepared *prepared) {
    const Options *o = &b->o;
    int words = o->metric != METRIC_CHRF || o->word_order > 0;
    int kind = o->metric == METRIC_CHRF ? 1 : 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Prepared *p = &prepared[i];
        BleucliText v = bleucli_view(b->texts[idx[i]]);
        if (words) {
            const Py_UCS4 *chars;
            const Py_ssize_t *bounds;
            Py_ssize_t count;
            if (bleucli_tokens(t->w, &v, o->tok13a, o->metric == METRIC_CHRF, &chars, &bounds,
                               &count) < 0)
                return -1;
            p->seq[kind] = PyMem_RawMalloc((size_t)(count + 1) * sizeof(Py_ssize_t));
            if (p->seq[kind] == NULL)
                return -1;
            for (Py_ssize_t w = 0; w < count; w++) {
                Py_ssize_t id = vocab_id(&t->vocab, chars + bounds[2 * w], bounds[2 * w + 1]);
                if (id < 0)
                    return -1;
                p->seq[kind][w] = id;
            }
            p->len[kind] = count;
        }
        if (o->metric == METRIC_CHRF) { /* characters, whitespace removed unless kept */
            p->seq[0] = PyMem_RawMalloc((size_t)(v.len + 1) * sizeof(Py_ssize_t));
            if (p->seq[0] == NULL)
                return -1;
            Py_ssize_t m = 0;
            for (Py_ssize_t c = 0; c < v.len; c++) {
                Py_UCS4 ch = PyUnicode_READ(v.kind, v.data, c);
                if (o->whitespace || !Py_UNICODE_ISSPACE(ch))
                    p->seq[0][m++] = (Py_ssize_t)ch;
            }
            p->len[0] = m;
        }
        if (o->metric != METRIC_TER && prepare_grams(o, t, p) < 0)
            return -1;
    }
    return 0;
}

/* Matches of hypothesis h against reference r among the n-grams of order slot k and length
   `order`. found[] says, per hypothesis n-gram, whether r has it; an n-gram can only be
   there if both its (order - 1)-grams are (prev[]). */
static Py_ssize_t cell_matches(const Prepared *h, const Prepared *r, Py_ssize_t k,
                               Py_ssize_t order, const unsigned char *prev,
                               unsigned char *found) {
    const Distinct *hg = h->grams + h->at[k], *rg = r->grams + r->at[k];
    Py_ssize_t nh = h->at[k + 1] - h->at[k], cap = r->slot_at[k + 1] - r->slot_at[k];
    if (cap == 0) {
        memset(found, 0, (size_t)nh);
        return 0;
    }
    const int32_t *table = r->slots + r->slot_at[k];
    Py_ssize_t matches = 0, slot;
    for (Py_ssize_t i = 0; i < nh; i++) {
        const Distinct *g = &hg[i];
        if (order > 1 && !(prev[g->sub[0]] && prev[g->sub[1]])) {
            found[i] = 0;
            continue;
        }
        Py_ssize_t e = lookup(table, cap, rg, g->h, g->start, order, &slot);
        found[i] = e >= 0;
        if (e >= 0)
            matches += g->count < rg[e].count ? g->count : rg[e].count;
    }
    return matches;
}

/* The score of prepared hypothesis h against prepared reference r. */
static int cell(const Batch *b, Thread *t, const Prepared *h, const Prepared *r, double *out,
                long long *ter_code) {
    const Options *o = &b->o;
    Py_ssize_t *row = t->row;
    if (o->metric == METRIC_TER) {
        long long edits = r->len[0] == 0 ? h->len[0]
                          : bleucli_ter_count_in(t->ter, h->seq[0], h->len[0], r->seq[0],
                                                 r->len[0]);
        if (edits < 0) {
            *ter_code = edits;
            t->words[0] = h->len[0];
            t->words[1] = r->len[0];
            return edits == TER_NO_MEMORY ? BATCH_NO_MEMORY : BATCH_TER;
        }
        *out = ter_score(edits, r->len[0], 1);
        return BATCH_OK;
    }
    /* found flags of two consecutive orders, alternating */
    Py_ssize_t most = 0;
    for (Py_ssize_t k = 0; k < o->n_orders; k++)
        if (h->at[k + 1] - h->at[k] > most)
            most = h->at[k + 1] - h->at[k];
    if (bleucli_grow((void **)&t->found, &t->found_cap, 2 * most + 2, 1) < 0)
        return BATCH_NO_MEMORY;
    unsigned char *flags[2] = {t->found, t->found + most + 1};
    if (o->metric == METRIC_BLEU) {
        Py_ssize_t hyp_len = h->len[0];
        row[0] = hyp_len;
        row[1] = r->len[0];
        for (Py_ssize_t n = 1; n <= o->max_order; n++) {
            row[1 + n] = cell_matches(h, r, n - 1, n, flags[n % 2], flags[(n + 1) % 2]);
            row[1 + o->max_order + n] = hyp_len >= n ? hyp_len - n + 1 : 0;
        }
        *out = bleu_score(o, row, t->work);
        return BATCH_OK;
    }
    Py_ssize_t k = 0;
    for (int kind = 0; kind < 2; kind++) {
        Py_ssize_t orders = kind ? o->word_order : o->char_order;
        for (Py_ssize_t n = 1; n <= orders; n++, k++) {
            Py_ssize_t hyp_total = h->len[kind] >= n ? h->len[kind] - n + 1 : 0;
            Py_ssize_t ref_total = r->len[kind] >= n ? r->len[kind] - n + 1 : 0;
            row[3 * k] = ref_total ? hyp_total : 0;
            row[3 * k + 1] = ref_total;
            row[3 * k + 2] = cell_matches(h, r, k, n, flags[n % 2], flags[(n + 1) % 2]);
        }
    }
    *out = chrf_score(o, row);
    return BATCH_OK;
}

static void forget(Prepared *prepared, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++)
        prepared_free(&prepared[i]);
}

/* Block `item` of a pairwise batch: some rows of one group against all its references. The
   thread keeps the references (and the word table) of its current group across blocks. */
static int pairwise_block(const Batch *b, Thread *t, Py_ssize_t item, long long *ter_code,
                          Py_ssize_t *failed) {
    Py_ssize_t lo = 0, hi = b->n_groups - 1;
    while (lo < hi) { /* the group of this block */
        Py_ssize_t mid = lo + (hi - lo + 1) / 2;
        if (b->block_at[mid] <= item)
            lo = mid;
        else
            hi = mid - 1;
    }
    const int64_t *g = b->groups + 4 * lo;
    Py_ssize_t n_ref = (Py_ssize_t)g[3], first = (item - b->block_at[lo]) * b->block_rows;
    Py_ssize_t rows = (Py_ssize_t)g[1] - first < b->block_rows ? (Py_ssize_t)g[1] - first
                                                                : b->block_rows;
    if (t->group != lo) {
        forget(t->refs, t->n_refs);
        t->n_refs = 0;
        t->group = -1;
        vocab_clear(&t->vocab);
        if (bleucli_grow((void **)&t->refs, &t->refs_cap, n_ref, sizeof(Prepared)) < 0)
            return BATCH_NO_MEMORY;
        memset(t->refs, 0, (size_t)n_ref * sizeof(Prepared));
        t->n_refs = n_ref;
        if (prepare_texts(b, t, b->members + g[2], n_ref, t->refs) < 0)
            return BATCH_NO_MEMORY;
        t->group = lo;
    }
    if (bleucli_grow((void **)&t->hyps, &t->hyps_cap, rows, sizeof(Prepared)) < 0)
        return BATCH_NO_MEMORY;
    memset(t->hyps, 0, (size_t)rows * sizeof(Prepared));
    int prepared = prepare_texts(b, t, b->members + g[0] + first, rows, t->hyps);
    int error = prepared < 0 ? BATCH_NO_MEMORY : BATCH_OK;
    if (error == BATCH_OK &&
        bleucli_grow((void **)&t->row, &t->row_cap, b->o.width + 1, sizeof(Py_ssize_t)) < 0)
        error = BATCH_NO_MEMORY;
    double *out = b->out + b->cell_at[lo] + first * n_ref;
    for (Py_ssize_t i = 0; error == BATCH_OK && i < rows; i++)
        for (Py_ssize_t k = 0; k < n_ref; k++) {
            error = cell(b, t, &t->hyps[i], &t->refs[k], &out[i * n_ref + k], ter_code);
            if (error != BATCH_OK) {
                *failed = b->cell_at[lo] + (first + i) * n_ref + k;
                break;
            }
        }
    forget(t->hyps, rows);
    return error;
}

/* ------------------------------------------------------------------------------------ */
/* Work sharing.                                                                         */

int bleucli_claim(Sharing *s, Py_ssize_t chunk, Py_ssize_t *start, Py_ssize_t *stop) {
#if HAVE_THREADS
    pthread_mutex_lock(&s->lock);
#endif
    int ok = s->error == BATCH_OK && s->next < s->n_items;
    if (ok) {
        *start = s->next;
        *stop = s->next + chunk < s->n_items ? s->next + chunk : s->n_items;
        s->next = *stop;
    }
#if HAVE_THREADS
    pthread_mutex_unlock(&s->lock);
#endif
    return ok;
}

void bleucli_fail(Sharing *s, int error, long long ter_code, Py_ssize_t job,
                  const Py_ssize_t *words) {
#if HAVE_THREADS
    pthread_mutex_lock(&s->lock);
#endif
    if (s->error == BATCH_OK) {
        s->error = error;
        s->ter_code = ter_code;
        s->failed_job = job;
        s->failed_words[0] = words ? words[0] : 0;
        s->failed_words[1] = words ? words[1] : 0;
    }
#if HAVE_THREADS
    pthread_mutex_unlock(&s->lock);
#endif
}

static void thread_free(Thread *t) {
    forget(t->refs, t->n_refs);
    bleucli_workspace_free(t->w);
    bleucli_ter_work_free(t->ter);
    vocab_free(&t->vocab);
    PyMem_RawFree(t->row);
    PyMem_RawFree(t->work);
    PyMem_RawFree(t->refs);
    PyMem_RawFree(t->hyps);
    PyMem_RawFree(t->found);
    PyMem_RawFree(t->hashes);
}

static void *worker(void *arg) {
    Batch *b = arg;
    Thread t;
    memset(&t, 0, sizeof(t));
    t.group = -1;
    t.w = bleucli_workspace_new();
    t.ter = bleucli_ter_work_new();
    t.work = PyMem_RawMalloc((size_t)(3 * b->o.max_order + 3) * sizeof(double));
    if (t.w == NULL || t.ter == NULL || t.work == NULL) {
        bleucli_fail(&b->s, BATCH_NO_MEMORY, 0, 0, NULL);
        thread_free(&t);
        return NULL;
    }
    Py_ssize_t start, stop, chunk = 1;
    while (bleucli_claim(&b->s, chunk, &start, &stop)) {
        for (Py_ssize_t i = start; i < stop; i++) {
            long long ter_code = 0;
            Py_ssize_t failed = i;
            int error = pairwise_block(b, &t, i, &ter_code, &failed);
            if (error != BATCH_OK) {
                bleucli_fail(&b->s, error, ter_code, failed, t.words);
                break;
            }
        }
    }
    thread_free(&t);
    return NULL;
}

/* Run the batch on `threads` threads (the calling thread is one of them). */
static void run_threads(Batch *b, int threads) {
#if HAVE_THREADS
    pthread_t ids[256];
    int started = 0;
    pthread_mutex_init(&b->s.lock, NULL);
    for (int k = 1; k < threads && k < 256 && k < b->s.n_items; k++) {
        if (pthread_create(&ids[started], NULL, worker, b) != 0)
            break; /* fewer threads: the same results */
        started++;
    }
    worker(b);
    for (int k = 0; k < started; k++)
        pthread_join(ids[k], NULL);
    pthread_mutex_destroy(&b->s.lock);
#else
    (void)threads;
    worker(b);
#endif
}

/* ------------------------------------------------------------------------------------ */
/* Entry points.                                                                         */

int bleucli_batch_options(int metric, PyObject *options, int tok13a, Options *o) {
    memset(o, 0, sizeof(*o));
    o->metric = metric;
    o->tok13a = tok13a;
    if (metric == METRIC_BLEU) {
        if (!PyArg_ParseTuple(options, "nipd", &o->max_order, &o->smooth, &o->effective_order,
                              &o->smooth_value))
            return -1;
        if (o->max_order < 1 || o->max_order > 1000 || o->smooth < SMOOTH_NONE ||
            o->smooth > SMOOTH_EXP) {
            PyErr_SetString(PyExc_ValueError, "batch: BLEU options out of range");
            return -1;
        }
        o->n_orders = o->max_order;
        o->width = 2 + 2 * o->max_order;
    } else if (metric == METRIC_CHRF) {
        if (!PyArg_ParseTuple(options, "nnlpp", &o->char_order, &o->word_order, &o->beta,
                              &o->whitespace, &o->eps_smoothing))
            return -1;
        /* the ranges first: the sum is only formed once neither can overflow it */
        if (o->char_order < 0 || o->word_order < 0 || o->char_order > 1000 ||
            o->word_order > 1000 || o->char_order + o->word_order == 0 || o->beta < 0 ||
            o->beta > 1000000) {
            PyErr_SetString(PyExc_ValueError, "batch: chrF options out of range");
            return -1;
        }
        o->n_orders = o->char_order + o->word_order;
        o->width = 3 * o->n_orders;
    } else if (metric == METRIC_TER) {
        if (!PyArg_ParseTuple(options, ""))
            return -1;
        o->width = 2;
    } else {
        PyErr_SetString(PyExc_ValueError, "batch: unknown metric");
        return -1;
    }
    if (tok13a && metric != METRIC_BLEU) {
        PyErr_SetString(PyExc_ValueError, "batch: tok13a is BLEU's");
        return -1;
    }
    return 0;
}

/* The caller's float64 buffer for n results. */
int bleucli_out_buffer(Py_buffer *view, Py_ssize_t n) {
    if (view->readonly || view->itemsize != 8 || view->len != n * 8 ||
        !PyBuffer_IsContiguous(view, 'C')) {
        PyErr_Format(PyExc_ValueError, "batch: out must be a writable float64 buffer of %zd",
                     n);
        return -1;
    }
    return 0;
}

/* Score the batch into b->out without the GIL; None, or NULL with the error set. */
static PyObject *run_batch(Batch *b, int threads) {
    if (b->s.n_items > 0) {
        Py_BEGIN_ALLOW_THREADS
        run_threads(b, threads);
        Py_END_ALLOW_THREADS
    }
    return bleucli_batch_result(&b->s);
}

PyObject *bleucli_batch_result(const Sharing *s) {
    if (s->error == BATCH_NO_MEMORY)
        return PyErr_NoMemory();
    if (s->error == BATCH_TER && s->ter_code == TER_TOO_LONG)
        return PyErr_Format(PyExc_ValueError,
                            "item %zd: %zd x %zd words is more than %lld word pairs",
                            s->failed_job, s->failed_words[0], s->failed_words[1],
                            MAX_WORD_PAIRS);
    if (s->error == BATCH_TER)
        return bleucli_ter_error(s->ter_code, s->failed_words[0], s->failed_words[1]);
    return Py_NewRef(Py_None);
}

void bleucli_release_objects(PyObject **objects, Py_ssize_t n) {
    if (objects == NULL)
        return;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i + PREFETCH_AHEAD < n && objects[i + PREFETCH_AHEAD] != NULL)
            bleucli_prefetch(objects[i + PREFETCH_AHEAD]);
        Py_XDECREF(objects[i]);
    }
    PyMem_RawFree(objects);
}

/* A contiguous int64 buffer of the buffer protocol. */
static int int64_buffer(Py_buffer *view, Py_ssize_t *n, const char *what) {
    if (view->itemsize != 8 || view->len % 8 != 0) {
        PyErr_Format(PyExc_TypeError, "batch: %s must be an int64 buffer", what);
        return -1;
    }
    *n = view->len / 8;
    return 0;
}

/* Rows per block of a pairwise group: whole groups while they are small, else blocks of
   about 4096 cells (a thread prepares a block's references once). */
static Py_ssize_t block_rows(Py_ssize_t n_ref) {
    Py_ssize_t rows = 4096 / (n_ref > 0 ? n_ref : 1);
    return rows < 1 ? 1 : rows;
}

PyObject *bleucli_batch_pairwise(PyObject *self, PyObject *args) {
    int metric, tok13a, threads;
    PyObject *text_list, *options;
    Py_buffer groups = {0}, members = {0}, out = {0};
    (void)self;
    if (!PyArg_ParseTuple(args, "iO!y*y*O!piw*:batch_pairwise", &metric, &PyList_Type,
                          &text_list, &groups, &members, &PyTuple_Type, &options, &tok13a,
                          &threads, &out))
        return NULL;
    Batch b;
    memset(&b, 0, sizeof(b));
    PyObject *result = NULL;
    Py_ssize_t n_texts = 0, n_groups4, n_members;
    int64_t *kept = NULL, *own_members = NULL;
    /* the options first: parsing them can run a caller's __index__ or __bool__, which may
       change the list; its size is read after the last Python code of the call */
    if (bleucli_batch_options(metric, options, tok13a, &b.o) < 0 ||
        int64_buffer(&groups, &n_groups4, "groups") < 0 ||
        int64_buffer(&members, &n_members, "members") < 0)
        goto done;
    n_texts = PyList_GET_SIZE(text_list);
    if (threads < 1 || n_groups4 % 4 != 0) {
        PyErr_SetString(PyExc_ValueError, "batch: threads >= 1, 4 numbers per group");
        goto done;
    }
    /* a copy: a writable buffer (bytearray, numpy) could change after the check, while the
       threads read it without the GIL */
    own_members = PyMem_RawMalloc((size_t)(n_members + 1) * sizeof(int64_t));
    if (own_members == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (n_members > 0)
        memcpy(own_members, members.buf, (size_t)n_members * sizeof(int64_t));
    b.members = own_members;
    for (Py_ssize_t i = 0; i < n_members; i++)
        if (b.members[i] < 0 || b.members[i] >= n_texts) {
            PyErr_Format(PyExc_ValueError, "batch: member %zd is out of range", i);
            goto done;
        }
    /* the groups that hold cells, their first cell and first block */
    Py_ssize_t n_all = n_groups4 / 4, cells = 0, blocks = 0;
    const int64_t *all = groups.buf;
    kept = PyMem_RawMalloc((size_t)(4 * n_all + 4) * sizeof(int64_t));
    b.cell_at = PyMem_RawMalloc((size_t)(n_all + 1) * sizeof(Py_ssize_t));
    b.block_at = PyMem_RawMalloc((size_t)(n_all + 1) * sizeof(Py_ssize_t));
    if (kept == NULL || b.cell_at == NULL || b.block_at == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t rows_per_block = 0;
    for (Py_ssize_t g = 0; g < n_all; g++) {
        /* a copy, checked and used: the caller's buffer is read once (another thread may
           write it between two reads: shared memory, a writer without the GIL) */
        int64_t G[4];
        memcpy(G, all + 4 * g, sizeof(G));
        /* each bound against what is left, so no sum can overflow */
        if (G[0] < 0 || G[1] < 0 || G[2] < 0 || G[3] < 0 || G[0] > n_members ||
            G[1] > n_members - G[0] || G[2] > n_members || G[3] > n_members - G[2]) {
            PyErr_Format(PyExc_ValueError, "batch: group %zd is out of range", g);
            goto done;
        }
        if (G[1] == 0 || G[3] == 0)
            continue;
        if (G[3] > PY_SSIZE_T_MAX / 16 / G[1] - cells) {
            PyErr_NoMemory();
            goto done;
        }
        Py_ssize_t rows = block_rows((Py_ssize_t)G[3]);
        if (rows_per_block == 0 || rows < rows_per_block)
            rows_per_block = rows;
        memcpy(kept + 4 * b.n_groups, G, 4 * sizeof(int64_t));
        b.cell_at[b.n_groups++] = cells;
        cells += (Py_ssize_t)(G[1] * G[3]);
    }
    /* one block size for every group keeps block -> group arithmetic simple */
    b.block_rows = rows_per_block ? rows_per_block : 1;
    for (Py_ssize_t g = 0; g < b.n_groups; g++) {
        b.block_at[g] = blocks;
        blocks += (Py_ssize_t)((kept[4 * g + 1] + b.block_rows - 1) / b.block_rows);
    }
    b.block_at[b.n_groups] = blocks;
    b.groups = kept;
    b.n_jobs = cells;
    b.s.n_items = blocks;
    if (bleucli_out_buffer(&out, cells) < 0)
        goto done;
    b.out = out.buf;
    b.texts = PyMem_RawCalloc((size_t)(n_texts + 1), sizeof(PyObject *));
    if (b.texts == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n_texts; i++) { /* owned before any allocation of an object */
        b.texts[i] = PyList_GET_ITEM(text_list, i);
        Py_INCREF(b.texts[i]);
    }
    for (Py_ssize_t i = 0; i < n_texts; i++)
        if (!PyUnicode_Check(b.texts[i])) {
            PyErr_Format(PyExc_TypeError, "batch: text %zd is not a str", i);
            goto done;
        }
    result = run_batch(&b, threads);
done:
    bleucli_release_objects(b.texts, n_texts);
    PyMem_RawFree(kept);
    PyMem_RawFree(own_members);
    PyMem_RawFree(b.cell_at);
    PyMem_RawFree(b.block_at);
    PyBuffer_Release(&groups);
    PyBuffer_Release(&members);
    PyBuffer_Release(&out);
    return result;
}
