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
#include "_native.h"
#include <stdint.h>
#include <limits.h>
#include <string.h>

/* ------------------------------------------------------------------------------------ */
/* A growable UCS4 buffer. Everything below the Python-facing functions allocates with  */
/* PyMem_Raw*, sets no Python error and touches no Python object but the strings the     */
/* caller owns: the batch engine runs it on threads without the GIL.                     */

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
        if (cap > PY_SSIZE_T_MAX / 2 / (Py_ssize_t)sizeof(Py_UCS4))
            return -1;
        cap *= 2;
    }
    Py_UCS4 *data = PyMem_RawRealloc(b->data, (size_t)cap * sizeof(Py_UCS4));
    if (data == NULL)
        return -1;
    b->data = data;
    b->cap = cap;
    return 0;
}

static void buf_free(Buffer *b) {
    PyMem_RawFree(b->data);
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

/* 13a's decisions at one character of a line, for the one-pass tokenisers (of every width:
   the functions' names end in the character type).
 *
 * period_alone: whether the '.' or ',' at i is a token of its own. In a run x1..xk of them
 * between P and F, rules 2 and 3 (non-overlapping substitutions, left to right) split off
 * x1..x(k-1) always, and xk unless F is a digit and k is odd exactly when P is a digit:
 * rule 2 pairs (P, x1), (x2, x3), ... after a non-digit P and (x1, x2), (x3, x4), ... after
 * a digit, and rule 3 then splits every x followed by a space or a non-digit. For k = 1
 * that is "unless both neighbours are digits".
 *
 * rewrites_at: whether the line needs the rewriting rules because of the character at i:
 * a newline, "<skipped>" or an entity that 13a replaces. Any other '<' or '&' is a symbol
 * of rule 1 (the replacements cannot apply to the line). */
#define DEFINE_13A_RULES(T)                                                                \
    static inline int ascii_at_##T(const T *in, Py_ssize_t len, Py_ssize_t i,            \
                                   const char *s) {                                        \
        for (; *s != '\0'; s++, i++)                                                       \
            if (i >= len || in[i] != (T)(unsigned char)*s)                                 \
                return 0;                                                                  \
        return 1;                                                                          \
    }                                                                                      \
                                                                                           \
    static inline int period_alone_##T(const T *in, Py_ssize_t len, Py_ssize_t i) {      \
        if (i + 1 < len && is_period_comma(in[i + 1]))                                     \
            return 1;                                                                      \
        Py_ssize_t first = i;                                                              \
        while (first > 0 && is_period_comma(in[first - 1]))                                \
            first--;                                                                       \
        int p_digit = first > 0 && is_digit(in[first - 1]);                                \
        int f_digit = i + 1 < len && is_digit(in[i + 1]);                                  \
        return !(f_digit && ((i - first) % 2 == 0) == p_digit);                            \
    }                                                                                      \
                                                                                           \
    static inline int rewrites_at_##T(const T *in, Py_ssize_t len, Py_ssize_t i) {       \
        switch (in[i]) {                                                                   \
        case '\n':                                                                         \
            return 1;                                                                      \
        case '<':                                                                          \
            return ascii_at_##T(in, len, i, "<skipped>");                                  \
        case '&':                                                                          \
            return ascii_at_##T(in, len, i, "&quot;") || ascii_at_##T(in, len, i, "&amp;") || \
                   ascii_at_##T(in, len, i, "&lt;") || ascii_at_##T(in, len, i, "&gt;");   \
        default:                                                                           \
            return 0;                                                                      \
        }                                                                                  \
    }

DEFINE_13A_RULES(Py_UCS1)
DEFINE_13A_RULES(Py_UCS2)
DEFINE_13A_RULES(Py_UCS4)

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

/* The code points of a text view into buffer b. */
static int load(const BleucliText *t, Buffer *b) {
    b->len = 0;
    if (buf_reserve(b, t->len + 2) < 0)
        return -1;
    for (Py_ssize_t i = 0; i < t->len; i++)
        b->data[i] = PyUnicode_READ(t->kind, t->data, i);
    b->len = t->len;
    return 0;
}

