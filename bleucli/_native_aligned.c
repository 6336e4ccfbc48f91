/*
 * The aligned batch engine of bleucli._native: sentence-level BLEU, chrF and TER of many
 * (hypothesis, references) jobs in one call, for RL rewards and reranking.
 *
 *   batch_aligned(metric, hyps, streams, options, flags, threads, out)
 *       job j: hyps[j] against streams[k][j] for every stream k (None: no reference there);
 *       flags: BATCH_TOK13A (BLEU: right-strip and 13a-tokenise here), BATCH_LOWER
 *       (str.lower() first); other preprocessing is the caller's
 *
 * Phase 1 prepares each distinct text that several jobs use once (distinct objects: a
 * reference repeated for every completion of a prompt is tokenised once; a string equal
 * to the previous job's in the same place is taken as that object, see share_equal): its
 * tokens with a hash of their characters (BLEU, TER, chrF++'s words) and its characters
 * (chrF); a text of one job only is prepared by that job, into scratch memory (when
 * lowercasing, phase 1 checks that C can lowercase it; Python lowercases the few that C
 * cannot, before phase 2, and those are kept). Phase 2 scores the jobs: a job's tokens
 * get small ids from a table of that job alone (equal hashes and equal characters: one
 * id, so ids are exact, never a hash's guess). Clipped n-gram matches come
 * from bit-parallel match sets (see bits_matches) while the sentences are short, else
 * from per-order open-addressing tables of n-grams packed into 64-bit keys (16-bit word
 * ids, chrF's characters 63 / order bits each). A job beyond those bounds (BLEU orders
 * above four, more distinct words or characters than the bits hold) goes through the
 * statistics functions of the per-call API instead; either way a job's score is exactly
 * what bleucli.metrics computes (the score functions of _native_batch.h).
 * Both phases run without the GIL on `threads` threads over data the call owns; a job
 * writes only its own score, so any thread count gives the same bytes.
 */
#include "_native_batch.h"
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* For a function whose callers pass constants that make it a different loop each. */
#if defined(__GNUC__) || defined(__clang__)
#define ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define ALWAYS_INLINE inline
#endif


/* ------------------------------------------------------------------------------------ */
/* Memory that lives for the call: per-thread blocks, never moved.                       */

#define ARENA_BLOCK ((size_t)1 << 20)

typedef struct Block {
    struct Block *next;
    size_t used, cap;
    size_t pad;
} Block;

typedef struct {
    Block *head;
} Arena;

static void *arena_alloc(Arena *a, size_t size) {
    size = (size + 15) & ~(size_t)15;
    Block *b = a->head;
    if (b == NULL || b->cap - b->used < size) {
        size_t cap = size > ARENA_BLOCK ? size : ARENA_BLOCK;
        if (cap > (size_t)PY_SSIZE_T_MAX - sizeof(Block))
            return NULL;
        b = PyMem_RawMalloc(sizeof(Block) + cap);
        if (b == NULL)
            return NULL;
        b->next = a->head;
        b->used = 0;
        b->cap = cap;
        a->head = b;
    }
    void *p = (unsigned char *)(b + 1) + b->used;
    b->used += size;
    return p;
}

/* Empty the arena for reuse, keeping its newest block. */
static void arena_reset(Arena *a) {
    if (a->head == NULL)
        return;
    Block *keep = a->head, *b = keep->next;
    while (b != NULL) {
        Block *next = b->next;
        PyMem_RawFree(b);
        b = next;
    }
    keep->next = NULL;
    keep->used = 0;
}

static void arena_free(Arena *a) {
    while (a->head != NULL) {
        Block *next = a->head->next;
        PyMem_RawFree(a->head);
        a->head = next;
    }
}

/* ------------------------------------------------------------------------------------ */
/* A distinct text of the call, prepared once.                                           */

/* READY: prepared; PYTHON_LOWER: waits for str.lower(). */
enum { TEXT_READY = 0, TEXT_PYTHON_LOWER = 1 };

typedef struct {
    PyObject *obj;          /* the str, owned by the call */
    BleucliText full;       /* the text the metric scores: obj's, or its lowercased copy */
    const void *chars;      /* the tokens' characters, of kind `kind` */
    int kind, state;
    BleucliToken *tok;      /* BLEU's and TER's words, chrF++'s words */
    Py_ssize_t n_tok;
    uint32_t *cps;          /* chrF's characters (whitespace removed unless kept) */
    Py_ssize_t n_cps;
} Text;

/* Slot values of Engine.at. */
#define AT_ITEM 0x80000000u
#define AT_NONE 0xFFFFFFFFu
#define AT_PYTHON 0xFFFFFFFEu /* an object of one job that only Python lowercases (phase 1) */

/* An object several jobs use (or that only Python lowercases), with its Text prepared once
   in phase 1 (in a phase-1 arena). An object of one job has no item: that job prepares it,
   lowercasing too, into scratch memory (nothing kept, and no memory per object to fault
   in); when lowercasing, phase 1 only checks that C can lowercase it. */
typedef struct {
    PyObject *obj;
    Text *text;
} Item;

/* Are the first and the last w bytes of the n >= w bytes at p and q the same? (memcmp of a
   constant size compared with 0 compiles to loads.) */
static inline int same_ends(const unsigned char *p, const unsigned char *q, size_t n, size_t w) {
    return memcmp(p, q, w) == 0 && memcmp(p + n - w, q + n - w, w) == 0;
}

/* Are the n bytes at p those at q? Word-sized loads inside the n bytes (the last one may
   overlap the one before): no loop for a word of up to 16 bytes. */
static inline int same_bytes(const unsigned char *p, const unsigned char *q, size_t n) {
    if (n >= 8) {
        for (size_t k = 0; k + 8 < n; k += 8)
            if (memcmp(p + k, q + k, 8) != 0)
                return 0;
        return same_ends(p, q, n, 8);
    }
    if (n >= 4)
        return same_ends(p, q, n, 4);
    if (n >= 2)
        return same_ends(p, q, n, 2);
    return n == 0 || p[0] == q[0];
}

/* Are the len characters at p (of kind pk) those at q (of kind qk)? */
static inline int same_chars(const void *p, int pk, const void *q, int qk, uint32_t len) {
    if (pk == qk)
        return same_bytes(p, q, (size_t)len * (size_t)pk);
    for (uint32_t k = 0; k < len; k++)
        if (PyUnicode_READ(pk, p, k) != PyUnicode_READ(qk, q, k))
            return 0;
    return 1;
}

/* ------------------------------------------------------------------------------------ */
/* A call.                                                                               */

typedef struct {
    Options o;
    int tok13a, lower;
    PyObject **hyps, **refs; /* the call's objects (owned): hyps[j], refs[j * n_streams + k] */
    uint32_t *at;           /* per slot (the hypotheses, then the references as in refs):
                               AT_ITEM | k for items[k], AT_NONE for no reference, else
                               the slot itself (an object of that job alone) */
    Item *items;
    Py_ssize_t n_items;
    Py_ssize_t n_jobs, n_streams;
    double *out;
    Arena *arenas;          /* one per thread of phase 1 (prepared texts live there) */
    int sets, general;      /* short jobs by match sets; every job by the general path (tests
                               compare the three ways) */
    int plain;              /* the match sets without the bit-count instruction (tests) */
    int threads;
    int phase;
    Sharing s;
} Engine;

/* A word of a job's table, with its characters (verified without following pointers). */
typedef struct {
    uint64_t hash;
    uint32_t gen, id;
    const void *chars;
    uint32_t len;
    int kind;
} IdSlot;

/* An n-gram of one order in a job's table (16 bytes: a table of a sentence's n-grams stays
   in the first-level cache). Counts of 16 bits: the packed path takes sequences of fewer
   than 65536 positions. */
typedef struct {
    uint64_t key;
    uint32_t gen;
    uint16_t ref;           /* the most any reference has (while one is counted: scratch) */
    uint16_t hyp;           /* the hypothesis' count (while a reference is counted: its) */
} Gram;

typedef struct {
    uint32_t gen;
    uint32_t id;
} CharSlot;

