/*
 * bleucli._native: the optional compiled core for the hot loops.
 *
 * The pure-Python engine (bleucli.tokenizers.mteval, bleucli.metrics.bleu) is the
 * specification; every function here returns exactly what it returns, and the test suite
 * checks that on generated and adversarial input (bleucli/native.py chooses the engine).
 *
 * - tokenize_13a(line), tokenize_13a_many(lines): mteval-v13a tokenisation as SacreBLEU
 *   applies it: <skipped>, "-\n" and "\n" handling, the four HTML unescapes in order, then
 *   the four regular expressions of the tokeniser, each applied as re.sub does (left-most,
 *   non-overlapping matches of a fixed-length pattern), then whitespace normalisation with
 *   str.split()'s notion of whitespace; in the string's own width.
 * - chrf_stats(hyps, refs, char_order, word_order, whitespace): per sentence and reference,
 *   [hyp, ref, match] n-gram counts per character and word order (chrF, chrF++).
 * - sum_int_rows(rows): column sums of integer statistics.
 * - bleu_stats(hyps, refs, max_order): per sentence [hyp_len, closest_ref_len, correct_1..n,
 *   total_1..n] for tokenised hypotheses and their tokenised references (str.split()
 *   tokens; n-gram matches clipped by the maximum count in any one reference).
 * - ter_edits(hyp_ids, ref_ids): TER's edits including shifts (in _native_ter.c).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <limits.h>
#include <string.h>

/* ------------------------------------------------------------------------------------ */
/* A growable UCS4 buffer.                                                              */

typedef struct {
    Py_UCS4 *data;
    Py_ssize_t len;
    Py_ssize_t cap;
} Buffer;

static int buf_reserve(Buffer *b, Py_ssize_t extra) {
    if (b->len + extra <= b->cap)
        return 0;
    Py_ssize_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra) {
        if (cap > PY_SSIZE_T_MAX / 2 / (Py_ssize_t)sizeof(Py_UCS4)) {
            PyErr_NoMemory();
            return -1;
        }
        cap *= 2;
    }
    Py_UCS4 *data = PyMem_Realloc(b->data, (size_t)cap * sizeof(Py_UCS4));
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