static BleucliText view(PyObject *text) {
    BleucliText t = {PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text)};
    return t;
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
            if (grown_cap > PY_SSIZE_T_MAX / 2 / (Py_ssize_t)sizeof(T))                    \
                return -1;                                                                 \
            grown_cap *= 2;                                                                \
        }                                                                                  \
        T *grown = PyMem_RawRealloc(*data, (size_t)grown_cap * sizeof(T));                 \
        if (grown == NULL)                                                                 \
            return -1;                                                                     \
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
    /* Rules 1-4 and the whitespace normalisation in one pass over a line that needs no   \
       rewriting (rewrites_at): a symbol of rule 1 is a token; '.'/',' as period_alone     \
       says (the padding spaces are not digits); '-' is one after a digit. Neighbours are  \
       those of the input: rule 1 never separates a digit from its neighbour. */           \
    /* zh: CJK characters are tokens too, and the line is not padded, so a '.'/',' at an \
       end is split only by the neighbour it has (rule 2 needs one before, rule 3 after) */ \
    static Py_ssize_t NAME##_fused(const T *in, Py_ssize_t len, T *out, int zh) {          \
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
                alone = period_alone_##T(in, len, i);                                      \
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
        return m;                                                                          \
    }                                                                                      \
                                                                                           \
    /* 13a of src[0..n) into the scratch buffers bufs/caps (two, the caller's, reused      \
       across lines): the result's code units, *out_len of them; NULL without memory.      \
       Needs no GIL (raw allocations, no Python object). */                                \
    static T *NAME##_core(const T *src, Py_ssize_t n, T **bufs, Py_ssize_t *caps,          \
                          Py_ssize_t *out_len) {                                          \
        if (n < 0) /* never: tells the compiler memcpy's size is not negative */           \
            n = 0;                                                                         \
        T *result = NULL;                                                                  \
        int cur = 0;                                                                       \
        Py_ssize_t len = n, m, i;                                                          \
        if (NAME##_reserve(&bufs[0], &caps[0], n + 2) < 0 ||                              \
            NAME##_reserve(&bufs[1], &caps[1], n + 2) < 0)                                 \
            goto done;                                                                     \
        int has_lt = 0, has_nl = 0, has_amp = 0, rewrites = 0;                             \
        for (i = 0; i < n; i++) {                                                          \
            T c = src[i];                                                                  \
            has_lt |= c == '<';                                                            \
            has_nl |= c == '\n';                                                           \
            has_amp |= c == '&';                                                           \
        }                                                                                  \
        for (i = 0; i < n && (has_lt || has_nl || has_amp) && !rewrites; i++)              \
            rewrites = rewrites_at_##T(src, n, i);                                         \
        if (!rewrites) {                                                                   \
            /* the common case: every rule in one pass over the line itself */             \
            if (NAME##_reserve(&bufs[1], &caps[1], 3 * n + 3) < 0)                         \
                goto done;                                                                 \
            *out_len = NAME##_fused(src, n, bufs[1], 0);                                   \
            result = bufs[1];                                                              \
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
            *out_len = m;                                                                  \
            result = out;                                                                  \
        }                                                                                  \
    done:                                                                                  \
        return result;                                                                     \
    }                                                                                      \
                                                                                           \
    static PyObject *NAME##_in(PyObject *text, T **bufs, Py_ssize_t *caps) {                \
        Py_ssize_t m = 0;                                                                  \
        T *out = NAME##_core((const T *)PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text),  \
                             bufs, caps, &m);                                              \
        return out ? PyUnicode_FromKindAndData(KIND, out, m) : PyErr_NoMemory();           \
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
            return PyErr_NoMemory();                                                       \
        Py_ssize_t m = NAME##_fused(src + start, n - start, out, 1);                       \
        PyObject *result = PyUnicode_FromKindAndData(KIND, out, m);                        \
        PyMem_RawFree(out);                                                                \
        return result;                                                                     \
    }                                                                                      \
                                                                                           \
    static PyObject *NAME(PyObject *text) {                                                \
        T *bufs[2] = {NULL, NULL};                                                         \
        Py_ssize_t caps[2] = {0, 0};                                                       \
        PyObject *result = NAME##_in(text, bufs, caps);                                    \
        PyMem_RawFree(bufs[0]);                                                            \
        PyMem_RawFree(bufs[1]);                                                            \
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

/* One n-gram of the table of one order: what identifies it, and its counts. */
typedef struct {
    uint64_t hash;
    const Py_ssize_t *start;  /* its first token id */
    Py_ssize_t ref_max, ref_cur, hyp_count;
    Py_ssize_t ref_stamp;     /* which reference last touched ref_cur */
} GramEntry;

typedef struct {
    Py_ssize_t start, len; /* a token: a slice of the sentence's UCS4 buffer */
    Py_ssize_t buffer;     /* which buffer (0: hypothesis, k: reference k) */
} Token;

struct Workspace {
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
    GramEntry *grams;
    Py_ssize_t n_grams, grams_cap;
    Buffer *buffers;
    Py_ssize_t n_buffers;
    Py_ssize_t *scratch;    /* token ids of every text */
    Py_ssize_t scratch_cap;
    uint64_t *hashes;       /* per token position: the hash of the n-gram starting there */
    Py_ssize_t hashes_cap;
    /* per token position: whether its n-gram of the current order occurs on the other side
       (an n-gram can only match if both its (n - 1)-grams do), and a reference position's
       entry */
    unsigned char *alive;
    GramEntry **entry_at;
    Py_ssize_t *bounds, bounds_cap; /* words of one text: (start, length) pairs */
    Py_ssize_t *ref_len, *ref_at; /* per reference: token count and first id's offset */
    Py_ssize_t refs_cap;
    Py_UCS4 *tok13a[2];     /* the 13a tokeniser's scratch */
    Py_ssize_t tok13a_cap[2];
};

static void ws_free(Workspace *w) {
    PyMem_RawFree(w->tok_slots);
    PyMem_RawFree(w->tokens);
    PyMem_RawFree(w->tok_hash);
    PyMem_RawFree(w->gram_slots);
    PyMem_RawFree(w->grams);
    PyMem_RawFree(w->scratch);
    PyMem_RawFree(w->hashes);
    PyMem_RawFree(w->alive);
    PyMem_RawFree(w->entry_at);
    PyMem_RawFree(w->bounds);
    PyMem_RawFree(w->ref_len);
    PyMem_RawFree(w->ref_at);
    PyMem_RawFree(w->tok13a[0]);
    PyMem_RawFree(w->tok13a[1]);
    for (Py_ssize_t i = 0; i < w->n_buffers; i++)
        buf_free(&w->buffers[i]);
    PyMem_RawFree(w->buffers);
    memset(w, 0, sizeof(*w));
}

Workspace *bleucli_workspace_new(void) { return PyMem_RawCalloc(1, sizeof(Workspace)); }

void bleucli_workspace_free(Workspace *w) {
    if (w != NULL) {
        ws_free(w);
        PyMem_RawFree(w);
    }
}

static Py_ssize_t pow2_at_least(Py_ssize_t n) {
    Py_ssize_t cap = 16;
    while (cap < n)
        cap *= 2;
    return cap;
}

#define GROW(ptr, type, count)                                                   \
    do {                                                                         \
        if ((size_t)(count) > PY_SSIZE_T_MAX / sizeof(type))                     \
            return -1;                                                           \
        type *grown_ = PyMem_RawRealloc((void *)(ptr), (size_t)(count) * sizeof(type)); \
        if (grown_ == NULL)                                                      \
            return -1;                                                           \
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
        GROW(w->grams, GramEntry, n_grams);
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
        GROW(w->alive, unsigned char, n);
        GROW(w->entry_at, GramEntry *, n);
        w->hashes_cap = n;
    }
    return 0;
}