/* A thread's scratch, reused from job to job. */
typedef struct {
    Arena scratch;          /* a job's texts used by it alone */
    Text own[65];
    Workspace *w;           /* 13a's rewriting path, and jobs of the general path */
    TerWork *ter;           /* TER's arrays */
    BleucliToken *tokens;
    Py_ssize_t tokens_cap;
    /* a job's word ids: a table of the job's distinct reference words */
    IdSlot *id_slots;
    Py_ssize_t id_cap;      /* allocated slots (a power of two) */
    uint32_t id_gen;
    Py_ssize_t n_ids;
    /* chrF's character ids: code points below 65536 directly, others in a table */
    CharSlot *bmp;
    CharSlot *astral;       /* (code point, gen, id) as two slots each */
    uint32_t *astral_cp;
    Py_ssize_t astral_cap;
    uint32_t cp_gen, n_cps;
    /* sequences of ids (references, then the hypothesis) and n-gram keys */
    uint32_t *seq;
    Py_ssize_t seq_cap;
    uint64_t *keys;
    Py_ssize_t keys_cap;
    unsigned char *alive;   /* per position: its n-gram of the last order occurs on the other side */
    Py_ssize_t alive_cap;
    uint32_t *slot_of;      /* per reference position: its n-gram's entry */
    Py_ssize_t slot_of_cap;
    uint16_t *counts;       /* bits_matches' counts per order and position */
    Py_ssize_t counts_cap;
    int sets_on;            /* whether short jobs take bits_matches (1) or the tables (0) */
    int popcnt;             /* whether the CPU counts bits in one instruction */
    uint64_t *sets;         /* bits_matches' occurrence sets (all 0 between jobs) */
    Py_ssize_t sets_cap;
    uint64_t *bit_rows;
    Py_ssize_t bit_rows_cap;
    Gram *grams;
    Py_ssize_t grams_cap;
    uint32_t gram_gen;
    int gram_shift;
    /* the general path's inputs and statistics */
    BleucliText *views;
    Py_ssize_t views_cap;
    Py_ssize_t *row;
    Py_ssize_t row_cap;
    double *work;
    Py_ssize_t *ter_ids;    /* TER's word ids */
    Py_ssize_t ter_cap;
    uint32_t *cids;         /* chrF's character ids */
    Py_ssize_t cids_cap;
    const Py_ssize_t **ids;
    Py_ssize_t ids_cap, *lens, lens_cap;
    Py_ssize_t words[2];    /* the line pair TER refused */
} Local;

/* bleucli_grow(), with every entry 0 after growing (tables stamped by generation). */
static int grow_zeroed(void **ptr, Py_ssize_t *cap, Py_ssize_t need, size_t size) {
    if (need <= *cap)
        return 0;
    if (bleucli_grow(ptr, cap, need, size) < 0)
        return -1;
    memset(*ptr, 0, (size_t)*cap * size);
    return 0;
}

static void local_free(Local *l) {
    arena_free(&l->scratch);
    bleucli_workspace_free(l->w);
    bleucli_ter_work_free(l->ter);
    PyMem_RawFree(l->tokens);
    PyMem_RawFree(l->id_slots);
    PyMem_RawFree(l->bmp);
    PyMem_RawFree(l->astral);
    PyMem_RawFree(l->astral_cp);
    PyMem_RawFree(l->seq);
    PyMem_RawFree(l->keys);
    PyMem_RawFree(l->alive);
    PyMem_RawFree(l->slot_of);
    PyMem_RawFree(l->counts);
    PyMem_RawFree(l->sets);
    PyMem_RawFree(l->bit_rows);
    PyMem_RawFree(l->grams);
    PyMem_RawFree(l->views);
    PyMem_RawFree(l->row);
    PyMem_RawFree(l->work);
    PyMem_RawFree(l->ter_ids);
    PyMem_RawFree(l->cids);
    PyMem_RawFree((void *)l->ids);
    PyMem_RawFree(l->lens);
}

static Py_ssize_t pow2_above(Py_ssize_t n) {
    Py_ssize_t cap = 16;
    while (cap < 2 * n + 2)
        cap *= 2;
    return cap;
}

/* ------------------------------------------------------------------------------------ */
/* Phase 1: prepare a text.                                                              */

/* Whether only Python lowercases c as str.lower() does: capital sigma, whose lowercase
   depends on its neighbours, and U+0130, which lowercases to two characters. */
static inline int only_python_lowers(Py_UCS4 c) { return c == 0x3A3 || c == 0x130; }

/* Whether lowered() can lowercase the str obj (no character only Python lowers). */
static int lowers_in_c(PyObject *obj) {
    BleucliText v = bleucli_view(obj);
    if (v.kind == PyUnicode_1BYTE_KIND) /* neither is below 256 */
        return 1;
    for (Py_ssize_t i = 0; i < v.len; i++)
        if (only_python_lowers(PyUnicode_READ(v.kind, v.data, i)))
            return 0;
    return 1;
}

/* Py_UNICODE_TOLOWER of every BMP character, filled by the first call that lowercases
   (with the GIL held, before any thread reads it): a table read instead of Python's
   two-level lookup through a function call, for text that is mostly not ASCII (Cyrillic,
   Greek, CJK). No BMP character lowercases out of the BMP (the tests check them all). */
static uint16_t lower_bmp[0x10000];
static int lower_bmp_ready;

static void fill_lower_bmp(void) {
    if (lower_bmp_ready)
        return;
    for (Py_UCS4 c = 0; c < 0x10000; c++)
        lower_bmp[c] = (uint16_t)Py_UNICODE_TOLOWER(c);
    lower_bmp_ready = 1;
}

/* obj lowercased into the arena as str.lower() does, or 0 when only Python can (capital
   sigma, whose lowercase depends on its neighbours; U+0130, which lowercases to two
   characters); -1 without memory. Every other character's full lowercase mapping is the
   one character Py_UNICODE_TOLOWER gives (tests/test_batch_scoring.py checks them all). */
static int lowered(Arena *a, Text *x) {
    BleucliText v = bleucli_view(x->obj);
    if (PyUnicode_IS_ASCII(x->obj)) {
        Py_UCS1 *copy = arena_alloc(a, (size_t)v.len + 1);
        if (copy == NULL)
            return -1;
        const Py_UCS1 *in = v.data;
        for (Py_ssize_t i = 0; i < v.len; i++)
            copy[i] = (Py_UCS1)(in[i] >= 'A' && in[i] <= 'Z' ? in[i] + 32 : in[i]);
        x->full = (BleucliText){PyUnicode_1BYTE_KIND, copy, v.len};
        return 1;
    }
    /* the same width: lowercasing keeps Latin-1 in Latin-1 and the BMP in the BMP (U+0130
       aside, which goes to Python; the tests check every code point) */
    if ((size_t)v.len > (size_t)PY_SSIZE_T_MAX / 4 - 1)
        return -1;
    void *copy = arena_alloc(a, (size_t)v.len * (size_t)v.kind + 4);
    if (copy == NULL)
        return -1;
#define LOWER(T)                                                                           \
    for (Py_ssize_t i = 0; i < v.len; i++) {                                               \
        Py_UCS4 c = ((const T *)v.data)[i];                                                \
        if (c < 128) {                                                                     \
            ((T *)copy)[i] = (T)(c >= 'A' && c <= 'Z' ? c + 32 : c);                       \
            continue;                                                                      \
        }                                                                                  \
        if (only_python_lowers(c))                                                         \
            return 0;                                                                      \
        ((T *)copy)[i] = (T)(c < 0x10000 ? lower_bmp[c] : Py_UNICODE_TOLOWER(c));         \
    }
    if (v.kind == PyUnicode_1BYTE_KIND)
        LOWER(Py_UCS1)
    else if (v.kind == PyUnicode_2BYTE_KIND)
        LOWER(Py_UCS2)
    else
        LOWER(Py_UCS4)
#undef LOWER
    x->full = (BleucliText){v.kind, copy, v.len};
    return 1;
}

/* The tokens of x->full in `mode` into the arena (their characters too, when 13a rewrote
   the line into the workspace). */
static int prepare_tokens(Local *l, Arena *a, Text *x, int mode) {
    if (bleucli_grow((void **)&l->tokens, &l->tokens_cap, x->full.len + 1, sizeof(BleucliToken)) < 0)
        return -1;
    const void *chars;
    int kind;
    Py_ssize_t n = bleucli_hashed_tokens(l->w, &x->full, mode, l->tokens, &chars, &kind);
    if (n < 0)
        return -1;
    x->tok = arena_alloc(a, (size_t)(n + 1) * sizeof(BleucliToken));
    if (x->tok == NULL)
        return -1;
    memcpy(x->tok, l->tokens, (size_t)n * sizeof(BleucliToken));
    x->n_tok = n;
    x->chars = chars;
    x->kind = kind;
    if (chars != x->full.data) { /* 13a's rewritten line: the tokens' characters copied */
        size_t end = n ? (size_t)x->tok[n - 1].start + x->tok[n - 1].len : 0;
        void *copy = arena_alloc(a, end * (size_t)kind + 4);
        if (copy == NULL)
            return -1;
        memcpy(copy, chars, end * (size_t)kind);
        x->chars = copy;
    }
    return 0;
}