static void buf_free(Buffer *b) {
    PyMem_Free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

static inline int is_digit(Py_UCS4 c) { return c >= '0' && c <= '9'; }

/* Rule 1's class: [\{-\~\[-\` -\&\(-\+\:-\@\/] */
static inline int is_split_symbol(Py_UCS4 c) {
    return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
           (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

static inline int is_period_comma(Py_UCS4 c) { return c == '.' || c == ','; }

/* The zh tokeniser's character ranges, as SacreBLEU compares them (bleucli/tokenizers/zh.py
   explains the two mis-escaped ranges, U+2001..U+2A6D and U+2F81..U+2FA1). */
static const Py_UCS4 ZH_RANGES[][2] = {
    {0x3400, 0x4db5}, {0x4e00, 0x9fa5}, {0x9fa6, 0x9fbb}, {0xf900, 0xfa2d}, {0xfa30, 0xfa6a},
    {0xfa70, 0xfad9}, {0x2001, 0x2a6d}, {0x2f81, 0x2fa1}, {0xff00, 0xffef}, {0x2e80, 0x2eff},
    {0x3000, 0x303f}, {0x31c0, 0x31ef}, {0x2f00, 0x2fdf}, {0x2ff0, 0x2fff}, {0x3100, 0x312f},
    {0x31a0, 0x31bf}, {0xfe10, 0xfe1f}, {0xfe30, 0xfe4f}, {0x2600, 0x26ff}, {0x2700, 0x27bf},
    {0x3200, 0x32ff}, {0x3300, 0x33ff},
};

static inline int is_zh_char(Py_UCS4 c) {
    if (c < 0x2001 || c > 0xffef)
        return 0;
    for (size_t k = 0; k < sizeof ZH_RANGES / sizeof ZH_RANGES[0]; k++)
        if (ZH_RANGES[k][0] <= c && c <= ZH_RANGES[k][1])
            return 1;
    return 0;
}

static int load(PyObject *text, Buffer *b) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    b->len = 0;
    if (buf_reserve(b, n + 2) < 0)
        return -1;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    for (Py_ssize_t i = 0; i < n; i++)
        b->data[i] = PyUnicode_READ(kind, data, i);
    b->len = n;
    return 0;
}


/* ------------------------------------------------------------------------------------ */
/* What a call reads, owned by the call.                                                 */
/*                                                                                       */
/* A Python object a call allocates can start a garbage collection, and a collection can */
/* run Python code (gc.callbacks, __del__, another thread taking the GIL) that empties   */
/* the caller's lists; even PyList_AsTuple copies from a list after allocating. So the   */
/* items are taken, with their references, into C arrays first (PyMem_* allocations      */
/* never collect), before the call allocates any Python object.                          */

typedef struct {
    PyObject **items;
    Py_ssize_t n;
} Owned;

/* Own the items of `list`; appends to `out` (grown with PyMem_Realloc). */
static int own_items(PyObject *list, Owned *out) {
    Py_ssize_t n = PyList_GET_SIZE(list);
    if (n > (PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(PyObject *)) - out->n) {
        PyErr_NoMemory();
        return -1;
    }
    PyObject **grown = PyMem_Realloc(out->items, (size_t)(out->n + n + 1) * sizeof(PyObject *));
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    out->items = grown;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(list, i);
        Py_INCREF(item);
        out->items[out->n++] = item;
    }
    return 0;
}

static void release(Owned *owned) {
    for (Py_ssize_t i = 0; i < owned->n; i++)
        Py_DECREF(owned->items[i]);
    PyMem_Free(owned->items);
    owned->items = NULL;
    owned->n = 0;
}

/* The hypotheses and, per hypothesis, its references (a list of str each), owned: `hyps`
   holds the hypotheses, `refs` every reference in order, `ref_at[i]..ref_at[i + 1]` those
   of hypothesis i. Type errors are raised before anything is computed. */
typedef struct {
    Owned hyps, refs;
    Py_ssize_t *ref_at;
} Corpus;

static void corpus_release(Corpus *c) {
    release(&c->hyps);
    release(&c->refs);
    PyMem_Free(c->ref_at);
    c->ref_at = NULL;
}

static int own_corpus(PyObject *hyp_list, PyObject *ref_list, Corpus *c, const char *function) {
    memset(c, 0, sizeof(*c));
    Py_ssize_t n = PyList_GET_SIZE(hyp_list);
    if (PyList_GET_SIZE(ref_list) != n) {
        PyErr_Format(PyExc_ValueError, "%s(): one reference list per hypothesis", function);
        return -1;
    }
    c->ref_at = PyMem_Malloc((size_t)(n + 1) * sizeof(Py_ssize_t));
    if (c->ref_at == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    c->ref_at[0] = 0;
    /* references first: no allocation of a Python object happens until all are owned */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *sentence_refs = PyList_GET_ITEM(ref_list, i);
        if (!PyList_Check(sentence_refs)) {
            PyErr_Format(PyExc_TypeError, "%s(): references must be lists of str", function);
            goto fail;
        }
        if (own_items(sentence_refs, &c->refs) < 0)
            goto fail;
        c->ref_at[i + 1] = c->refs.n;
    }
    if (own_items(hyp_list, &c->hyps) < 0)
        goto fail;
    for (Py_ssize_t i = 0; i < c->hyps.n + c->refs.n; i++) {
        PyObject *text = i < c->hyps.n ? c->hyps.items[i] : c->refs.items[i - c->hyps.n];
        if (!PyUnicode_Check(text)) {
            PyErr_Format(PyExc_TypeError, "%s() takes strings", function);
            goto fail;
        }
    }
    return 0;
fail:
    corpus_release(c);
    return -1;
}


/* ------------------------------------------------------------------------------------ */
/* 13a in the string's own width (one, two or four bytes a character): no widening.      */

#define DEFINE_NARROW_13A(NAME, T, KIND)                                                  \
    static int NAME##_reserve(T **data, Py_ssize_t *cap, Py_ssize_t need) {               \
        if (need <= *cap)                                                                  \
            return 0;                                                                      \
        Py_ssize_t grown_cap = *cap ? *cap : 256;                                          \
        while (grown_cap < need) {                                                         \
            if (grown_cap > PY_SSIZE_T_MAX / 2 / (Py_ssize_t)sizeof(T)) {                  \
                PyErr_NoMemory();                                                          \
                return -1;                                                                 \
            }                                                                              \
            grown_cap *= 2;                                                                \
        }                                                                                  \
        T *grown = PyMem_Realloc(*data, (size_t)grown_cap * sizeof(T));                    \
        if (grown == NULL) {                                                               \
            PyErr_NoMemory();                                                              \
            return -1;                                                                     \
        }                                                                                  \
        *data = grown;                                                                     \
        *cap = grown_cap;                                                                  \
        return 0;                                                                          \
    }                                                                                      \
                                                                                           \
    /* str.replace for an ASCII pattern and a replacement no longer than it */             \
    static Py_ssize_t NAME##_replace(const T *in, Py_ssize_t len, T *out, const char *pat, \
                                     const char *repl) {                                   \
        Py_ssize_t plen = (Py_ssize_t)strlen(pat), rlen = (Py_ssize_t)strlen(repl), n = 0; \
        for (Py_ssize_t i = 0; i < len;) {                                                 \
            int match = in[i] == (T)(unsigned char)pat[0] && i + plen <= len;              \
            for (Py_ssize_t k = 1; match && k < plen; k++)                                 \
                match = in[i + k] == (T)(unsigned char)pat[k];                             \
            if (match) {                                                                   \
                for (Py_ssize_t k = 0; k < rlen; k++)                                      \
                    out[n++] = (T)(unsigned char)repl[k];                                  \
                i += plen;                                                                 \
            } else {                                                                       \
                out[n++] = in[i++];                                                        \
            }                                                                              \
        }                                                                                  \
        return n;                                                                          \
    }                                                                                      \
                                                                                           \
    /* Rules 1-4 and the whitespace normalisation in one pass, valid when no two of '.'  \
       and ',' are adjacent (the sequential substitutions then agree with it): a symbol of  \
       rule 1 is a token; '.'/',' is one unless both neighbours are digits (the padding     \
       spaces are not); '-' is one after a digit. Neighbours are those of the input: rule 1 \
       never separates a digit from its neighbour. */                                      \
    /* zh: CJK characters are tokens too, and the line is not padded, so a '.'/',' at an \
       end is split only by the neighbour it has (rule 2 needs one before, rule 3 after) */ \
    static PyObject *NAME##_fused(const T *in, Py_ssize_t len, T *out, int zh) {           \
        Py_ssize_t m = 0;                                                                  \
        int pending = 0;                                                                   \
        for (Py_ssize_t i = 0; i < len; i++) {                                             \
            T c = in[i];                                                                   \
            int alone;                                                                     \
            if (Py_UNICODE_ISSPACE(c)) {                                                   \
                pending = m > 0;                                                           \
                continue;                                                                  \
            }                                                                              \
            if (c >= 128)                                                                  \
                alone = zh && is_zh_char((Py_UCS4)c);                                      \
            else if (is_period_comma(c) && zh)                                             \
                alone = (i > 0 && !is_digit(in[i - 1])) ||                                 \
                        (i + 1 < len && !is_digit(in[i + 1]));                             \
            else if (is_period_comma(c))                                                   \
                alone = !(i > 0 && is_digit(in[i - 1]) && i + 1 < len &&                   \
                          is_digit(in[i + 1]));                                            \
            else if (c == '-')                                                             \
                alone = i > 0 && is_digit(in[i - 1]);                                      \
            else                                                                           \
                alone = is_split_symbol(c);                                                \
            if (alone) {                                                                   \
                if (m > 0)                                                                 \
                    out[m++] = ' ';                                                        \
                out[m++] = c;                                                              \
                pending = 1;                                                               \
                continue;                                                                  \
            }                                                                              \
            if (pending) {                                                                 \
                out[m++] = ' ';                                                            \
                pending = 0;                                                               \
            }                                                                              \
            out[m++] = c;                                                                  \
        }                                                                                  \
        return PyUnicode_FromKindAndData(KIND, out, m);                                    \
    }                                                                                      \
                                                                                           \
    /* bufs/caps: two scratch buffers the caller owns (reused across a list's lines) */   \
    static PyObject *NAME##_in(PyObject *text, T **bufs, Py_ssize_t *caps) {                \
        Py_ssize_t n = PyUnicode_GET_LENGTH(text);                                         \
        if (n < 0) /* never: tells the compiler memcpy's size is not negative */           \
            n = 0;                                                                         \
        const T *src = (const T *)PyUnicode_DATA(text);                                    \
        PyObject *result = NULL;                                                           \
        int cur = 0;                                                                       \
        Py_ssize_t len = n, m, i;                                                          \
        if (NAME##_reserve(&bufs[0], &caps[0], n + 2) < 0 ||                              \
            NAME##_reserve(&bufs[1], &caps[1], n + 2) < 0)                                 \
            goto done;                                                                     \
        int has_lt = 0, has_nl = 0, has_amp = 0, adjacent = 0;                             \
        for (i = 0; i < n; i++) {                                                          \
            T c = src[i];                                                                  \
            has_lt |= c == '<';                                                            \
            has_nl |= c == '\n';                                                           \
            has_amp |= c == '&';                                                           \
            adjacent |= i + 1 < n && is_period_comma(c) && is_period_comma(src[i + 1]);    \
        }                                                                                  \
        if (!has_lt && !has_nl && !has_amp && !adjacent) {                                 \
            /* the common case: every rule in one pass over the line itself */             \
            if (NAME##_reserve(&bufs[1], &caps[1], 3 * n + 3) < 0)                         \
                goto done;                                                                 \
            result = NAME##_fused(src, n, bufs[1], 0);                                     \
            goto done;                                                                     \
        }                                                                                  \
        memcpy(bufs[0], src, (size_t)n * sizeof(T));                                       \
        has_amp = 0;                                                                       \
        if (has_lt || has_nl) {                                                            \
            len = NAME##_replace(bufs[cur], len, bufs[1 - cur], "<skipped>", "");          \
            cur = 1 - cur;                                                                 \
            len = NAME##_replace(bufs[cur], len, bufs[1 - cur], "-\n", "");                \
            cur = 1 - cur;                                                                 \
            len = NAME##_replace(bufs[cur], len, bufs[1 - cur], "\n", " ");                \
            cur = 1 - cur;                                                                 \
        }                                                                                  \
        for (i = 0; i < len; i++)                                                          \
            has_amp |= bufs[cur][i] == '&';                                                \
        if (has_amp) {                                                                     \
            static const char *const escapes[4][2] = {                                     \
                {"&quot;", "\""}, {"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}};           \
            for (int k = 0; k < 4; k++) {                                                  \
                len = NAME##_replace(bufs[cur], len, bufs[1 - cur], escapes[k][0],         \
                                     escapes[k][1]);                                       \
                cur = 1 - cur;                                                             \
            }                                                                              \
        }                                                                                  \
        /* pad, then rule 1 (at most triples the text) */                                  \
        if (NAME##_reserve(&bufs[1 - cur], &caps[1 - cur], 3 * (len + 2) + 1) < 0)        \
            goto done;                                                                     \
        {                                                                                  \
            const T *in = bufs[cur];                                                       \
            T *out = bufs[1 - cur];                                                        \
            m = 0;                                                                         \
            for (i = -1; i <= len; i++) {                                                  \
                T c = (i < 0 || i == len) ? (T)' ' : in[i];                                \
                if (c < 128 && is_split_symbol(c)) {                                       \
                    out[m++] = ' ';                                                        \
                    out[m++] = c;                                                          \
                    out[m++] = ' ';                                                        \
                } else {                                                                   \
                    out[m++] = c;                                                          \
                }                                                                          \
            }                                                                              \
            len = m;                                                                       \
            cur = 1 - cur;                                                                 \
        }                                                                                  \
        /* rules 2-4 (each at most doubles the text) */                                    \
        for (int rule = 2; rule <= 4; rule++) {                                            \
            if (NAME##_reserve(&bufs[1 - cur], &caps[1 - cur], 2 * len + 1) < 0)           \
                goto done;                                                                 \
            const T *in = bufs[cur];                                                       \
            T *out = bufs[1 - cur];                                                        \
            m = 0;                                                                         \
            for (i = 0; i < len;) {                                                        \
                T c = in[i];                                                               \
                int match = i + 1 < len &&                                                 \
                            (rule == 2 ? (!is_digit(c) && is_period_comma(in[i + 1]))      \
                             : rule == 3 ? (is_period_comma(c) && !is_digit(in[i + 1]))    \
                                         : (is_digit(c) && in[i + 1] == '-'));             \
                if (!match) {                                                              \
                    out[m++] = c;                                                          \
                    i++;                                                                   \
                } else if (rule == 3) {                                                    \
                    out[m++] = ' ';                                                        \
                    out[m++] = c;                                                          \
                    out[m++] = ' ';                                                        \
                    out[m++] = in[i + 1];                                                  \
                    i += 2;                                                                \
                } else {                                                                   \
                    out[m++] = c;                                                          \
                    out[m++] = ' ';                                                        \
                    out[m++] = in[i + 1];                                                  \
                    out[m++] = ' ';                                                        \
                    i += 2;                                                                \
                }                                                                          \
            }                                                                              \
            len = m;                                                                       \
            cur = 1 - cur;                                                                 \
        }                                                                                  \
        /* ' '.join(split()); FromKindAndData picks the canonical (narrowest) kind */      \
        {                                                                                  \
            const T *in = bufs[cur];                                                       \
            T *out = bufs[1 - cur];                                                        \
            int pending = 0;                                                               \
            m = 0;                                                                         \
            for (i = 0; i < len; i++) {                                                    \
                T c = in[i];                                                               \
                if (Py_UNICODE_ISSPACE(c)) {                                               \
                    pending = m > 0;                                                       \
                } else {                                                                   \
                    if (pending) {                                                         \
                        out[m++] = ' ';                                                    \
                        pending = 0;                                                       \
                    }                                                                      \
                    out[m++] = c;                                                          \
                }                                                                          \
            }                                                                              \
            result = PyUnicode_FromKindAndData(KIND, out, m);                              \
        }                                                                                  \
    done:                                                                                  \
        return result;                                                                     \
    }                                                                                      \
                                                                                           \
    /* zh in one pass, or None when two of '.' and ',' are adjacent (Python then runs    \
       the sequential rules) */                                                             \
    static PyObject *NAME##_zh(PyObject *text) {                                           \
        Py_ssize_t n = PyUnicode_GET_LENGTH(text), start = 0;                              \
        const T *src = (const T *)PyUnicode_DATA(text);                                    \
        while (start < n && Py_UNICODE_ISSPACE(src[start]))                                \
            start++;                                                                       \
        while (n > start && Py_UNICODE_ISSPACE(src[n - 1]))                                \
            n--;                                                                           \
        for (Py_ssize_t i = start; i + 1 < n; i++)                                         \
            if (is_period_comma(src[i]) && is_period_comma(src[i + 1]))                    \
                Py_RETURN_NONE;                                                            \
        T *out = NULL;                                                                     \
        Py_ssize_t cap = 0;                                                                \
        if (NAME##_reserve(&out, &cap, 3 * (n - start) + 3) < 0)                           \
            return NULL;                                                                   \
        PyObject *result = NAME##_fused(src + start, n - start, out, 1);                   \
        PyMem_Free(out);                                                                   \
        return result;                                                                     \
    }                                                                                      \
                                                                                           \
    static PyObject *NAME(PyObject *text) {                                                \
        T *bufs[2] = {NULL, NULL};                                                         \
        Py_ssize_t caps[2] = {0, 0};                                                       \
        PyObject *result = NAME##_in(text, bufs, caps);                                    \
        PyMem_Free(bufs[0]);                                                               \
        PyMem_Free(bufs[1]);                                                               \
        return result;                                                                     \
    }

DEFINE_NARROW_13A(tokenize_13a_ucs1, Py_UCS1, PyUnicode_1BYTE_KIND)
DEFINE_NARROW_13A(tokenize_13a_ucs2, Py_UCS2, PyUnicode_2BYTE_KIND)
DEFINE_NARROW_13A(tokenize_13a_ucs4, Py_UCS4, PyUnicode_4BYTE_KIND)

typedef PyObject *(*ByWidth)(PyObject *);

/* Call the version of a tokeniser for the string's width (one, two or four bytes). */
static PyObject *by_width(PyObject *arg, const char *name, ByWidth ucs1, ByWidth ucs2,
                          ByWidth ucs4) {
    if (!PyUnicode_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "%s() takes a str", name);
        return NULL;
    }
    switch (PyUnicode_KIND(arg)) {
    case PyUnicode_1BYTE_KIND:
        return ucs1(arg);
    case PyUnicode_2BYTE_KIND:
        return ucs2(arg);
    default:
        return ucs4(arg);
    }
}

static PyObject *tokenize_13a(PyObject *self, PyObject *arg) {
    (void)self;
    return by_width(arg, "tokenize_13a", tokenize_13a_ucs1, tokenize_13a_ucs2,
                    tokenize_13a_ucs4);
}

/* ------------------------------------------------------------------------------------ */
/* BLEU statistics.                                                                      */
/*                                                                                       */
/* Memory is linear in the input whatever the n-gram order: the n-grams of one order are */
/* counted at a time, in a table whose entries point at their first token (no copy of    */
/* the ids), with one rolling hash per position carried from order to order. Every      */
/* Python object the work reads is owned by the call (tuples copied at entry), so Python */
/* code that a garbage collection runs meanwhile cannot change or free it.               */

typedef struct {
    Py_ssize_t start, len; /* a token: a slice of the sentence's UCS4 buffer */
    Py_ssize_t buffer;     /* which buffer (0: hypothesis, k: reference k) */
} Token;

typedef struct {
    /* token interning */
    uint64_t *tok_slots;   /* generation << 32 | (id + 1); another generation = empty */
    uint32_t tok_gen;
    Py_ssize_t tok_cap;    /* active size (a power of two) */
    Py_ssize_t tok_alloc;  /* allocated size */
    Token *tokens;         /* by id */
    uint64_t *tok_hash;
    Py_ssize_t n_tokens, tokens_cap;
    /* n-gram table of one order: counts per reference and for the hypothesis */
    uint64_t *gram_slots;   /* generation << 32 | (entry + 1) */
    uint32_t gram_gen;
    Py_ssize_t gram_cap;    /* active size (a power of two) */
    Py_ssize_t gram_alloc;  /* allocated size */
    const Py_ssize_t **gram_start; /* the n-gram's first token id */
    uint64_t *gram_hash;
    Py_ssize_t *ref_max, *ref_cur, *hyp_count;
    Py_ssize_t *ref_stamp;  /* which reference last touched ref_cur */
    Py_ssize_t n_grams, grams_cap;
    Buffer *buffers;
    Py_ssize_t n_buffers;
    Py_ssize_t *scratch;    /* token ids of every text */
    Py_ssize_t scratch_cap;
    uint64_t *hashes;       /* per token position: the hash of the n-gram starting there */
    Py_ssize_t hashes_cap;
    Py_ssize_t *ref_len, *ref_at; /* per reference: token count and first id's offset */
    Py_ssize_t refs_cap;
} Workspace;

static void ws_free(Workspace *w) {
    PyMem_Free(w->tok_slots);
    PyMem_Free(w->tokens);
    PyMem_Free(w->tok_hash);
    PyMem_Free(w->gram_slots);
    PyMem_Free((void *)w->gram_start);
    PyMem_Free(w->gram_hash);
    PyMem_Free(w->ref_max);
    PyMem_Free(w->ref_cur);
    PyMem_Free(w->hyp_count);
    PyMem_Free(w->ref_stamp);
    PyMem_Free(w->scratch);
    PyMem_Free(w->hashes);
    PyMem_Free(w->ref_len);
    PyMem_Free(w->ref_at);
    for (Py_ssize_t i = 0; i < w->n_buffers; i++)
        buf_free(&w->buffers[i]);
    PyMem_Free(w->buffers);
    memset(w, 0, sizeof(*w));
}

static Py_ssize_t pow2_at_least(Py_ssize_t n) {
    Py_ssize_t cap = 16;
    while (cap < n)
        cap *= 2;
    return cap;
}

#define GROW(ptr, type, count)                                                   \
    do {                                                                         \
        if ((size_t)(count) > PY_SSIZE_T_MAX / sizeof(type)) {                   \
            PyErr_NoMemory();                                                    \
            return -1;                                                           \
        }                                                                        \
        type *grown_ = PyMem_Realloc((void *)(ptr), (size_t)(count) * sizeof(type)); \
        if (grown_ == NULL) {                                                    \
            PyErr_NoMemory();                                                    \
            return -1;                                                           \
        }                                                                        \
        (ptr) = grown_;                                                          \
    } while (0)

/* An empty n-gram table for `n_grams` n-grams at most (cleared by generation, not memset). */
static int ws_reset_grams(Workspace *w, Py_ssize_t n_grams) {
    Py_ssize_t gram_cap = pow2_at_least(2 * n_grams + 1);
    if (gram_cap > w->gram_alloc) {
        GROW(w->gram_slots, uint64_t, gram_cap);
        memset(w->gram_slots, 0, (size_t)gram_cap * sizeof(uint64_t));
        w->gram_alloc = gram_cap;
    }
    w->gram_cap = gram_cap;
    if (++w->gram_gen == 0) {
        memset(w->gram_slots, 0, (size_t)w->gram_alloc * sizeof(uint64_t));
        w->gram_gen = 1;
    }
    if (n_grams > w->grams_cap) {
        GROW(w->gram_start, const Py_ssize_t *, n_grams);
        GROW(w->gram_hash, uint64_t, n_grams);
        GROW(w->ref_max, Py_ssize_t, n_grams);
        GROW(w->ref_cur, Py_ssize_t, n_grams);
        GROW(w->hyp_count, Py_ssize_t, n_grams);
        GROW(w->ref_stamp, Py_ssize_t, n_grams);
        w->grams_cap = n_grams;
    }
    w->n_grams = 0;
    return 0;
}

/* Size the token table for `n_tokens` tokens and the buffers for `n_refs` references. */
static int ws_prepare(Workspace *w, Py_ssize_t n_tokens, Py_ssize_t n_refs) {
    /* only the active part of a table is cleared: a long sentence earlier must not make
       every later one pay for its table size */
    Py_ssize_t tok_cap = pow2_at_least(2 * n_tokens + 1);
    if (tok_cap > w->tok_alloc) {
        GROW(w->tok_slots, uint64_t, tok_cap);
        memset(w->tok_slots, 0, (size_t)tok_cap * sizeof(uint64_t));
        w->tok_alloc = tok_cap;
    }
    w->tok_cap = tok_cap;
    if (++w->tok_gen == 0) { /* generations wrapped: clear once */
        memset(w->tok_slots, 0, (size_t)w->tok_alloc * sizeof(uint64_t));
        w->tok_gen = 1;
    }
    if (n_tokens > w->tokens_cap) {
        GROW(w->tokens, Token, n_tokens);
        GROW(w->tok_hash, uint64_t, n_tokens);
        w->tokens_cap = n_tokens;
    }
    w->n_tokens = 0;
    if (n_refs + 1 > w->refs_cap) {
        GROW(w->ref_len, Py_ssize_t, n_refs + 1);
        GROW(w->ref_at, Py_ssize_t, n_refs + 1);
        w->refs_cap = n_refs + 1;
    }
    if (n_refs + 1 > w->n_buffers) {
        GROW(w->buffers, Buffer, n_refs + 1);
        for (Py_ssize_t i = w->n_buffers; i < n_refs + 1; i++)
            memset(&w->buffers[i], 0, sizeof(Buffer));
        w->n_buffers = n_refs + 1;
    }
    return 0;
}

/* Room for `n` token ids and as many position hashes. */
static int ws_scratch(Workspace *w, Py_ssize_t n) {
    if (n > w->scratch_cap) {
        GROW(w->scratch, Py_ssize_t, n);
        w->scratch_cap = n;
    }
    if (n > w->hashes_cap) {
        GROW(w->hashes, uint64_t, n);
        w->hashes_cap = n;
    }
    return 0;
}

static inline uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

/* MurmurHash3's finaliser: every input bit reaches the low bits a table slot is taken
   from (a multiplicative hash alone carries bits upwards only, so keys differing in high
   bits would share one chain). */
static inline uint64_t spread(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

/* The id of token (buffer, start, len), interning it if new. */
static Py_ssize_t intern_token(Workspace *w, Py_ssize_t buffer, Py_ssize_t start, Py_ssize_t len) {
    const Py_UCS4 *text = w->buffers[buffer].data + start;
    uint64_t h = 1469598103934665603ULL;
    for (Py_ssize_t i = 0; i < len; i++)
        h = (h ^ text[i]) * 1099511628211ULL;
    h = spread(h);
    Py_ssize_t mask = w->tok_cap - 1, slot = (Py_ssize_t)(h & (uint64_t)mask);
    for (;;) {
        uint64_t stored = w->tok_slots[slot];
        if ((uint32_t)(stored >> 32) != w->tok_gen)
            break;
        Py_ssize_t entry = (Py_ssize_t)(stored & 0xffffffffu);
        Token *t = &w->tokens[entry - 1];
        if (w->tok_hash[entry - 1] == h && t->len == len &&
            memcmp(w->buffers[t->buffer].data + t->start, text, (size_t)len * sizeof(Py_UCS4)) == 0)
            return entry - 1;
        slot = (slot + 1) & mask;
    }
    Py_ssize_t id = w->n_tokens++;
    w->tokens[id].buffer = buffer;
    w->tokens[id].start = start;
    w->tokens[id].len = len;
    w->tok_hash[id] = h;
    w->tok_slots[slot] = ((uint64_t)w->tok_gen << 32) | (uint64_t)(id + 1);
    return id;
}

/* The entry of the n-gram ids[0..order) (of the order the table holds) with hash `h`,
   adding it if new. */
static Py_ssize_t gram_entry(Workspace *w, const Py_ssize_t *ids, Py_ssize_t order, uint64_t h) {
    Py_ssize_t mask = w->gram_cap - 1, slot = (Py_ssize_t)(spread(h) & (uint64_t)mask);
    for (;;) {
        uint64_t stored = w->gram_slots[slot];
        if ((uint32_t)(stored >> 32) != w->gram_gen)
            break;
        Py_ssize_t e = (Py_ssize_t)(stored & 0xffffffffu) - 1;
        if (w->gram_hash[e] == h &&
            memcmp(w->gram_start[e], ids, (size_t)order * sizeof(Py_ssize_t)) == 0)
            return e;
        slot = (slot + 1) & mask;
    }
    Py_ssize_t e = w->n_grams++;
    w->gram_start[e] = ids;
    w->gram_hash[e] = h;
    w->ref_max[e] = w->ref_cur[e] = w->hyp_count[e] = 0;
    w->ref_stamp[e] = -1;
    w->gram_slots[slot] = ((uint64_t)w->gram_gen << 32) | (uint64_t)(e + 1);
    return e;
}

/* Extend the hashes of the n-grams of order - 1 starting at each position of ids[0..n) to
   order `order` (hashes start at 0 before order 1); returns how many n-grams there are. */
static Py_ssize_t roll(uint64_t *hashes, const Py_ssize_t *ids, Py_ssize_t n, Py_ssize_t order) {
    Py_ssize_t count = n >= order ? n - order + 1 : 0;
    for (Py_ssize_t i = 0; i < count; i++)
        hashes[i] = mix(hashes[i], (uint64_t)ids[i + order - 1]);
    return count;
}

/* chrF++'s punctuation: ASCII punctuation and symbols (string.punctuation). */
static inline int is_chrf_punct(Py_UCS4 c) {
    return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') ||
           (c >= '{' && c <= '~');
}

/* Split buffer `which` into token ids (str.split() whitespace); returns the count. With
   `chrf_words`, chrF++'s words: one punctuation mark split off the end (else the start) of
   words longer than one character. */
static Py_ssize_t split_ids(Workspace *w, Py_ssize_t which, Py_ssize_t *out, int chrf_words) {
    const Buffer *b = &w->buffers[which];
    Py_ssize_t n = 0, i = 0;
    while (i < b->len) {
        while (i < b->len && Py_UNICODE_ISSPACE(b->data[i]))
            i++;
        if (i >= b->len)
            break;
        Py_ssize_t start = i;
        while (i < b->len && !Py_UNICODE_ISSPACE(b->data[i]))
            i++;
        Py_ssize_t len = i - start;
        if (!chrf_words || len == 1) {
            out[n++] = intern_token(w, which, start, len);
        } else if (is_chrf_punct(b->data[i - 1])) {
            out[n++] = intern_token(w, which, start, len - 1);
            out[n++] = intern_token(w, which, i - 1, 1);
        } else if (is_chrf_punct(b->data[start])) {
            out[n++] = intern_token(w, which, start, 1);
            out[n++] = intern_token(w, which, start + 1, len - 1);
        } else {
            out[n++] = intern_token(w, which, start, len);
        }
    }
    return n;
}

static int set_int(PyObject *row, Py_ssize_t i, Py_ssize_t value) {
    PyObject *v = PyLong_FromSsize_t(value);
    if (v == NULL)
        return -1;
    PyList_SET_ITEM(row, i, v);
    return 0;
}

/* BLEU statistics of one hypothesis against refs[0..n_refs) (str the caller owns). */
static PyObject *sentence_row(Workspace *w, PyObject *hyp, PyObject *const *refs,
                              Py_ssize_t n_refs, Py_ssize_t max_order) {
    /* load every text; a text of L characters has at most (L + 1) / 2 tokens */
    if (ws_prepare(w, 0, n_refs) < 0)
        return NULL;
    Py_ssize_t total_tokens = 0;
    for (Py_ssize_t k = 0; k <= n_refs; k++) {
        if (load(k == 0 ? hyp : refs[k - 1], &w->buffers[k]) < 0)
            return NULL;
        total_tokens += (w->buffers[k].len + 1) / 2;
    }
    if (ws_prepare(w, total_tokens + 1, n_refs) < 0 || ws_scratch(w, total_tokens + 1) < 0)
        return NULL;
    /* token ids: the references', then the hypothesis' */
    Py_ssize_t *ids = w->scratch, offset = 0, *ref_len = w->ref_len, *ref_at = w->ref_at;
    for (Py_ssize_t k = 1; k <= n_refs; k++) {
        ref_at[k - 1] = offset;
        ref_len[k - 1] = split_ids(w, k, ids + offset, 0);
        offset += ref_len[k - 1];
    }
    const Py_ssize_t hyp_at = offset, hyp_len = split_ids(w, 0, ids + offset, 0);
    offset += hyp_len;
    /* closest reference length, ties to the shorter */
    Py_ssize_t best = -1, best_diff = -1;
    for (Py_ssize_t k = 0; k < n_refs; k++) {
        Py_ssize_t diff = hyp_len > ref_len[k] ? hyp_len - ref_len[k] : ref_len[k] - hyp_len;
        if (best_diff == -1 || diff < best_diff || (diff == best_diff && ref_len[k] < best)) {
            best = ref_len[k];
            best_diff = diff;
        }
    }
    PyObject *row = PyList_New(2 + 2 * max_order);
    if (row == NULL)
        return NULL;
    if (set_int(row, 0, hyp_len) < 0 || set_int(row, 1, best) < 0)
        goto fail;
    memset(w->hashes, 0, (size_t)offset * sizeof(uint64_t));
    for (Py_ssize_t order = 1; order <= max_order; order++) {
        Py_ssize_t correct = 0, total = hyp_len >= order ? hyp_len - order + 1 : 0;
        if (total > 0) { /* else nothing to match (later orders have no n-grams either) */
            Py_ssize_t count = 0;
            for (Py_ssize_t k = 0; k < n_refs; k++)
                count += ref_len[k] >= order ? ref_len[k] - order + 1 : 0;
            if (ws_reset_grams(w, count + total) < 0)
                goto fail;
            /* references: maximum count of every n-gram over the references */
            for (Py_ssize_t k = 0; k < n_refs; k++) {
                const Py_ssize_t *r = ids + ref_at[k];
                Py_ssize_t grams = roll(w->hashes + ref_at[k], r, ref_len[k], order);
                for (Py_ssize_t i = 0; i < grams; i++) {
                    Py_ssize_t e = gram_entry(w, r + i, order, w->hashes[ref_at[k] + i]);
                    if (w->ref_stamp[e] != k) {
                        w->ref_stamp[e] = k;
                        w->ref_cur[e] = 0;
                    }
                    if (++w->ref_cur[e] > w->ref_max[e])
                        w->ref_max[e] = w->ref_cur[e];
                }
            }
            const Py_ssize_t *h = ids + hyp_at;
            roll(w->hashes + hyp_at, h, hyp_len, order);
            for (Py_ssize_t i = 0; i < total; i++) {
                Py_ssize_t e = gram_entry(w, h + i, order, w->hashes[hyp_at + i]);
                if (++w->hyp_count[e] <= w->ref_max[e])
                    correct++;
            }
        }
        if (set_int(row, 1 + order, correct) < 0 || set_int(row, 1 + max_order + order, total) < 0)
            goto fail;
    }
    return row;
fail:
    Py_DECREF(row);
    return NULL;
}

/* The n-gram orders a statistics function accepts (the metrics check the same range). */
#define MAX_ORDER 1000

static PyObject *bleu_stats(PyObject *self, PyObject *args) {
    PyObject *hyp_list, *ref_list;
    Py_ssize_t max_order;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!n:bleu_stats", &PyList_Type, &hyp_list, &PyList_Type,
                          &ref_list, &max_order))
        return NULL;
    if (max_order < 1 || max_order > MAX_ORDER) {
        PyErr_SetString(PyExc_ValueError, "bleu_stats(): max_order must be in 1..1000");
        return NULL;
    }
    Corpus c;
    if (own_corpus(hyp_list, ref_list, &c, "bleu_stats") < 0)
        return NULL;
    PyObject *rows = PyList_New(c.hyps.n);
    if (rows != NULL) {
        Workspace w;
        memset(&w, 0, sizeof(w));
        for (Py_ssize_t i = 0; i < c.hyps.n; i++) {
            PyObject *row = sentence_row(&w, c.hyps.items[i], c.refs.items + c.ref_at[i],
                                         c.ref_at[i + 1] - c.ref_at[i], max_order);
            if (row == NULL) {
                Py_CLEAR(rows);
                break;
            }
            PyList_SET_ITEM(rows, i, row);
        }
        ws_free(&w);
    }
    corpus_release(&c);
    return rows;
}


/* ------------------------------------------------------------------------------------ */
/* chrF statistics.                                                                      */

/* Characters of buffer `which` (whitespace removed unless kept) as ids (code points). */
static Py_ssize_t chrf_char_ids(const Buffer *b, int whitespace, Py_ssize_t *out) {
    Py_ssize_t n = 0;
    for (Py_ssize_t i = 0; i < b->len; i++)
        if (whitespace || !Py_UNICODE_ISSPACE(b->data[i]))
            out[n++] = (Py_ssize_t)b->data[i];
    return n;
}


/* [hyp, ref, match] per order (characters, then words) of one hypothesis against one
   reference, one order at a time; the hypothesis count is reported as 0 where the
   reference has no n-gram of that order, as SacreBLEU does. seqs/lens: hypothesis chars,
   reference chars, hypothesis words, reference words; hashes: room for all of them. */
static PyObject *chrf_pair(Workspace *w, Py_ssize_t *const seqs[4], const Py_ssize_t lens[4],
                           uint64_t *const hashes[4], Py_ssize_t char_order,
                           Py_ssize_t word_order) {
    PyObject *row = PyList_New(3 * (char_order + word_order));
    if (row == NULL)
        return NULL;
    for (int kind = 0; kind < 2; kind++) { /* characters, then words */
        Py_ssize_t orders = kind ? word_order : char_order;
        const Py_ssize_t *hyp = seqs[2 * kind], *ref = seqs[2 * kind + 1];
        Py_ssize_t hyp_len = lens[2 * kind], ref_len = lens[2 * kind + 1];
        uint64_t *hyp_hash = hashes[2 * kind], *ref_hash = hashes[2 * kind + 1];
        memset(hyp_hash, 0, (size_t)hyp_len * sizeof(uint64_t));
        memset(ref_hash, 0, (size_t)ref_len * sizeof(uint64_t));
        for (Py_ssize_t n = 1; n <= orders; n++) {
            Py_ssize_t ref_total = ref_len >= n ? ref_len - n + 1 : 0;
            Py_ssize_t hyp_total = hyp_len >= n ? hyp_len - n + 1 : 0, matches = 0;
            if (ref_total > 0 && hyp_total > 0) {
                if (ws_reset_grams(w, ref_total + hyp_total) < 0)
                    goto fail;
                roll(ref_hash, ref, ref_len, n);
                for (Py_ssize_t i = 0; i < ref_total; i++)
                    w->ref_max[gram_entry(w, ref + i, n, ref_hash[i])]++;
                roll(hyp_hash, hyp, hyp_len, n);
                for (Py_ssize_t i = 0; i < hyp_total; i++) {
                    Py_ssize_t e = gram_entry(w, hyp + i, n, hyp_hash[i]);
                    if (++w->hyp_count[e] <= w->ref_max[e])
                        matches++;
                }
            }
            Py_ssize_t k = (kind ? char_order : 0) + n - 1;
            if (set_int(row, 3 * k, ref_total ? hyp_total : 0) < 0 ||
                set_int(row, 3 * k + 1, ref_total) < 0 || set_int(row, 3 * k + 2, matches) < 0)
                goto fail;
        }
    }
    return row;
fail:
    Py_DECREF(row);
    return NULL;
}

/* Per reference refs[0..n_refs) of one sentence (str the caller owns): chrF statistics. */
static PyObject *chrf_sentence(Workspace *w, PyObject *hyp, PyObject *const *refs,
                               Py_ssize_t n_refs, Py_ssize_t char_order, Py_ssize_t word_order,
                               int whitespace) {
    if (ws_prepare(w, 0, n_refs) < 0)
        return NULL;
    Py_ssize_t chars = 0;
    for (Py_ssize_t k = 0; k <= n_refs; k++) {
        if (load(k == 0 ? hyp : refs[k - 1], &w->buffers[k]) < 0)
            return NULL;
        chars += w->buffers[k].len;
    }
    /* ids: chars and words of every text (words at most twice the characters) */
    if (ws_scratch(w, 3 * chars + 8) < 0 || ws_prepare(w, 2 * chars + 1, n_refs) < 0)
        return NULL;
    Py_ssize_t *ids = w->scratch;
    uint64_t *hashes = w->hashes;
    Py_ssize_t offset = 0;
    Py_ssize_t *hyp_chars = ids + offset;
    Py_ssize_t hyp_nchars = chrf_char_ids(&w->buffers[0], whitespace, hyp_chars);
    offset += hyp_nchars;
    Py_ssize_t *hyp_words = ids + offset;
    Py_ssize_t hyp_nwords = word_order ? split_ids(w, 0, hyp_words, 1) : 0;
    offset += hyp_nwords;
    PyObject *per_ref = PyList_New(n_refs);
    if (per_ref == NULL)
        return NULL;
    for (Py_ssize_t k = 1; k <= n_refs; k++) {
        Py_ssize_t *ref_chars = ids + offset;
        Py_ssize_t ref_nchars = chrf_char_ids(&w->buffers[k], whitespace, ref_chars);
        Py_ssize_t *ref_words = ref_chars + ref_nchars;
        Py_ssize_t ref_nwords = word_order ? split_ids(w, k, ref_words, 1) : 0;
        Py_ssize_t *const seqs[4] = {hyp_chars, ref_chars, hyp_words, ref_words};
        const Py_ssize_t lens[4] = {hyp_nchars, ref_nchars, hyp_nwords, ref_nwords};
        uint64_t *const seq_hashes[4] = {hashes + (hyp_chars - ids), hashes + (ref_chars - ids),
                                         hashes + (hyp_words - ids), hashes + (ref_words - ids)};
        PyObject *row = chrf_pair(w, seqs, lens, seq_hashes, char_order, word_order);
        if (row == NULL) {
            Py_DECREF(per_ref);
            return NULL;
        }
        PyList_SET_ITEM(per_ref, k - 1, row);
    }
    return per_ref;
}

static PyObject *chrf_stats(PyObject *self, PyObject *args) {
    PyObject *hyp_list, *ref_list;
    Py_ssize_t char_order, word_order;
    int whitespace;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!nnp:chrf_stats", &PyList_Type, &hyp_list, &PyList_Type,
                          &ref_list, &char_order, &word_order, &whitespace))
        return NULL;
    if (char_order < 0 || word_order < 0 || char_order + word_order == 0 ||
        char_order > MAX_ORDER || word_order > MAX_ORDER) {
        PyErr_SetString(PyExc_ValueError, "chrf_stats(): orders must be in 0..1000, not both 0");
        return NULL;
    }
    Corpus c;
    if (own_corpus(hyp_list, ref_list, &c, "chrf_stats") < 0)
        return NULL;
    PyObject *out = PyList_New(c.hyps.n);
    if (out != NULL) {
        Workspace w;
        memset(&w, 0, sizeof(w));
        for (Py_ssize_t i = 0; i < c.hyps.n; i++) {
            PyObject *per_ref = chrf_sentence(&w, c.hyps.items[i], c.refs.items + c.ref_at[i],
                                              c.ref_at[i + 1] - c.ref_at[i], char_order,
                                              word_order, whitespace);
            if (per_ref == NULL) {
                Py_CLEAR(out);
                break;
            }
            PyList_SET_ITEM(out, i, per_ref);
        }
        ws_free(&w);
    }
    corpus_release(&c);
    return out;
}

static PyObject *tokenize_13a_many(PyObject *self, PyObject *arg) {
    if (!PyList_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "tokenize_13a_many() takes a list of str");
        return NULL;
    }
    Owned lines = {NULL, 0}; /* owned first: the caller's list may change meanwhile */
    if (own_items(arg, &lines) < 0)
        return NULL;
    Py_ssize_t n = lines.n;
    PyObject *out = PyList_New(n);
    if (out == NULL) {
        release(&lines);
        return NULL;
    }
    /* one pair of scratch buffers per string width, reused by every line */
    Py_UCS1 *b1[2] = {NULL, NULL};
    Py_UCS2 *b2[2] = {NULL, NULL};
    Py_UCS4 *b4[2] = {NULL, NULL};
    Py_ssize_t c1[2] = {0, 0}, c2[2] = {0, 0}, c4[2] = {0, 0};
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *text = lines.items[i], *line;
        if (!PyUnicode_Check(text)) {
            PyErr_SetString(PyExc_TypeError, "tokenize_13a() takes a str");
            line = NULL;
        } else if (PyUnicode_KIND(text) == PyUnicode_1BYTE_KIND) {
            line = tokenize_13a_ucs1_in(text, b1, c1);
        } else if (PyUnicode_KIND(text) == PyUnicode_2BYTE_KIND) {
            line = tokenize_13a_ucs2_in(text, b2, c2);
        } else {
            line = tokenize_13a_ucs4_in(text, b4, c4);
        }
        if (line == NULL) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, line);
    }
    PyMem_Free(b1[0]); PyMem_Free(b1[1]);
    PyMem_Free(b2[0]); PyMem_Free(b2[1]);
    PyMem_Free(b4[0]); PyMem_Free(b4[1]);
    release(&lines);
    (void)self;
    return out;
}