/* Can the n-gram of `order` at position i match? Unigrams always can; a longer one only if
   the (order - 1)-grams at i and i + 1 occur on the other side (alive from the last
   order). */
static inline int can_match(const unsigned char *alive, Py_ssize_t i, Py_ssize_t order) {
    return order == 1 || (alive[i] && alive[i + 1]);
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
static inline int same_ids(const Py_ssize_t *a, const Py_ssize_t *b, Py_ssize_t order) {
    for (Py_ssize_t k = 0; k < order; k++)
        if (a[k] != b[k])
            return 0;
    return 1;
}

/* The slot of the n-gram ids[0..order) with hash h: where it is (*found) or would go. */
static inline Py_ssize_t gram_slot(const Workspace *w, const Py_ssize_t *ids, Py_ssize_t order,
                                   uint64_t h, int *found) {
    Py_ssize_t mask = w->gram_cap - 1, slot = (Py_ssize_t)(spread(h) & (uint64_t)mask);
    for (;;) {
        uint64_t stored = w->gram_slots[slot];
        if ((uint32_t)(stored >> 32) != w->gram_gen) {
            *found = 0;
            return slot;
        }
        const GramEntry *g = &w->grams[(stored & 0xffffffffu) - 1];
        if (g->hash == h && same_ids(g->start, ids, order)) {
            *found = 1;
            return slot;
        }
        slot = (slot + 1) & mask;
    }
}

/* The entry of the n-gram ids[0..order) (of the order the table holds) with hash h,
   added if new. */
static GramEntry *gram_entry(Workspace *w, const Py_ssize_t *ids, Py_ssize_t order, uint64_t h) {
    int found;
    Py_ssize_t slot = gram_slot(w, ids, order, h, &found);
    if (found)
        return &w->grams[(w->gram_slots[slot] & 0xffffffffu) - 1];
    Py_ssize_t e = w->n_grams++;
    GramEntry *g = &w->grams[e];
    g->hash = h;
    g->start = ids;
    g->ref_max = g->ref_cur = g->hyp_count = 0;
    g->ref_stamp = -1;
    w->gram_slots[slot] = ((uint64_t)w->gram_gen << 32) | (uint64_t)(e + 1);
    return g;
}

/* The entry of the n-gram, or NULL when the table does not hold it (a hypothesis' n-gram
   that no reference has cannot match: it needs no entry). */
static inline GramEntry *gram_find(const Workspace *w, const Py_ssize_t *ids, Py_ssize_t order,
                                   uint64_t h) {
    int found;
    Py_ssize_t slot = gram_slot(w, ids, order, h, &found);
    return found ? &w->grams[(w->gram_slots[slot] & 0xffffffffu) - 1] : NULL;
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
/* The words of b as (start, length) pairs in bounds (str.split() whitespace; with
   `chrf_words`, chrF++'s words: one punctuation mark split off the end, else the start,
   of words longer than one character); returns the count (at most b->len). */
static Py_ssize_t split_bounds(const Buffer *b, int chrf_words, Py_ssize_t *bounds) {
    Py_ssize_t n = 0, i = 0;
#define WORD(start_, len_)           \
    do {                             \
        bounds[2 * n] = (start_);    \
        bounds[2 * n + 1] = (len_);  \
        n++;                         \
    } while (0)
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
            WORD(start, len);
        } else if (is_chrf_punct(b->data[i - 1])) {
            WORD(start, len - 1);
            WORD(i - 1, 1);
        } else if (is_chrf_punct(b->data[start])) {
            WORD(start, 1);
            WORD(start + 1, len - 1);
        } else {
            WORD(start, len);
        }
    }
#undef WORD
    return n;
}

/* Split buffer `which` into token ids (split_bounds' words); returns the count. */
static Py_ssize_t split_ids(Workspace *w, Py_ssize_t which, Py_ssize_t *out, int chrf_words) {
    Py_ssize_t *bounds = w->bounds;
    Py_ssize_t n = split_bounds(&w->buffers[which], chrf_words, bounds);
    for (Py_ssize_t k = 0; k < n; k++)
        out[k] = intern_token(w, which, bounds[2 * k], bounds[2 * k + 1]);
    return n;
}

/* Load text k of a sentence (0: the hypothesis, k: reference k) into buffer k; with
   tok13a, right-stripped and 13a-tokenised as BLEU preprocesses (the compiled 13a). */
static int reserve_bounds(Workspace *w, Py_ssize_t len) {
    if (2 * len + 2 > w->bounds_cap) {
        GROW(w->bounds, Py_ssize_t, 2 * len + 2);
        w->bounds_cap = 2 * len + 2;
    }
    return 0;
}

static int load_text(Workspace *w, Py_ssize_t k, const BleucliText *t, int tok13a) {
    Buffer *b = &w->buffers[k];
    if (load(t, b) < 0)
        return -1;
    if (!tok13a)
        return reserve_bounds(w, b->len);
    Py_ssize_t n = b->len, m = 0;
    while (n > 0 && Py_UNICODE_ISSPACE(b->data[n - 1]))
        n--;
    Py_UCS4 *out = tokenize_13a_ucs4_core(b->data, n, w->tok13a, w->tok13a_cap, &m);
    if (out == NULL || buf_reserve(b, m + 2 - b->len) < 0)
        return -1;
    memcpy(b->data, out, (size_t)m * sizeof(Py_UCS4));
    b->len = m;
    return reserve_bounds(w, m);
}