static int prepare_text(const Engine *e, Local *l, Arena *a, Text *x, int lower) {
    const Options *o = &e->o;
    x->full = bleucli_view(x->obj);
    if (lower) {
        int done = lowered(a, x);
        if (done <= 0) {
            x->state = TEXT_PYTHON_LOWER;
            return done;
        }
    }
    x->state = TEXT_READY;
    if (o->metric == METRIC_CHRF) {
        x->cps = arena_alloc(a, (size_t)(x->full.len + 1) * sizeof(uint32_t));
        if (x->cps == NULL)
            return -1;
        x->n_cps = bleucli_chrf_chars(&x->full, o->whitespace, x->cps);
        return o->word_order ? prepare_tokens(l, a, x, BLEUCLI_TOKENS_CHRF) : 0;
    }
    return prepare_tokens(l, a, x, e->tok13a ? BLEUCLI_TOKENS_13A : BLEUCLI_TOKENS_SPLIT);
}

/* ------------------------------------------------------------------------------------ */
/* Phase 2: a job's ids and n-grams.                                                     */

/* An empty id table for the words of `n` reference tokens. */
static int ids_reset(Local *l, Py_ssize_t n) {
    Py_ssize_t cap = pow2_above(n);
    if (cap > l->id_cap) {
        PyMem_RawFree(l->id_slots);
        l->id_slots = PyMem_RawCalloc((size_t)cap, sizeof(IdSlot));
        if (l->id_slots == NULL) {
            l->id_cap = 0;
            return -1;
        }
        l->id_cap = cap;
        l->id_gen = 0;
    }
    if (++l->id_gen == 0) {
        memset(l->id_slots, 0, (size_t)l->id_cap * sizeof(IdSlot));
        l->id_gen = 1;
    }
    l->n_ids = 0;
    return 0;
}

/* The id (from 1) of token t of text x; a new one if `add`, else 0 for a word the table
   does not have. The table's size is the power of two ids_reset chose for the job. */
static ALWAYS_INLINE uint32_t token_id(Local *l, Py_ssize_t mask, const Text *x,
                                       const BleucliToken *t, int add) {
    Py_ssize_t slot = (Py_ssize_t)(t->hash & (uint64_t)mask);
    for (;;) {
        IdSlot *s = &l->id_slots[slot];
        if (s->gen != l->id_gen) {
            if (!add)
                return 0;
            uint32_t id = (uint32_t)++l->n_ids;
            s->gen = l->id_gen;
            s->hash = t->hash;
            s->id = id;
            s->chars = (const char *)x->chars + (size_t)t->start * (size_t)x->kind;
            s->len = t->len;
            s->kind = x->kind;
            return id;
        }
        if (s->hash == t->hash && s->len == t->len &&
            same_chars(s->chars, s->kind,
                       (const char *)x->chars + (size_t)t->start * (size_t)x->kind, x->kind,
                       t->len))
            return s->id;
        slot = (slot + 1) & mask;
    }
}

/* Ids of the words of texts[0..n) (the references, added) and of hyp (looked up) into
   l->seq: reference k's at seq + at[k], the hypothesis' after them. */
static int word_ids(Local *l, const Text *const *refs, Py_ssize_t n, const Text *hyp,
                    Py_ssize_t *at) {
    Py_ssize_t total = 0;
    for (Py_ssize_t k = 0; k < n; k++)
        total += refs[k]->n_tok;
    if (ids_reset(l, total) < 0 ||
        bleucli_grow((void **)&l->seq, &l->seq_cap, total + hyp->n_tok + 1, sizeof(uint32_t)) < 0)
        return -1;
    /* the table is used at the job's size: a long job before must not slow every later one */
    Py_ssize_t mask = pow2_above(total) - 1, offset = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        at[k] = offset;
        for (Py_ssize_t i = 0; i < refs[k]->n_tok; i++)
            l->seq[offset++] = token_id(l, mask, refs[k], &refs[k]->tok[i], 1);
    }
    at[n] = offset;
    for (Py_ssize_t i = 0; i < hyp->n_tok; i++)
        l->seq[offset + i] = token_id(l, mask, hyp, &hyp->tok[i], 0);
    return 0;
}

/* An empty n-gram table for `n` n-grams. */
static int grams_reset(Local *l, Py_ssize_t n) {
    Py_ssize_t cap = pow2_above(n);
    if (cap > l->grams_cap) {
        PyMem_RawFree(l->grams);
        l->grams = PyMem_RawCalloc((size_t)cap, sizeof(Gram));
        if (l->grams == NULL) {
            l->grams_cap = 0;
            return -1;
        }
        l->grams_cap = cap;
        l->gram_gen = 0;
    }
    if (++l->gram_gen == 0) {
        memset(l->grams, 0, (size_t)l->grams_cap * sizeof(Gram));
        l->gram_gen = 1;
    }
    int bits = 0;
    while (((Py_ssize_t)1 << bits) < cap)
        bits++;
    l->gram_shift = 64 - bits;
    return 0;
}

static inline Py_ssize_t gram_home(const Local *l, uint64_t key) {
    return (Py_ssize_t)((key * 0x9e3779b97f4a7c15ULL) >> l->gram_shift);
}

/* The entry of `key` (not 0), added if new. */
static inline Gram *gram_add(Local *l, uint64_t key) {
    Py_ssize_t mask = ((Py_ssize_t)1 << (64 - l->gram_shift)) - 1, slot = gram_home(l, key);
    for (;;) {
        Gram *g = &l->grams[slot];
        if (g->gen != l->gram_gen) {
            g->gen = l->gram_gen;
            g->key = key;
            g->ref = g->hyp = 0;
            return g;
        }
        if (g->key == key)
            return g;
        slot = (slot + 1) & mask;
    }
}

/* The entry of `key`, or NULL. */
static inline Gram *gram_find(Local *l, uint64_t key) {
    Py_ssize_t mask = ((Py_ssize_t)1 << (64 - l->gram_shift)) - 1, slot = gram_home(l, key);
    for (;;) {
        Gram *g = &l->grams[slot];
        if (g->gen != l->gram_gen)
            return NULL;
        if (g->key == key)
            return g;
        slot = (slot + 1) & mask;
    }
}

/* Extend the keys of the n-grams of order - 1 at each position of ids[0..n) to `order`
   (bits per id); a key holding an id 0 (a word the references do not have) stays 0. */
static inline Py_ssize_t roll_keys(uint64_t *keys, const uint32_t *ids, Py_ssize_t n,
                                   Py_ssize_t order, int bits) {
    Py_ssize_t count = n >= order ? n - order + 1 : 0;
    if (order == 1) {
        for (Py_ssize_t i = 0; i < count; i++)
            keys[i] = ids[i];
        return count;
    }
    int shift = bits * (int)(order - 1);
    for (Py_ssize_t i = 0; i < count; i++) {
        uint64_t id = ids[i + order - 1];
        keys[i] = keys[i] && id ? keys[i] | (id << shift) : 0;
    }
    return count;
}

/* Clipped n-gram matches per order, 1..orders, of the hypothesis hyp[0..hyp_len) against
   the references ref[at[k] .. at[k + 1]) for k < n_refs (a hypothesis n-gram counts as often
   as the reference that has it most often) into matches[0..orders); keys carry `bits` per
   id. Each order has a table of its own, as small as the sentence. An n-gram can only match
   if both its (n - 1)-grams do, on either side: an order looks up (or, on the reference
   side, counts) only those. */