/* Column sums of rows of Python ints (integer statistics: exact in any order); None if a
   value is not an int that fits in 64 bits, so the caller falls back to Python. */
static PyObject *sum_int_rows(PyObject *self, PyObject *arg) {
    (void)self;
    if (!PyList_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "sum_int_rows() takes a list of lists");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(arg);
    if (n == 0)
        return PyList_New(0);
    PyObject *first = PyList_GET_ITEM(arg, 0);
    if (!PyList_Check(first))
        Py_RETURN_NONE;
    Py_ssize_t width = PyList_GET_SIZE(first);
    long long *sums = PyMem_Calloc((size_t)(width ? width : 1), sizeof(long long));
    if (sums == NULL)
        return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *row = PyList_GET_ITEM(arg, i);
        if (!PyList_Check(row) || PyList_GET_SIZE(row) != width) {
            PyMem_Free(sums);
            Py_RETURN_NONE;
        }
        for (Py_ssize_t j = 0; j < width; j++) {
            PyObject *v = PyList_GET_ITEM(row, j);
            if (!PyLong_CheckExact(v)) {
                PyMem_Free(sums);
                Py_RETURN_NONE;
            }
            int overflow = 0;
            long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
            if (overflow || (x > 0 && sums[j] > LLONG_MAX - x) ||
                (x < 0 && sums[j] < LLONG_MIN - x)) {
                PyMem_Free(sums);
                Py_RETURN_NONE;
            }
            sums[j] += x;
        }
    }
    PyObject *out = PyList_New(width);
    if (out != NULL) {
        for (Py_ssize_t j = 0; j < width; j++) {
            PyObject *v = PyLong_FromLongLong(sums[j]);
            if (v == NULL) {
                Py_CLEAR(out);
                break;
            }
            PyList_SET_ITEM(out, j, v);
        }
    }
    PyMem_Free(sums);
    return out;
}