/* ------------------------------------------------------------------------------------ */
/* Tokens with hashes, in the string's own width (the aligned batch engine's input).     */

/* A token's hash: rotate and add each code point in (two one-cycle operations a character,
   where a multiply would take three or four), then token_hash() spreads it over the table
   with one multiply and a fold of the high half into the low bits a slot is taken from
   (both one-to-one, so no two sums share a hash; spread()'s three rounds were 6% of the
   13a pass). Equal tokens hash equally whatever the string's width; unequal ones rarely
   do, and ids are verified by their characters anyway. */
#define TOKEN_SEED 1469598103934665603ULL
#define TOKEN_STEP(h, c) ((((h) << 7) | ((h) >> 57)) ^ (uint64_t)(c))

static inline uint64_t token_hash(uint64_t h) {
    h *= 0xff51afd7ed558ccdULL;
    return h ^ (h >> 32);
}

/* -2 from a 13a pass: the line needs the rewriting rules (a newline, "<skipped>" or an
   entity: rewrites_at), which the general 13a does. */
#define NEEDS_REWRITE (-2)

/* What a character is to 13a's one-pass rules (ASCII by table, filled at import): part of
   a token, whitespace, a token of its own (rule 1), '.' or ',', '-', a digit, or '\n', '<'
   or '&' (rewrites_at decides whether the line needs the rewriting rules). */
enum { C_WORD = 0, C_SPACE, C_ALONE, C_PERIOD, C_DASH, C_DIGIT, C_REWRITE };
static unsigned char ascii_class[128], ascii_space[128];

static void init_ascii_class(void) {
    for (Py_UCS4 c = 0; c < 128; c++)
        ascii_space[c] = (unsigned char)Py_UNICODE_ISSPACE(c);
    for (Py_UCS4 c = 0; c < 128; c++)
        ascii_class[c] = c == '\n' || c == '<' || c == '&' ? C_REWRITE
                         : Py_UNICODE_ISSPACE(c)            ? C_SPACE
                         : is_period_comma(c)               ? C_PERIOD
                         : c == '-'                         ? C_DASH
                         : is_digit(c)                      ? C_DIGIT
                         : is_split_symbol(c)               ? C_ALONE
                                                            : C_WORD;
}

/* Py_UNICODE_ISSPACE for a character above ASCII, asking Python only for the few ranges
   that hold whitespace (U+0085, U+00A0, U+1680, U+2000..U+205F, U+3000; the tests check
   every code point against str.isspace). */
static inline int is_space_above_ascii(Py_UCS4 c) {
    if (c != 0x85 && c != 0xA0 && c != 0x1680 && (c < 0x2000 || c > 0x205F) && c != 0x3000)
        return 0;
    return Py_UNICODE_ISSPACE(c);
}

/* Py_UNICODE_ISSPACE, faster. */
static inline int is_space(Py_UCS4 c) { return c < 128 ? ascii_space[c] : is_space_above_ascii(c); }

static inline int char_class(Py_UCS4 c) {
    return c < 128 ? ascii_class[c] : is_space_above_ascii(c) ? C_SPACE : C_WORD;
}

/* char_class of every code point below 65536 (64 KB): one load a character of a one- or
   two-byte string instead of is_space_above_ascii's five tests (the 13a pass over two-byte
   strings 11% faster). Filled by bleucli_fill_class_table, as lower_bmp is: no work at
   import for the callers that never tokenise this way. */
static unsigned char bmp_class[65536];
static int bmp_class_ready;

void bleucli_fill_class_table(void) {
    if (bmp_class_ready)
        return;
    for (Py_UCS4 c = 0; c < 65536; c++)
        bmp_class[c] = (unsigned char)char_class(c);
    bmp_class_ready = 1;
}

/* char_class of a character of a string of width T (a constant: the table or the tests). */
#define CLASS_OF(T, c) (sizeof(T) < 4 ? (int)bmp_class[c] : char_class(c))