static int count_matches(Local *l, const uint32_t *ref, const Py_ssize_t *at, Py_ssize_t n_refs,
                         const uint32_t *hyp, Py_ssize_t hyp_len, Py_ssize_t orders, int bits,
                         Py_ssize_t *matches) {
    Py_ssize_t R = at[n_refs], total = R + hyp_len + 1;
    if (bleucli_grow((void **)&l->keys, &l->keys_cap, total, sizeof(uint64_t)) < 0 ||
        bleucli_grow((void **)&l->alive, &l->alive_cap, total, 1) < 0 ||
        bleucli_grow((void **)&l->slot_of, &l->slot_of_cap, R + 1, sizeof(uint32_t)) < 0)
        return -1;
    uint64_t *ref_keys = l->keys, *hyp_keys = l->keys + R;
    unsigned char *ref_alive = l->alive, *hyp_alive = l->alive + R;
    uint32_t *slot_of = l->slot_of;
    for (Py_ssize_t order = 1; order <= orders; order++) {
        Py_ssize_t grams = 0;
        for (Py_ssize_t k = 0; k < n_refs; k++)
            grams += at[k + 1] - at[k] >= order ? at[k + 1] - at[k] - order + 1 : 0;
        if (grams_reset(l, grams) < 0)
            return -1;
        for (Py_ssize_t k = 0; k < n_refs; k++) {
            Py_ssize_t count = roll_keys(ref_keys + at[k], ref + at[k], at[k + 1] - at[k],
                                         order, bits);
            for (Py_ssize_t p = at[k]; p < at[k] + count; p++) {
                if (order > 1 && !(ref_alive[p] && ref_alive[p + 1])) {
                    slot_of[p] = UINT32_MAX;
                    continue;
                }
                Gram *g = gram_add(l, ref_keys[p]);
                slot_of[p] = (uint32_t)(g - l->grams);
                g->hyp++; /* this reference's count, for now */
            }
            for (Py_ssize_t p = at[k]; p < at[k] + count; p++) {
                if (slot_of[p] == UINT32_MAX)
                    continue;
                Gram *g = &l->grams[slot_of[p]];
                if (g->hyp > g->ref)
                    g->ref = g->hyp;
                g->hyp = 0;
            }
        }
        Py_ssize_t count = roll_keys(hyp_keys, hyp, hyp_len, order, bits), correct = 0;
        for (Py_ssize_t i = 0; i < count; i++) {
            int found = 0;
            if (hyp_keys[i] != 0 && (order == 1 || (hyp_alive[i] && hyp_alive[i + 1]))) {
                Gram *g = gram_find(l, hyp_keys[i]);
                if (g != NULL) {
                    found = 1;
                    if (++g->hyp <= g->ref)
                        correct++;
                }
            }
            hyp_alive[i] = (unsigned char)found;
        }
        matches[order - 1] = correct;
        for (Py_ssize_t k = 0; k < n_refs; k++) {
            Py_ssize_t n = at[k + 1] - at[k], count_k = n >= order ? n - order + 1 : 0;
            for (Py_ssize_t p = at[k]; p < at[k] + count_k; p++)
                ref_alive[p] = slot_of[p] != UINT32_MAX && l->grams[slot_of[p]].hyp > 0;
        }
    }
    return 0;
}


/* ------------------------------------------------------------------------------------ */
/* Phase 2: clipped matches by bit-parallel match sets.                                  */
/*                                                                                       */
/* For the hypothesis position i and order n, match[n][i] is the set of reference         */
/* positions j whose n-gram equals the hypothesis n-gram at i, one bit each: match[1][i]   */
/* is the set of positions holding the id h[i] (a table per id), and                       */
/* match[n][i] = match[1][i] & (match[n - 1][i + 1] >> 1). Its population is how often the */
/* reference has that n-gram. The same over the hypothesis itself, with match[1][i] cut   */
/* to positions before i, gives how many earlier copies the hypothesis has. The n-gram at  */
/* i is a clipped match iff its copy number (1 + earlier copies) is at most the most any   */
/* reference has: summed over i, the sum over distinct n-grams of min(hypothesis count,    */
/* reference count). An empty set ends the orders of a position (no longer n-gram can    */
/* match there), so a pair costs about (shared n-grams) x (words of 64 positions).       */

/* The longest sentence (in positions) that takes match sets; longer ones take the tables,
   whose work grows with the length rather than with its square. */
#define MAX_BIT_WORDS 8

/* x86-64's baseline has no population count instruction (a library call instead, 2x the
   time of the whole kernel): a second copy of the kernel uses it where the CPU has it. */
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__)) && \
    !defined(__POPCNT__)
#define POPCNT_CLONE 1
#endif

static ALWAYS_INLINE int bits_count(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_popcountll(x);
#else
    int n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
#endif
}

static inline Py_ssize_t words_for(Py_ssize_t n) { return (n + 63) / 64; }

/* sets[id * W ..] |= the positions of seq[0..n) holding id (set) or clears them (!set). */
static void occurrence_sets(const uint32_t *seq, Py_ssize_t n, Py_ssize_t W, uint64_t *sets,
                            int set) {
    for (Py_ssize_t j = 0; j < n; j++) {
        uint64_t *word = &sets[(Py_ssize_t)seq[j] * W + j / 64];
        *word = set ? *word | (uint64_t)1 << (j % 64) : 0;
    }
}

/* For each hypothesis position i and order n <= N, the population c of match[n][i] over
   `sets` (W words per id): with `earlier`, the hypothesis' own sets cut to positions before
   i, stored in counts[(n - 1) * H + i]; else the reference's, either kept as a maximum in
   counts (several references) or, with `before` (one reference), counted in matched[n - 1]
   when c > before[...] (a clipped match). rows: 2 * N * W words of scratch. */
static ALWAYS_INLINE void match_counts(const uint32_t *h, Py_ssize_t H, const uint64_t *sets,
                                       Py_ssize_t W, Py_ssize_t N, uint64_t *rows,
                                       uint16_t *counts, const uint16_t *before,
                                       Py_ssize_t *matched, int earlier) {
    uint64_t *below = rows, *cur = rows + N * W;
    Py_ssize_t below_depth = 0;
    for (Py_ssize_t i = H - 1; i >= 0; i--) {
        Py_ssize_t depth = 0, top = earlier ? i / 64 + 1 : W; /* the words that can be set */
        if (h[i] != 0) {
            const uint64_t *one = sets + (Py_ssize_t)h[i] * W;
            int c = 0;
            for (Py_ssize_t w = 0; w < top; w++) {
                uint64_t x = one[w];
                if (earlier && w == top - 1)
                    x &= ((uint64_t)1 << (i % 64)) - 1;
                cur[w] = x;
                c += bits_count(x);
            }
            for (Py_ssize_t n = 1; c > 0;) {
                depth = n;
                uint16_t *at = &counts[(n - 1) * H + i];
                if (before != NULL)
                    matched[n - 1] += c > before[(n - 1) * H + i];
                else if (c > *at)
                    *at = (uint16_t)c;
                if (++n > N || n - 1 > below_depth)
                    break;
                const uint64_t *prev = below + (n - 2) * W;
                uint64_t *out = cur + (n - 1) * W;
                c = 0;
                for (Py_ssize_t w = 0; w < top; w++) {
                    uint64_t shifted = prev[w] >> 1;
                    if (w + 1 < top)
                        shifted |= prev[w + 1] << 63;
                    out[w] = cur[w] & shifted;
                    c += bits_count(out[w]);
                }
            }
        }
        uint64_t *t = below;
        below = cur;
        cur = t;
        below_depth = depth;
    }
}

/* match_counts with W a constant where it is 1 (most sentences: the loops over words go). */
#define MATCH_COUNTS(h, H, sets, W, ...)                                                   \
    ((W) == 1 ? match_counts(h, H, sets, 1, __VA_ARGS__)                                   \
              : match_counts(h, H, sets, W, __VA_ARGS__))

static int bits_fit(Py_ssize_t hyp_len, const Py_ssize_t *at, Py_ssize_t n_refs) {
    if (hyp_len > 64 * MAX_BIT_WORDS)
        return 0;
    for (Py_ssize_t k = 0; k < n_refs; k++)
        if (at[k + 1] - at[k] > 64 * MAX_BIT_WORDS)
            return 0;
    return 1;
}

/* count_matches' result by match sets: the hypothesis' earlier copies, then each
   reference's counts. */