static PyObject *tokenize_zh(PyObject *self, PyObject *arg) {
    (void)self;
    return by_width(arg, "tokenize_zh", tokenize_13a_ucs1_zh, tokenize_13a_ucs2_zh,
                    tokenize_13a_ucs4_zh);
}

/* TER's edit count, in _native_ter.c. */
PyObject *bleucli_ter_edits(PyObject *self, PyObject *args);

static PyMethodDef methods[] = {
    {"tokenize_zh", tokenize_zh, METH_O,
     "The zh tokeniser in one pass, or None where Python must run the sequential rules."},
    {"ter_edits", bleucli_ter_edits, METH_VARARGS,
     "ter_edits(hyp_ids, ref_ids): TER edits including shifts (non-empty reference)."},
    {"tokenize_13a_many", tokenize_13a_many, METH_O, "tokenize_13a over a list of str."},
    {"chrf_stats", chrf_stats, METH_VARARGS,
     "chrf_stats(hyps, refs, char_order, word_order, whitespace): per sentence, per reference, "
     "[hyp, ref, match] for every order."},
    {"sum_int_rows", sum_int_rows, METH_O,
     "Column sums of lists of ints, or None when a value is not a 64-bit int."},
    {"tokenize_13a", tokenize_13a, METH_O, "mteval-v13a tokenisation (SacreBLEU's 13a)."},
    {"bleu_stats", bleu_stats, METH_VARARGS,
     "bleu_stats(hyps, refs, max_order): per sentence [hyp_len, ref_len, correct..., total...]."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_native", "bleucli's optional compiled core.", -1, methods,
};

#ifndef BLEUCLI_SOURCE_HASH
#define BLEUCLI_SOURCE_HASH ""
#endif

PyMODINIT_FUNC PyInit__native(void) {
    PyObject *m = PyModule_Create(&module);
    /* the sources this core was built from (setup.py), checked against a source checkout */
    if (m != NULL && PyModule_AddStringConstant(m, "SOURCE_HASH", BLEUCLI_SOURCE_HASH) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