#define DEFINE_HASHED_TOKENS(NAME, T)                                                     \
    static inline uint64_t NAME##_hash(const T *in, Py_ssize_t start, Py_ssize_t len) {   \
        uint64_t h = TOKEN_SEED;                                                           \
        for (Py_ssize_t k = start; k < start + len; k++)                                   \
            h = TOKEN_STEP(h, in[k]);                                                      \
        return token_hash(h);                                                              \
    }                                                                                      \
                                                                                           \
    /* Whether the non-space character at i of class cls is a token of its own (1), part \
       of a run (0), or a sign that the line needs the rewriting rules (-1). */           \
    static inline int NAME##_alone(const T *in, Py_ssize_t len, Py_ssize_t i, int cls) {   \
        switch (cls) {                                                                     \
        case C_WORD:                                                                       \
        case C_DIGIT:                                                                      \
            return 0;                                                                      \
        case C_ALONE:                                                                      \
            return 1;                                                                      \
        case C_PERIOD:                                                                     \
            return period_alone_##T(in, len, i);                                           \
        case C_DASH:                                                                       \
            return i > 0 && is_digit(in[i - 1]);                                           \
        default:                                                                           \
            return rewrites_at_##T(in, len, i) ? -1 : 1;                                   \
        }                                                                                  \
    }                                                                                      \
                                                                                           \
    /* str.split()'s words; with chrf_words, chrF++'s (split_bounds' rule) */             \
    static Py_ssize_t NAME##_split(const T *in, Py_ssize_t len, int chrf_words,            \
                                   BleucliToken *out) {                                    \
        Py_ssize_t n = 0, i = 0;                                                           \
        while (i < len) {                                                                  \
            while (i < len && is_space(in[i]))                                             \
                i++;                                                                       \
            if (i >= len)                                                                  \
                break;                                                                     \
            Py_ssize_t start = i;                                                          \
            uint64_t h = TOKEN_SEED;                                                       \
            while (i < len && !is_space(in[i])) {                                          \
                h = TOKEN_STEP(h, in[i]);                                                  \
                i++;                                                                       \
            }                                                                              \
            Py_ssize_t wlen = i - start, cut = -1;                                         \
            if (chrf_words && wlen > 1) {                                                  \
                if (is_chrf_punct(in[i - 1]))                                              \
                    cut = i - 1;                                                           \
                else if (is_chrf_punct(in[start]))                                         \
                    cut = start + 1;                                                       \
            }                                                                              \
            if (cut < 0) {                                                                 \
                out[n++] = (BleucliToken){token_hash(h), (uint32_t)start, (uint32_t)wlen}; \
            } else {                                                                       \
                out[n++] = (BleucliToken){NAME##_hash(in, start, cut - start),             \
                                          (uint32_t)start, (uint32_t)(cut - start)};       \
                out[n++] = (BleucliToken){NAME##_hash(in, cut, i - cut), (uint32_t)cut,    \
                                          (uint32_t)(i - cut)};                            \
            }                                                                              \
        }                                                                                  \
        return n;                                                                          \
    }                                                                                      \
                                                                                           \
    /* 13a's tokens of a right-stripped line by the one-pass rules of the _fused          \
       function (a token is a run of the line's own characters), or NEEDS_REWRITE. A run   \
       of word characters takes the tight inner loop (one hard-to-predict branch a word); \
       the character that ends it is looked at again by the outer loop. */                \
    static Py_ssize_t NAME##_13a(const T *in, Py_ssize_t len, BleucliToken *out) {         \
        Py_ssize_t n = 0, i = 0;                                                           \
        while (i < len) {                                                                  \
            T c = in[i];                                                                   \
            int cls = CLASS_OF(T, c);                                                      \
            if (cls == C_SPACE) {                                                          \
                i++;                                                                       \
                continue;                                                                  \
            }                                                                              \
            int alone = NAME##_alone(in, len, i, cls);                                     \
            if (alone < 0)                                                                 \
                return NEEDS_REWRITE;                                                      \
            if (alone) {                                                                   \
                out[n++] = (BleucliToken){token_hash(TOKEN_STEP(TOKEN_SEED, c)), (uint32_t)i, 1}; \
                i++;                                                                       \
                continue;                                                                  \
            }                                                                              \
            Py_ssize_t start = i;                                                          \
            uint64_t h = TOKEN_SEED;                                                       \
            for (;;) {                                                                     \
                h = TOKEN_STEP(h, c);                                                      \
                if (++i >= len)                                                            \
                    break;                                                                 \
                c = in[i];                                                                 \
                cls = CLASS_OF(T, c);                                                      \
                if (cls == C_WORD || cls == C_DIGIT)                                       \
                    continue;                                                              \
                if (cls == C_SPACE || NAME##_alone(in, len, i, cls) != 0)                  \
                    break; /* ends the run (a rewrite too: the outer loop returns) */      \
            }                                                                              \
            out[n++] = (BleucliToken){token_hash(h), (uint32_t)start, (uint32_t)(i - start)}; \
        }                                                                                  \
        return n;                                                                          \
    }

DEFINE_HASHED_TOKENS(hashed_ucs1, Py_UCS1)
DEFINE_HASHED_TOKENS(hashed_ucs2, Py_UCS2)
DEFINE_HASHED_TOKENS(hashed_ucs4, Py_UCS4)

Py_ssize_t bleucli_chrf_chars(const BleucliText *t, int whitespace, uint32_t *out) {
    Py_ssize_t m = 0;
#define CHARS(T)                                                                           \
    for (Py_ssize_t i = 0; i < t->len; i++) {                                              \
        Py_UCS4 c = ((const T *)t->data)[i];                                               \
        if (whitespace || !is_space(c))                                                    \
            out[m++] = c;                                                                  \
    }
    if (t->kind == PyUnicode_1BYTE_KIND)
        CHARS(Py_UCS1)
    else if (t->kind == PyUnicode_2BYTE_KIND)
        CHARS(Py_UCS2)
    else
        CHARS(Py_UCS4)
#undef CHARS
    return m;
}

Py_ssize_t bleucli_hashed_tokens(Workspace *w, const BleucliText *t, int mode,
                                 BleucliToken *out, const void **chars, int *kind) {
    *chars = t->data;
    *kind = t->kind;
    if ((size_t)t->len >= UINT32_MAX)
        return -1;
    if (mode == BLEUCLI_TOKENS_13A) {
        Py_ssize_t n = t->len, count;
        while (n > 0 && Py_UNICODE_ISSPACE(PyUnicode_READ(t->kind, t->data, n - 1)))
            n--;
        if (t->kind == PyUnicode_1BYTE_KIND)
            count = hashed_ucs1_13a(t->data, n, out);
        else if (t->kind == PyUnicode_2BYTE_KIND)
            count = hashed_ucs2_13a(t->data, n, out);
        else
            count = hashed_ucs4_13a(t->data, n, out);
        if (count != NEEDS_REWRITE)
            return count;
        /* the general 13a on a wide copy; its tokens are in the workspace's scratch */
        Py_ssize_t m = 0;
        if (ws_prepare(w, 0, 0) < 0 || load(t, &w->buffers[0]) < 0)
            return -1;
        Py_UCS4 *text = tokenize_13a_ucs4_core(w->buffers[0].data, n, w->tok13a,
                                               w->tok13a_cap, &m);
        if (text == NULL)
            return -1;
        *chars = text;
        *kind = PyUnicode_4BYTE_KIND;
        return hashed_ucs4_split(text, m, 0, out);
    }
    int chrf_words = mode == BLEUCLI_TOKENS_CHRF;
    if (t->kind == PyUnicode_1BYTE_KIND)
        return hashed_ucs1_split(t->data, t->len, chrf_words, out);
    if (t->kind == PyUnicode_2BYTE_KIND)
        return hashed_ucs2_split(t->data, t->len, chrf_words, out);
    return hashed_ucs4_split(t->data, t->len, chrf_words, out);
}