static ALWAYS_INLINE int bits_matches_body(Local *l, const uint32_t *ref, const Py_ssize_t *at,
                                           Py_ssize_t n_refs, const uint32_t *hyp,
                                           Py_ssize_t H, Py_ssize_t N, Py_ssize_t n_ids,
                                           Py_ssize_t *matches) {
    Py_ssize_t W = words_for(H) > 1 ? words_for(H) : 1;
    for (Py_ssize_t k = 0; k < n_refs; k++)
        if (words_for(at[k + 1] - at[k]) > W)
            W = words_for(at[k + 1] - at[k]);
    Py_ssize_t cells = (n_refs > 1 ? 2 : 1) * N * H + 1;
    if (grow_zeroed((void **)&l->sets, &l->sets_cap, (n_ids + 1) * W, sizeof(uint64_t)) < 0 ||
        bleucli_grow((void **)&l->bit_rows, &l->bit_rows_cap, 2 * N * W, sizeof(uint64_t)) < 0 ||
        bleucli_grow((void **)&l->counts, &l->counts_cap, cells, sizeof(uint16_t)) < 0)
        return -1;
    uint16_t *before = l->counts, *most = n_refs > 1 ? before + N * H : NULL;
    memset(before, 0, (size_t)(cells - 1) * sizeof(uint16_t));
    for (Py_ssize_t n = 0; n < N; n++)
        matches[n] = 0;
    Py_ssize_t Wh = words_for(H);
    if (Wh == 0)
        return 0;
    occurrence_sets(hyp, H, Wh, l->sets, 1);
    MATCH_COUNTS(hyp, H, l->sets, Wh, N, l->bit_rows, before, NULL, NULL, 1);
    occurrence_sets(hyp, H, Wh, l->sets, 0);
    for (Py_ssize_t k = 0; k < n_refs; k++) {
        Py_ssize_t R = at[k + 1] - at[k], Wk = words_for(R);
        if (R == 0)
            continue;
        occurrence_sets(ref + at[k], R, Wk, l->sets, 1);
        if (most == NULL)
            MATCH_COUNTS(hyp, H, l->sets, Wk, N, l->bit_rows, NULL, before, matches, 0);
        else
            MATCH_COUNTS(hyp, H, l->sets, Wk, N, l->bit_rows, most, NULL, NULL, 0);
        occurrence_sets(ref + at[k], R, Wk, l->sets, 0);
    }
    if (most != NULL)
        for (Py_ssize_t n = 1; n <= N; n++) {
            Py_ssize_t correct = 0;
            const uint16_t *m = most + (n - 1) * H, *b = before + (n - 1) * H;
            for (Py_ssize_t i = 0; i < H; i++)
                correct += m[i] > b[i];
            matches[n - 1] = correct;
        }
    return 0;
}

static int bits_matches_plain(Local *l, const uint32_t *ref, const Py_ssize_t *at,
                              Py_ssize_t n_refs, const uint32_t *hyp, Py_ssize_t H,
                              Py_ssize_t N, Py_ssize_t n_ids, Py_ssize_t *matches) {
    return bits_matches_body(l, ref, at, n_refs, hyp, H, N, n_ids, matches);
}

#ifdef POPCNT_CLONE
__attribute__((target("popcnt"))) static int
bits_matches_popcnt(Local *l, const uint32_t *ref, const Py_ssize_t *at, Py_ssize_t n_refs,
                    const uint32_t *hyp, Py_ssize_t H, Py_ssize_t N, Py_ssize_t n_ids,
                    Py_ssize_t *matches) {
    return bits_matches_body(l, ref, at, n_refs, hyp, H, N, n_ids, matches);
}
#endif

static int has_popcnt(void) {
#ifdef POPCNT_CLONE
    return __builtin_cpu_supports("popcnt");
#else
    return 0;
#endif
}

static int bits_matches(Local *l, const uint32_t *ref, const Py_ssize_t *at, Py_ssize_t n_refs,
                        const uint32_t *hyp, Py_ssize_t H, Py_ssize_t N, Py_ssize_t n_ids,
                        Py_ssize_t *matches) {
#ifdef POPCNT_CLONE
    if (l->popcnt)
        return bits_matches_popcnt(l, ref, at, n_refs, hyp, H, N, n_ids, matches);
#endif
    return bits_matches_plain(l, ref, at, n_refs, hyp, H, N, n_ids, matches);
}

/* Clipped matches per order: by match sets while the sentences are short, else by the
   n-gram tables (the same counts either way). */
static int clipped_matches(Local *l, const uint32_t *ref, const Py_ssize_t *at,
                           Py_ssize_t n_refs, const uint32_t *hyp, Py_ssize_t hyp_len,
                           Py_ssize_t orders, int bits, Py_ssize_t n_ids, Py_ssize_t *matches) {
    if (orders <= 0) /* chrF with char_order=0 (or word_order=0): no n-grams, no tables */
        return 0;
    if (l->sets_on && bits_fit(hyp_len, at, n_refs))
        return bits_matches(l, ref, at, n_refs, hyp, hyp_len, orders, n_ids, matches);
    return count_matches(l, ref, at, n_refs, hyp, hyp_len, orders, bits, matches);
}

/* ------------------------------------------------------------------------------------ */
/* Phase 2: the jobs.                                                                    */

/* BLEU of job j through packed keys; 1 when the job is beyond them (then the general
   path scores it), 0 done, -1 no memory. */
static int bleu_packed(const Engine *e, Local *l, Py_ssize_t j, const Text *hyp,
                       const Text *const *refs, Py_ssize_t n_refs) {
    const Options *o = &e->o;
    Py_ssize_t order = o->max_order;
    if (order > 4 || e->general)
        return 1;
    Py_ssize_t at[65];
    if (n_refs > 64)
        return 1;
    if (word_ids(l, refs, n_refs, hyp, at) < 0)
        return -1;
    if (l->n_ids >= 65535)
        return 1;
    Py_ssize_t hyp_len = hyp->n_tok, best = -1, best_diff = -1;
    if (hyp_len >= 65535)
        return 1;
    for (Py_ssize_t k = 0; k < n_refs; k++) { /* closest reference length, ties: shorter */
        Py_ssize_t len = at[k + 1] - at[k];
        Py_ssize_t diff = hyp_len > len ? hyp_len - len : len - hyp_len;
        if (best_diff == -1 || diff < best_diff || (diff == best_diff && len < best)) {
            best = len;
            best_diff = diff;
        }
        if (len >= 65535)
            return 1;
    }
    if (bleucli_grow((void **)&l->row, &l->row_cap, o->width, sizeof(Py_ssize_t)) < 0)
        return -1;
    Py_ssize_t *row = l->row, matches[4];
    if (clipped_matches(l, l->seq, at, n_refs, l->seq + at[n_refs], hyp_len, order, 16,
                        l->n_ids, matches) < 0)
        return -1;
    row[0] = hyp_len;
    row[1] = best;
    for (Py_ssize_t n = 1; n <= order; n++) {
        row[1 + n] = matches[n - 1];
        row[1 + order + n] = hyp_len >= n ? hyp_len - n + 1 : 0;
    }
    e->out[j] = bleu_score(o, row, l->work);
    return 0;
}

/* The id (from 1) of code point c; new if `add`, else 0 when the references lack it. */
static inline uint32_t char_id(Local *l, uint32_t c, int add) {
    CharSlot *s;
    if (c < 65536) {
        s = &l->bmp[c];
    } else {
        Py_ssize_t mask = l->astral_cap - 1, slot = (Py_ssize_t)((c * 0x9e3779b1u) & (uint32_t)mask);
        for (;;) {
            s = &l->astral[slot];
            if (s->gen != l->cp_gen || l->astral_cp[slot] == c)
                break;
            slot = (slot + 1) & mask;
        }
        if (s->gen != l->cp_gen && add)
            l->astral_cp[slot] = c;
    }
    if (s->gen == l->cp_gen)
        return s->id;
    if (!add)
        return 0;
    s->gen = l->cp_gen;
    s->id = ++l->n_cps;
    return s->id;
}

/* Room for the character table of a job with `astral` code points at most beyond the BMP. */
static int chars_reset(Local *l, Py_ssize_t astral) {
    if (l->bmp == NULL) {
        l->bmp = PyMem_RawCalloc(65536, sizeof(CharSlot));
        if (l->bmp == NULL)
            return -1;
    }
    Py_ssize_t cap = pow2_above(astral);
    if (cap > l->astral_cap) {
        PyMem_RawFree(l->astral);
        PyMem_RawFree(l->astral_cp);
        l->astral = PyMem_RawCalloc((size_t)cap, sizeof(CharSlot));
        l->astral_cp = PyMem_RawCalloc((size_t)cap, sizeof(uint32_t));
        if (l->astral == NULL || l->astral_cp == NULL) {
            l->astral_cap = 0;
            return -1;
        }
        l->astral_cap = cap; /* its slots are of generation 0, never a current one */
    }
    if (++l->cp_gen == 0) {
        memset(l->bmp, 0, 65536 * sizeof(CharSlot));
        memset(l->astral, 0, (size_t)l->astral_cap * sizeof(CharSlot));
        l->cp_gen = 1;
    }
    l->n_cps = 0;
    return 0;
}