int bleucli_tokens(Workspace *w, const BleucliText *t, int tok13a, int chrf_words,
                   const Py_UCS4 **text, const Py_ssize_t **bounds, Py_ssize_t *n) {
    if (ws_prepare(w, 0, 0) < 0 || load_text(w, 0, t, tok13a) < 0)
        return -1;
    *text = w->buffers[0].data;
    *bounds = w->bounds;
    *n = split_bounds(&w->buffers[0], chrf_words, w->bounds);
    return 0;
}

int bleucli_bleu_row(Workspace *w, const BleucliText *hyp, const BleucliText *refs,
                     Py_ssize_t n_refs, Py_ssize_t max_order, int tok13a, Py_ssize_t *row) {
    /* load every text; a text of L characters has at most (L + 1) / 2 tokens */
    if (ws_prepare(w, 0, n_refs) < 0)
        return -1;
    Py_ssize_t total_tokens = 0;
    for (Py_ssize_t k = 0; k <= n_refs; k++) {
        if (load_text(w, k, k == 0 ? hyp : &refs[k - 1], tok13a) < 0)
            return -1;
        total_tokens += (w->buffers[k].len + 1) / 2;
    }
    if (ws_prepare(w, total_tokens + 1, n_refs) < 0 || ws_scratch(w, total_tokens + 1) < 0)
        return -1;
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
    row[0] = hyp_len;
    row[1] = best;
    memset(w->hashes, 0, (size_t)offset * sizeof(uint64_t));
    unsigned char *alive = w->alive;
    GramEntry **entry_at = w->entry_at;
    for (Py_ssize_t order = 1; order <= max_order; order++) {
        Py_ssize_t correct = 0, total = hyp_len >= order ? hyp_len - order + 1 : 0;
        if (total > 0) { /* else nothing to match (later orders have no n-grams either) */
            Py_ssize_t count = 0;
            for (Py_ssize_t k = 0; k < n_refs; k++)
                count += ref_len[k] >= order ? ref_len[k] - order + 1 : 0;
            if (ws_reset_grams(w, count + total) < 0)
                return -1;
            /* references: maximum count of every n-gram over the references */
            for (Py_ssize_t k = 0; k < n_refs; k++) {
                const Py_ssize_t *r = ids + ref_at[k];
                Py_ssize_t grams = roll(w->hashes + ref_at[k], r, ref_len[k], order);
                for (Py_ssize_t i = 0; i < grams; i++) {
                    Py_ssize_t at = ref_at[k] + i;
                    if (!can_match(alive + ref_at[k], i, order)) {
                        entry_at[at] = NULL;
                        continue;
                    }
                    GramEntry *g = entry_at[at] = gram_entry(w, r + i, order, w->hashes[at]);
                    if (g->ref_stamp != k) {
                        g->ref_stamp = k;
                        g->ref_cur = 0;
                    }
                    if (++g->ref_cur > g->ref_max)
                        g->ref_max = g->ref_cur;
                }
            }
            const Py_ssize_t *h = ids + hyp_at;
            roll(w->hashes + hyp_at, h, hyp_len, order);
            for (Py_ssize_t i = 0; i < total; i++) {
                GramEntry *g = can_match(alive + hyp_at, i, order)
                                   ? gram_find(w, h + i, order, w->hashes[hyp_at + i]) : NULL;
                alive[hyp_at + i] = g != NULL;
                if (g != NULL && ++g->hyp_count <= g->ref_max)
                    correct++;
            }
            for (Py_ssize_t k = 0; k < n_refs; k++) { /* which reference n-grams occur */
                Py_ssize_t grams = ref_len[k] >= order ? ref_len[k] - order + 1 : 0;
                for (Py_ssize_t i = 0; i < grams; i++) {
                    GramEntry *g = entry_at[ref_at[k] + i];
                    alive[ref_at[k] + i] = g != NULL && g->hyp_count > 0;
                }
            }
        }
        row[1 + order] = correct;
        row[1 + max_order + order] = total;
    }
    return 0;
}

/* row[0..n) as a list of ints (NULL with the error set). */
static PyObject *int_list(const Py_ssize_t *row, Py_ssize_t n) {
    PyObject *list = PyList_New(n);
    if (list == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyLong_FromSsize_t(row[i]);
        if (v == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, v);
    }
    return list;
}

/* The views of the texts of job i of a corpus (hypothesis, then its references). */
static int corpus_views(const Corpus *c, Py_ssize_t i, BleucliText **views, Py_ssize_t *cap) {
    Py_ssize_t n = c->ref_at[i + 1] - c->ref_at[i] + 1;
    if (n > *cap) {
        BleucliText *grown = PyMem_RawRealloc(*views, (size_t)n * sizeof(BleucliText));
        if (grown == NULL)
            return -1;
        *views = grown;
        *cap = n;
    }
    (*views)[0] = view(c->hyps.items[i]);
    for (Py_ssize_t k = 1; k < n; k++)
        (*views)[k] = view(c->refs.items[c->ref_at[i] + k - 1]);
    return 0;
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
    Workspace *w = bleucli_workspace_new();
    Py_ssize_t *row = PyMem_RawMalloc((size_t)(2 + 2 * max_order) * sizeof(Py_ssize_t));
    BleucliText *views = NULL;
    Py_ssize_t views_cap = 0;
    if (rows != NULL && (w == NULL || row == NULL)) {
        PyErr_NoMemory();
        Py_CLEAR(rows);
    }
    for (Py_ssize_t i = 0; rows != NULL && i < c.hyps.n; i++) {
        PyObject *list = NULL;
        if (corpus_views(&c, i, &views, &views_cap) < 0 ||
            bleucli_bleu_row(w, &views[0], views + 1, c.ref_at[i + 1] - c.ref_at[i], max_order,
                             0, row) < 0)
            PyErr_NoMemory();
        else
            list = int_list(row, 2 + 2 * max_order);
        if (list == NULL) {
            Py_CLEAR(rows);
            break;
        }
        PyList_SET_ITEM(rows, i, list);
    }
    PyMem_RawFree(views);
    PyMem_RawFree(row);
    bleucli_workspace_free(w);
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
   reference into row, one order at a time; the hypothesis count is reported as 0 where the
   reference has no n-gram of that order, as SacreBLEU does. seqs/lens: hypothesis chars,
   reference chars, hypothesis words, reference words; hashes: room for all of them. */
static int chrf_pair(Workspace *w, Py_ssize_t *const seqs[4], const Py_ssize_t lens[4],
                     uint64_t *const hashes[4], Py_ssize_t char_order, Py_ssize_t word_order,
                     Py_ssize_t *row) {
    for (int kind = 0; kind < 2; kind++) { /* characters, then words */
        Py_ssize_t orders = kind ? word_order : char_order;
        const Py_ssize_t *hyp = seqs[2 * kind], *ref = seqs[2 * kind + 1];
        Py_ssize_t hyp_len = lens[2 * kind], ref_len = lens[2 * kind + 1];
        uint64_t *hyp_hash = hashes[2 * kind], *ref_hash = hashes[2 * kind + 1];
        /* the alive flags and entries live beside the hashes (same offsets) */
        unsigned char *hyp_alive = w->alive + (hyp_hash - w->hashes);
        unsigned char *ref_alive = w->alive + (ref_hash - w->hashes);
        GramEntry **ref_entry = w->entry_at + (ref_hash - w->hashes);
        memset(hyp_hash, 0, (size_t)hyp_len * sizeof(uint64_t));
        memset(ref_hash, 0, (size_t)ref_len * sizeof(uint64_t));
        for (Py_ssize_t n = 1; n <= orders; n++) {
            Py_ssize_t ref_total = ref_len >= n ? ref_len - n + 1 : 0;
            Py_ssize_t hyp_total = hyp_len >= n ? hyp_len - n + 1 : 0, matches = 0;
            if (ref_total > 0 && hyp_total > 0) {
                if (ws_reset_grams(w, ref_total + hyp_total) < 0)
                    return -1;
                roll(ref_hash, ref, ref_len, n);
                for (Py_ssize_t i = 0; i < ref_total; i++) {
                    GramEntry *g = can_match(ref_alive, i, n)
                                       ? gram_entry(w, ref + i, n, ref_hash[i]) : NULL;
                    ref_entry[i] = g;
                    if (g != NULL)
                        g->ref_max++;
                }
                roll(hyp_hash, hyp, hyp_len, n);
                for (Py_ssize_t i = 0; i < hyp_total; i++) {
                    GramEntry *g = can_match(hyp_alive, i, n)
                                       ? gram_find(w, hyp + i, n, hyp_hash[i]) : NULL;
                    hyp_alive[i] = g != NULL;
                    if (g != NULL && ++g->hyp_count <= g->ref_max)
                        matches++;
                }
                for (Py_ssize_t i = 0; i < ref_total; i++)
                    ref_alive[i] = ref_entry[i] != NULL && ref_entry[i]->hyp_count > 0;
            } else {
                /* no n-gram of this order on one side: none of a longer order either */
                roll(ref_hash, ref, ref_len, n);
                roll(hyp_hash, hyp, hyp_len, n);
                memset(hyp_alive, 0, (size_t)hyp_len);
                memset(ref_alive, 0, (size_t)ref_len);
            }
            Py_ssize_t k = (kind ? char_order : 0) + n - 1;
            row[3 * k] = ref_total ? hyp_total : 0;
            row[3 * k + 1] = ref_total;
            row[3 * k + 2] = matches;
        }
    }
    return 0;
}

int bleucli_chrf_rows(Workspace *w, const BleucliText *hyp, const BleucliText *refs,
                      Py_ssize_t n_refs, Py_ssize_t char_order, Py_ssize_t word_order,
                      int whitespace, Py_ssize_t *rows) {
    if (ws_prepare(w, 0, n_refs) < 0)
        return -1;
    Py_ssize_t chars = 0;
    for (Py_ssize_t k = 0; k <= n_refs; k++) {
        if (load_text(w, k, k == 0 ? hyp : &refs[k - 1], 0) < 0)
            return -1;
        chars += w->buffers[k].len;
    }
    /* ids: chars and words of every text (words at most twice the characters) */
    if (ws_scratch(w, 3 * chars + 8) < 0 || ws_prepare(w, 2 * chars + 1, n_refs) < 0)
        return -1;
    Py_ssize_t *ids = w->scratch;
    uint64_t *hashes = w->hashes;
    Py_ssize_t offset = 0;
    Py_ssize_t *hyp_chars = ids + offset;
    Py_ssize_t hyp_nchars = chrf_char_ids(&w->buffers[0], whitespace, hyp_chars);
    offset += hyp_nchars;
    Py_ssize_t *hyp_words = ids + offset;
    Py_ssize_t hyp_nwords = word_order ? split_ids(w, 0, hyp_words, 1) : 0;
    offset += hyp_nwords;
    Py_ssize_t width = 3 * (char_order + word_order);
    for (Py_ssize_t k = 1; k <= n_refs; k++) {
        Py_ssize_t *ref_chars = ids + offset;
        Py_ssize_t ref_nchars = chrf_char_ids(&w->buffers[k], whitespace, ref_chars);
        Py_ssize_t *ref_words = ref_chars + ref_nchars;
        Py_ssize_t ref_nwords = word_order ? split_ids(w, k, ref_words, 1) : 0;
        Py_ssize_t *const seqs[4] = {hyp_chars, ref_chars, hyp_words, ref_words};
        const Py_ssize_t lens[4] = {hyp_nchars, ref_nchars, hyp_nwords, ref_nwords};
        uint64_t *const seq_hashes[4] = {hashes + (hyp_chars - ids), hashes + (ref_chars - ids),
                                         hashes + (hyp_words - ids), hashes + (ref_words - ids)};
        if (chrf_pair(w, seqs, lens, seq_hashes, char_order, word_order,
                      rows + (k - 1) * width) < 0)
            return -1;
    }
    return 0;
}

int bleucli_word_ids(Workspace *w, const BleucliText *texts, Py_ssize_t n, int tok13a,
                     int chrf_words, const Py_ssize_t **ids, Py_ssize_t *lens) {
    if (ws_prepare(w, 0, n) < 0)
        return -1;
    Py_ssize_t total = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        if (load_text(w, k, &texts[k], tok13a) < 0)
            return -1;
        total += w->buffers[k].len + 1; /* chrF's words: at most one per character */
    }
    if (ws_prepare(w, total + 1, n) < 0 || ws_scratch(w, total + 1) < 0)
        return -1;
    Py_ssize_t offset = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        lens[k] = split_ids(w, k, w->scratch + offset, chrf_words);
        ids[k] = w->scratch + offset;
        offset += lens[k];
    }
    return 0;
}