/* chrF of job j through packed keys (1: beyond them, 0 done, -1 no memory). */
static int chrf_packed(const Engine *e, Local *l, Py_ssize_t j, const Text *hyp,
                       const Text *const *refs, Py_ssize_t n_refs) {
    const Options *o = &e->o;
    Py_ssize_t C = o->char_order, Wo = o->word_order;
    int bits = C > 0 ? (int)(63 / C) : 32;
    if (Wo > 3 || C > 63 || n_refs > 64 || e->general)
        return 1;
    /* characters: the references' ids, then the hypothesis' (0: absent from them) */
    Py_ssize_t total = hyp->n_cps, astral = 0;
    if (hyp->n_cps >= 65535 || hyp->n_tok >= 65535)
        return 1;
    for (Py_ssize_t k = 0; k < n_refs; k++) {
        if (refs[k]->n_cps >= 65535 || refs[k]->n_tok >= 65535)
            return 1;
        total += refs[k]->n_cps;
        for (Py_ssize_t i = 0; i < refs[k]->n_cps; i++)
            astral += refs[k]->cps[i] >= 65536;
    }
    Py_ssize_t word_at[65];
    if (Wo > 0) {
        if (word_ids(l, refs, n_refs, hyp, word_at) < 0)
            return -1;
        if (l->n_ids >= 65535)
            return 1;
    }
    if (chars_reset(l, astral) < 0 ||
        bleucli_grow((void **)&l->cids, &l->cids_cap, total + 1, sizeof(uint32_t)) < 0 ||
        bleucli_grow((void **)&l->row, &l->row_cap, o->width, sizeof(Py_ssize_t)) < 0)
        return -1;
    uint32_t *cids = l->cids;
    Py_ssize_t offset = 0, char_at[65];
    for (Py_ssize_t k = 0; k < n_refs; k++) {
        char_at[k] = offset;
        for (Py_ssize_t i = 0; i < refs[k]->n_cps; i++)
            cids[offset++] = char_id(l, refs[k]->cps[i], 1);
    }
    char_at[n_refs] = offset;
    if (bits < 32 && l->n_cps >= ((uint32_t)1 << bits))
        return 1;
    for (Py_ssize_t i = 0; i < hyp->n_cps; i++)
        cids[offset + i] = char_id(l, hyp->cps[i], 0);
    const uint32_t *hyp_chars = cids + char_at[n_refs];
    double best = -1.0;
    Py_ssize_t matches[64 + 3];
    for (Py_ssize_t k = 0; k < n_refs; k++) {
        Py_ssize_t n_chars = char_at[k + 1] - char_at[k];
        Py_ssize_t n_words = Wo ? word_at[k + 1] - word_at[k] : 0;
        Py_ssize_t *row = l->row;
        Py_ssize_t chars_at[2] = {0, n_chars}, words_at[2] = {0, n_words};
        if (clipped_matches(l, cids + char_at[k], chars_at, 1, hyp_chars, hyp->n_cps, C, bits,
                            l->n_cps, matches) < 0 ||
            (Wo && clipped_matches(l, l->seq + word_at[k], words_at, 1,
                                   l->seq + word_at[n_refs], hyp->n_tok, Wo, 16, l->n_ids,
                                   matches + C) < 0))
            return -1;
        for (Py_ssize_t i = 0; i < C + Wo; i++) {
            Py_ssize_t n = i < C ? i + 1 : i - C + 1;
            Py_ssize_t ref_len = i < C ? n_chars : n_words;
            Py_ssize_t hyp_len = i < C ? hyp->n_cps : hyp->n_tok;
            Py_ssize_t ref_total = ref_len >= n ? ref_len - n + 1 : 0;
            row[3 * i] = ref_total && hyp_len >= n ? hyp_len - n + 1 : 0;
            row[3 * i + 1] = ref_total;
            row[3 * i + 2] = ref_total ? matches[i] : 0;
        }
        double f = chrf_score(o, row);
        if (f > best)
            best = f;
    }
    e->out[j] = best;
    return 0;
}

/* TER of job j: the words' ids, then the edit count of bleucli_ter_count. */
static int ter_job(Engine *e, Local *l, Py_ssize_t j, const Text *hyp, const Text *const *refs,
                   Py_ssize_t n_refs, long long *ter_code) {
    Py_ssize_t at[65];
    if (n_refs > 64)
        return BATCH_NO_MEMORY; /* never: a call has at most 64 streams (checked) */
    if (word_ids(l, refs, n_refs, hyp, at) < 0 ||
        bleucli_grow((void **)&l->ter_ids, &l->ter_cap, at[n_refs] + hyp->n_tok + 1, sizeof(Py_ssize_t)) < 0)
        return BATCH_NO_MEMORY;
    Py_ssize_t *ids = l->ter_ids, n_hyp = hyp->n_tok;
    for (Py_ssize_t i = 0; i < at[n_refs] + n_hyp; i++)
        ids[i] = l->seq[i];
    long long best = 10000000000000000LL, ref_lengths = 0;
    for (Py_ssize_t k = 0; k < n_refs; k++) {
        Py_ssize_t n_ref = at[k + 1] - at[k];
        long long edits = n_ref == 0 ? n_hyp
                                     : bleucli_ter_count_in(l->ter, ids + at[n_refs], n_hyp,
                                                            ids + at[k], n_ref);
        if (edits < 0) {
            *ter_code = edits;
            l->words[0] = n_hyp;
            l->words[1] = n_ref;
            return edits == TER_NO_MEMORY ? BATCH_NO_MEMORY : BATCH_TER;
        }
        ref_lengths += n_ref;
        if (edits < best)
            best = edits;
    }
    e->out[j] = ter_score(best, ref_lengths, n_refs);
    return BATCH_OK;
}

/* BLEU or chrF of job j through the per-call API's statistics functions. */
static int general_job(Engine *e, Local *l, Py_ssize_t j, const Text *hyp,
                       const Text *const *refs, Py_ssize_t n_refs) {
    const Options *o = &e->o;
    if (bleucli_grow((void **)&l->views, &l->views_cap, n_refs + 1, sizeof(BleucliText)) < 0 ||
        bleucli_grow((void **)&l->row, &l->row_cap, (n_refs + 1) * o->width, sizeof(Py_ssize_t)) < 0)
        return BATCH_NO_MEMORY;
    l->views[0] = hyp->full;
    for (Py_ssize_t k = 0; k < n_refs; k++)
        l->views[1 + k] = refs[k]->full;
    if (o->metric == METRIC_BLEU) {
        if (bleucli_bleu_row(l->w, &l->views[0], l->views + 1, n_refs, o->max_order, e->tok13a,
                             l->row) < 0)
            return BATCH_NO_MEMORY;
        e->out[j] = bleu_score(o, l->row, l->work);
        return BATCH_OK;
    }
    if (bleucli_chrf_rows(l->w, &l->views[0], l->views + 1, n_refs, o->char_order,
                          o->word_order, o->whitespace, l->row) < 0)
        return BATCH_NO_MEMORY;
    double best = -1.0;
    for (Py_ssize_t k = 0; k < n_refs; k++) {
        double f = chrf_score(o, l->row + k * o->width);
        if (f > best)
            best = f;
    }
    e->out[j] = best;
    return BATCH_OK;
}

/* The slots: the jobs' hypotheses, then their references as in refs. */
static inline Py_ssize_t slot_count(const Engine *e) { return e->n_jobs * (1 + e->n_streams); }

static inline PyObject *slot_object(const Engine *e, Py_ssize_t slot) {
    return slot < e->n_jobs ? e->hyps[slot] : e->refs[slot - e->n_jobs];
}

/* Phase 1 for a slot when lowercasing: an object of that job alone that only Python
   lowercases is marked AT_PYTHON (python_items makes it an item). */
static void check_own(Engine *e, Py_ssize_t slot) {
    if (e->at[slot] == (uint32_t)slot && !lowers_in_c(slot_object(e, slot)))
        e->at[slot] = AT_PYTHON;
}

/* The text of slot value `at` for this job: an item's prepared one, or (an object of this
   job alone) prepared now into *own with the thread's scratch; NULL without memory. */
static const Text *job_text(const Engine *e, Local *l, uint32_t at, Text *own) {
    PyObject *obj;
    if (at & AT_ITEM) {
        const Item *it = &e->items[at & ~AT_ITEM];
        if (it->text != NULL)
            return it->text;
        obj = it->obj;
    } else {
        obj = slot_object(e, at);
    }
    memset(own, 0, sizeof(*own));
    own->obj = obj;
    /* (an item is prepared already; an own object C can lowercase, phase 1 checked) */
    if (prepare_text(e, l, &l->scratch, own, e->lower && !(at & AT_ITEM)) < 0 ||
        own->state != TEXT_READY)
        return NULL;
    return own;
}