static PyObject *chrf_stats(PyObject *self, PyObject *args) {
    PyObject *hyp_list, *ref_list;
    Py_ssize_t char_order, word_order;
    int whitespace;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!nnp:chrf_stats", &PyList_Type, &hyp_list, &PyList_Type,
                          &ref_list, &char_order, &word_order, &whitespace))
        return NULL;
    /* the ranges first: their sum is only formed once neither can overflow it */
    if (char_order < 0 || word_order < 0 || char_order > MAX_ORDER || word_order > MAX_ORDER ||
        char_order + word_order == 0) {
        PyErr_SetString(PyExc_ValueError, "chrf_stats(): orders must be in 0..1000, not both 0");
        return NULL;
    }
    Corpus c;
    if (own_corpus(hyp_list, ref_list, &c, "chrf_stats") < 0)
        return NULL;
    Py_ssize_t width = 3 * (char_order + word_order), most = 1;
    for (Py_ssize_t i = 0; i < c.hyps.n; i++)
        if (c.ref_at[i + 1] - c.ref_at[i] > most)
            most = c.ref_at[i + 1] - c.ref_at[i];
    PyObject *out = PyList_New(c.hyps.n);
    Workspace *w = bleucli_workspace_new();
    Py_ssize_t *rows = PyMem_RawMalloc((size_t)(most * width) * sizeof(Py_ssize_t));
    BleucliText *views = NULL;
    Py_ssize_t views_cap = 0;
    if (out != NULL && (w == NULL || rows == NULL)) {
        PyErr_NoMemory();
        Py_CLEAR(out);
    }
    for (Py_ssize_t i = 0; out != NULL && i < c.hyps.n; i++) {
        Py_ssize_t n_refs = c.ref_at[i + 1] - c.ref_at[i];
        if (corpus_views(&c, i, &views, &views_cap) < 0 ||
            bleucli_chrf_rows(w, &views[0], views + 1, n_refs, char_order, word_order,
                              whitespace, rows) < 0) {
            PyErr_NoMemory();
            Py_CLEAR(out);
            break;
        }
        PyObject *per_ref = PyList_New(n_refs);
        for (Py_ssize_t k = 0; per_ref != NULL && k < n_refs; k++) {
            PyObject *row = int_list(rows + k * width, width);
            if (row == NULL)
                Py_CLEAR(per_ref);
            else
                PyList_SET_ITEM(per_ref, k, row);
        }
        if (per_ref == NULL) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, i, per_ref);
    }
    PyMem_RawFree(views);
    PyMem_RawFree(rows);
    bleucli_workspace_free(w);
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
    PyMem_RawFree(b1[0]); PyMem_RawFree(b1[1]);
    PyMem_RawFree(b2[0]); PyMem_RawFree(b2[1]);
    PyMem_RawFree(b4[0]); PyMem_RawFree(b4[1]);
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


static PyMethodDef methods[] = {
    {"kendall_counts", bleucli_kendall_counts, METH_VARARGS,
     "kendall_counts(metric, draws, n, perm, new_run, starts, groups, threads): per draw and "
     "group, int64 [discordant, metric-tied, both-tied] pair counts (meta-evaluation)."},
    {"mwer_segment", bleucli_mwer_segment, METH_VARARGS,
     "mwer_segment(hyp, rows, n_lines): words per reference line (int32 ids as bytes; rows: "
     "the lines' ids, each line followed by -1), by minimum-WER alignment."},
    {"batch_aligned", bleucli_batch_aligned, METH_VARARGS,
     "batch_aligned(metric, hyps, streams, options, tok13a, threads, out): the sentence "
     "score of hyps[j] against streams[k][j] (None: missing) into out[j] (float64)."},
    {"batch_pairwise", bleucli_batch_pairwise, METH_VARARGS,
     "batch_pairwise(metric, texts, groups, members, options, tok13a, threads, out): the "
     "score of every hypothesis of a group against every single reference of it, row-major."},
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
    init_ascii_class();
    PyObject *m = PyModule_Create(&module);
    /* the sources this core was built from (setup.py), checked against a source checkout */
    if (m != NULL && PyModule_AddStringConstant(m, "SOURCE_HASH", BLEUCLI_SOURCE_HASH) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