static int score_job(Engine *e, Local *l, Py_ssize_t j, long long *ter_code) {
    const Text *refs[64];
    Py_ssize_t n_refs = 0;
    arena_reset(&l->scratch);
    const Text *hyp = job_text(e, l, e->at[j], &l->own[0]);
    if (hyp == NULL)
        return BATCH_NO_MEMORY;
    const uint32_t *ref_at = e->at + e->n_jobs + j * e->n_streams;
    for (Py_ssize_t k = 0; k < e->n_streams; k++)
        if (ref_at[k] != AT_NONE &&
            (refs[n_refs++] = job_text(e, l, ref_at[k], &l->own[1 + k])) == NULL)
            return BATCH_NO_MEMORY;
    int packed = 1;
    if (e->o.metric == METRIC_TER)
        return ter_job(e, l, j, hyp, refs, n_refs, ter_code);
    if (e->o.metric == METRIC_BLEU)
        packed = bleu_packed(e, l, j, hyp, refs, n_refs);
    else
        packed = chrf_packed(e, l, j, hyp, refs, n_refs);
    if (packed < 0)
        return BATCH_NO_MEMORY;
    return packed == 0 ? BATCH_OK : general_job(e, l, j, hyp, refs, n_refs);
}

/* ------------------------------------------------------------------------------------ */
/* Threads.                                                                              */

static int local_init(const Engine *e, Local *l) {
    memset(l, 0, sizeof(*l));
    l->sets_on = e->sets;
    l->popcnt = has_popcnt() && !e->plain;
    l->w = bleucli_workspace_new();
    l->ter = bleucli_ter_work_new();
    l->work = PyMem_RawMalloc((size_t)(3 * e->o.max_order + 3) * sizeof(double));
    return l->w != NULL && l->ter != NULL && l->work != NULL ? 0 : -1;
}

typedef struct {
    Engine *e;
    int index;
} Worker;

/* Phase 1 for an item several jobs use (or lowercasing): its Text, prepared, in the arena. */
static int stored_text(const Engine *e, Local *l, Arena *a, Item *it) {
    Text *x = arena_alloc(a, sizeof(Text));
    if (x == NULL)
        return -1;
    memset(x, 0, sizeof(*x));
    x->obj = it->obj;
    it->text = x;
    return prepare_text(e, l, a, x, e->lower);
}

static void *worker(void *arg) {
    Worker *wk = arg;
    Engine *e = wk->e;
    Local l;
    Py_ssize_t none[2] = {0, 0};
    if (local_init(e, &l) < 0) {
        bleucli_fail(&e->s, BATCH_NO_MEMORY, 0, 0, none);
        local_free(&l);
        return NULL;
    }
    Py_ssize_t start, stop;
    while (bleucli_claim(&e->s, 32, &start, &stop)) {
        for (Py_ssize_t i = start; i < stop; i++) {
            long long ter_code = 0;
            int error = BATCH_OK;
            if (e->phase == 1 && i < e->n_items) /* several jobs use it */
                error = stored_text(e, &l, &e->arenas[wk->index], &e->items[i]) < 0
                            ? BATCH_NO_MEMORY : BATCH_OK;
            else if (e->phase == 1) /* lowercasing: then every slot */
                check_own(e, i - e->n_items);
            else if (e->phase == 2)
                error = score_job(e, &l, i, &ter_code);
            if (error != BATCH_OK) {
                bleucli_fail(&e->s, error, ter_code, i, l.words);
                break;
            }
        }
    }
    local_free(&l);
    return NULL;
}

/* Run a phase over n items on e->threads threads (the calling thread is one of them). */
static void run_phase(Engine *e, int phase, Py_ssize_t n) {
    e->phase = phase;
    e->s.next = 0;
    e->s.n_items = n;
    Worker workers[256];
    int count = e->threads < 256 ? e->threads : 256;
    for (int k = 0; k < count; k++)
        workers[k] = (Worker){e, k};
#if HAVE_THREADS
    pthread_t ids[256];
    int started = 0;
    for (int k = 1; k < count && k < n; k++) {
        if (pthread_create(&ids[started], NULL, worker, &workers[k]) != 0)
            break; /* fewer threads: the same results */
        started++;
    }
    worker(&workers[0]);
    for (int k = 0; k < started; k++)
        pthread_join(ids[k], NULL);
#else
    worker(&workers[0]);
#endif
}

/* ------------------------------------------------------------------------------------ */
/* The entry point.                                                                      */

/* Objects seen lately, by the hash of their address: a text repeated within a few
   thousand items (a reference for each completion of a prompt, a test set's reference for
   each system) is one text. A table of every object would cost a cache miss an item on
   large calls; an object seen again after it left this cache is a text of its own (the
   same scores, its words tokenised once more). */
#define RECENT_BITS 14
typedef struct {
    PyObject *obj;
    uint32_t slot;          /* where it was seen first */
    uint32_t item;          /* its item, or AT_NONE while that slot is its only one */
} Recent;

static uint32_t new_item(Engine *e, PyObject *obj) {
    e->items[e->n_items] = (Item){obj, NULL};
    return (uint32_t)e->n_items++;
}

/* e->at and e->items: an object repeated while still recent becomes an item (its first
   slot too). The item array is allocated for the worst case but only written (faulted
   in) as far as it is used. */
static int distinct_texts(Engine *e) {
    Py_ssize_t slots = slot_count(e);
    Recent *recent = PyMem_RawCalloc((size_t)1 << RECENT_BITS, sizeof(Recent));
    e->items = PyMem_RawMalloc(((size_t)slots + 1) * sizeof(Item));
    e->at = PyMem_RawMalloc(((size_t)slots + 1) * sizeof(uint32_t));
    if (recent == NULL || e->items == NULL || e->at == NULL) {
        PyMem_RawFree(recent);
        return -1;
    }
    const uint64_t mask = ((uint64_t)1 << RECENT_BITS) - 1;
    for (Py_ssize_t i = 0; i < slots; i++) {
        PyObject *obj = slot_object(e, i);
        if (obj == NULL) {
            e->at[i] = AT_NONE;
            continue;
        }
        Recent *r = &recent[spread((uint64_t)(uintptr_t)obj) & mask];
        if (r->obj != obj) {
            *r = (Recent){obj, (uint32_t)i, AT_NONE};
            e->at[i] = (uint32_t)i;
            continue;
        }
        if (r->item == AT_NONE) { /* seen again: its first slot takes the item too */
            r->item = new_item(e, obj);
            e->at[r->slot] = AT_ITEM | r->item;
        }
        e->at[i] = AT_ITEM | r->item;
    }
    PyMem_RawFree(recent);
    return 0;
}

/* The own objects phase 1 found only Python lowercases, as items whose Text waits for it
   (lower_in_python). 0, or -1 without memory. */
static int python_items(Engine *e) {
    for (Py_ssize_t slot = 0; slot < slot_count(e); slot++) {
        if (e->at[slot] != AT_PYTHON)
            continue;
        Text *x = arena_alloc(&e->arenas[0], sizeof(Text));
        if (x == NULL)
            return -1;
        memset(x, 0, sizeof(*x));
        x->obj = slot_object(e, slot);
        x->state = TEXT_PYTHON_LOWER;
        uint32_t k = new_item(e, x->obj);
        e->items[k].text = x;
        e->at[slot] = AT_ITEM | k;
    }
    return 0;
}

/* The texts only Python lowercases (capital sigma, U+0130): str.lower() with the GIL,
   then prepared on this thread. 0, or -1 with the error set. */
static int lower_in_python(Engine *e, PyObject **kept, Py_ssize_t *n_kept) {
    Local l;
    if (local_init(e, &l) < 0) {
        local_free(&l);
        PyErr_NoMemory();
        return -1;
    }
    int result = 0;
    for (Py_ssize_t i = 0; i < e->n_items && result == 0; i++) {
        Text *x = e->items[i].text;
        if (x == NULL || x->state != TEXT_PYTHON_LOWER)
            continue;
        PyObject *low = PyObject_CallMethod(x->obj, "lower", NULL);
        if (low == NULL || !PyUnicode_Check(low)) {
            Py_XDECREF(low);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "batch: str.lower() gave no str");
            result = -1;
            break;
        }
        kept[(*n_kept)++] = low; /* owned until the call ends; x->obj stays the original */
        PyObject *original = x->obj;
        x->obj = low;
        if (prepare_text(e, &l, &e->arenas[0], x, 0) < 0) {
            PyErr_NoMemory();
            result = -1;
        }
        x->obj = original;
    }
    local_free(&l);
    return result;
}

/* An owned str equal to `before` (the previous job's in the same place) but another
   object becomes `before`: a reference repeated for each completion of a prompt often
   arrives as equal strings rather than one object, and one object is prepared once. Only
   a string of the same length is compared (its header is at hand; lengths are below
   2**32 - 2, checked before). */
static void share_equal(PyObject **obj, PyObject *before) {
    PyObject *x = *obj;
    if (x == NULL || before == NULL || x == before ||
        PyUnicode_GET_LENGTH(x) != PyUnicode_GET_LENGTH(before) ||
        !same_chars(PyUnicode_DATA(x), PyUnicode_KIND(x), PyUnicode_DATA(before),
                    PyUnicode_KIND(before), (uint32_t)PyUnicode_GET_LENGTH(x)))
        return;
    Py_INCREF(before);
    *obj = before;
    Py_DECREF(x); /* never the last reference: the caller's list holds it */
}

PyObject *bleucli_batch_aligned(PyObject *self, PyObject *args) {
    int metric, flags, threads;
    PyObject *hyp_list, *stream_list, *options;
    Py_buffer out;
    (void)self;
    if (!PyArg_ParseTuple(args, "iO!O!O!iiw*:batch_aligned", &metric, &PyList_Type, &hyp_list,
                          &PyList_Type, &stream_list, &PyTuple_Type, &options, &flags,
                          &threads, &out))
        return NULL;
    Engine e;
    memset(&e, 0, sizeof(e));
    PyObject **hyps = NULL, **refs = NULL, **kept = NULL;
    Py_ssize_t n = 0, n_streams = 0, n_kept = 0;
    PyObject *result = NULL;
    /* the options first: parsing them can run a caller's __index__ or __bool__, which may
       change the lists; their sizes are read after the last Python code of the call */
    if (bleucli_batch_options(metric, options, flags & BATCH_TOK13A, &e.o) < 0)
        goto done;
    n = PyList_GET_SIZE(hyp_list);
    n_streams = PyList_GET_SIZE(stream_list);
    if (bleucli_out_buffer(&out, n) < 0)
        goto done;
    if (threads < 1 || (flags & ~(BATCH_TOK13A | BATCH_LOWER | BATCH_NO_SETS | BATCH_GENERAL | BATCH_PLAIN))) {
        PyErr_SetString(PyExc_ValueError, "batch: threads must be at least 1, flags 0..31");
        goto done;
    }
    if (n_streams > 64) {
        PyErr_Format(PyExc_ValueError, "batch: %zd reference streams; at most 64", n_streams);
        goto done;
    }
    if (n > (Py_ssize_t)(AT_ITEM - 2) / (1 + n_streams)) { /* slots numbered in 31 bits */
        PyErr_SetString(PyExc_ValueError, "batch: more than 2**31 - 2 texts in one call");
        goto done;
    }
    for (Py_ssize_t k = 0; k < n_streams; k++) {
        PyObject *stream = PyList_GET_ITEM(stream_list, k);
        if (!PyList_Check(stream) || PyList_GET_SIZE(stream) != n) {
            PyErr_Format(PyExc_ValueError, "batch: stream %zd is not a list of %zd", k, n);
            goto done;
        }
    }
    /* own every string before allocating a Python object (see _native.c) */
    hyps = PyMem_RawCalloc((size_t)(n + 1), sizeof(PyObject *));
    refs = PyMem_RawCalloc((size_t)(n * n_streams + 1), sizeof(PyObject *));
    if (hyps == NULL || refs == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    /* one pass: each object's header is read once (the strings are scattered over far more
       memory than the caches hold; the next jobs' are fetched ahead). A job is owned before
       it is checked, and an error ends the reading. */
    for (Py_ssize_t j = 0; j < n; j++) {
        if (j + PREFETCH_AHEAD < n) {
            bleucli_prefetch(PyList_GET_ITEM(hyp_list, j + PREFETCH_AHEAD));
            for (Py_ssize_t k = 0; k < n_streams; k++)
                bleucli_prefetch(PyList_GET_ITEM(PyList_GET_ITEM(stream_list, k), j + PREFETCH_AHEAD));
        }
        hyps[j] = PyList_GET_ITEM(hyp_list, j);
        Py_INCREF(hyps[j]);
        for (Py_ssize_t k = 0; k < n_streams; k++) {
            PyObject *ref = PyList_GET_ITEM(PyList_GET_ITEM(stream_list, k), j);
            if (ref != Py_None) {
                Py_INCREF(ref);
                refs[j * n_streams + k] = ref;
            }
        }
        int present = 0;
        if (!PyUnicode_Check(hyps[j])) {
            PyErr_Format(PyExc_TypeError, "batch: hypothesis %zd is not a str", j);
            goto done;
        }
        if ((size_t)PyUnicode_GET_LENGTH(hyps[j]) >= UINT32_MAX - 1) {
            PyErr_SetString(PyExc_ValueError, "batch: a text of 2**32 - 2 characters or more");
            goto done;
        }
        for (Py_ssize_t k = 0; k < n_streams; k++) {
            PyObject *ref = refs[j * n_streams + k];
            if (ref != NULL && !PyUnicode_Check(ref)) {
                PyErr_Format(PyExc_TypeError, "batch: reference %zd of stream %zd is not a str",
                             j, k);
                goto done;
            }
            if (ref != NULL && (size_t)PyUnicode_GET_LENGTH(ref) >= UINT32_MAX - 1) {
                PyErr_SetString(PyExc_ValueError, "batch: a text of 2**32 - 2 characters or more");
                goto done;
            }
            present += ref != NULL;
        }
        if (present == 0) {
            PyErr_Format(PyExc_ValueError, "batch: job %zd has no reference", j);
            goto done;
        }
        if (j > 0) {
            share_equal(&hyps[j], hyps[j - 1]);
            for (Py_ssize_t k = 0; k < n_streams; k++)
                share_equal(&refs[j * n_streams + k], refs[(j - 1) * n_streams + k]);
        }
    }
    e.out = out.buf;
    e.n_jobs = n;
    e.n_streams = n_streams;
    e.tok13a = (flags & BATCH_TOK13A) != 0;
    e.lower = (flags & BATCH_LOWER) != 0;
    if (e.lower)
        fill_lower_bmp();
    if (e.tok13a)
        bleucli_fill_class_table();
    e.threads = threads < 256 ? threads : 256; /* at most 256 run: arenas only for those */
    e.sets = (flags & BATCH_NO_SETS) == 0;
    e.general = (flags & BATCH_GENERAL) != 0;
    e.plain = (flags & BATCH_PLAIN) != 0;
    if (n == 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    e.arenas = PyMem_RawCalloc((size_t)e.threads, sizeof(Arena));
    e.hyps = hyps;
    e.refs = refs;
    if (e.arenas == NULL || distinct_texts(&e) < 0) {
        PyErr_NoMemory();
        goto done;
    }
#if HAVE_THREADS
    pthread_mutex_init(&e.s.lock, NULL);
#endif
    Py_ssize_t units = e.n_items + (e.lower ? slot_count(&e) : 0); /* items, then slots */
    if (units > 0) { /* else every text is its one job's to prepare */
        Py_BEGIN_ALLOW_THREADS
        run_phase(&e, 1, units);
        Py_END_ALLOW_THREADS
    }
    if (e.s.error == BATCH_OK && e.lower) {
        if (python_items(&e) < 0) {
            PyErr_NoMemory();
            goto unlock;
        }
        Py_ssize_t pending = 0;
        for (Py_ssize_t i = 0; i < e.n_items; i++)
            pending += e.items[i].text != NULL && e.items[i].text->state == TEXT_PYTHON_LOWER;
        if (pending > 0) {
            kept = PyMem_RawCalloc((size_t)pending, sizeof(PyObject *));
            if (kept == NULL) {
                PyErr_NoMemory();
                goto unlock;
            }
            if (lower_in_python(&e, kept, &n_kept) < 0)
                goto unlock;
        }
    }
    if (e.s.error == BATCH_OK) {
        Py_BEGIN_ALLOW_THREADS
        run_phase(&e, 2, n);
        Py_END_ALLOW_THREADS
    }
    result = bleucli_batch_result(&e.s);
unlock:
#if HAVE_THREADS
    pthread_mutex_destroy(&e.s.lock);
#endif
done:
    if (e.arenas != NULL)
        for (int k = 0; k < e.threads; k++)
            arena_free(&e.arenas[k]);
    PyMem_RawFree(e.arenas);
    PyMem_RawFree(e.items);
    PyMem_RawFree(e.at);
    bleucli_release_objects(kept, n_kept);
    bleucli_release_objects(hyps, n);
    bleucli_release_objects(refs, n * n_streams);
    PyBuffer_Release(&out);
    return result;
}
