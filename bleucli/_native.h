/*
 * What bleucli's compiled sources share: the TER edit count (in _native_ter.c) that the
 * Python wrapper and the batch engine call, and its error codes.
 */
#ifndef BLEUCLI_NATIVE_H
#define BLEUCLI_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

/* Hash steps shared by the token and n-gram tables of every compiled file: mix folds one
   value into a running hash; spread is MurmurHash3's finaliser, so that every input bit
   reaches the low bits a table slot is taken from (a multiplicative hash alone carries bits
   upwards only, and keys differing in high bits would share one chain). */
static inline uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

static inline uint64_t spread(uint64_t h) {
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
}

/* A str's code units, read by code that runs without the GIL (the caller owns the str). */
typedef struct {
    int kind;
    const void *data;
    Py_ssize_t len;
} BleucliText;

/* Reusable scratch of the statistics functions (one per thread). */
typedef struct Workspace Workspace;
Workspace *bleucli_workspace_new(void);
void bleucli_workspace_free(Workspace *w);

/* BLEU's statistics [hyp_len, closest ref_len, correct_1..n, total_1..n] of hyp against
   refs[0..n_refs) into row; with tok13a the texts are first right-stripped and 13a-tokenised
   (else they are tokenised already: split on whitespace). 0, or -1 without memory. */
int bleucli_bleu_row(Workspace *w, const BleucliText *hyp, const BleucliText *refs,
                     Py_ssize_t n_refs, Py_ssize_t max_order, int tok13a, Py_ssize_t *row);

/* chrF's [hyp, ref, match] per character then word order, of hyp against each reference:
   n_refs rows of 3 * (char_order + word_order) values. 0, or -1 without memory. */
int bleucli_chrf_rows(Workspace *w, const BleucliText *hyp, const BleucliText *refs,
                      Py_ssize_t n_refs, Py_ssize_t char_order, Py_ssize_t word_order,
                      int whitespace, Py_ssize_t *rows);

/* Word ids (str.split() words, 13a-tokenised first with tok13a; chrF++'s words with
   chrf_words; one table for all n texts, so equal words get equal ids): ids[k][0..lens[k])
   point into the workspace, valid until its next use. 0 or -1. */
int bleucli_word_ids(Workspace *w, const BleucliText *texts, Py_ssize_t n, int tok13a,
                     int chrf_words, const Py_ssize_t **ids, Py_ssize_t *lens);

/* The words of one text (13a-tokenised first with tok13a; chrF++'s words with chrf_words):
   *n of them, word k being (*text)[bounds[2k] .. bounds[2k] + bounds[2k + 1]); valid until
   the workspace's next use. 0 or -1. */
int bleucli_tokens(Workspace *w, const BleucliText *t, int tok13a, int chrf_words,
                   const Py_UCS4 **text, const Py_ssize_t **bounds, Py_ssize_t *n);

/* A token of a text: its characters chars[start .. start + len) (see bleucli_hashed_tokens)
   and a hash of their code points: equal tokens have equal hashes whatever the width of the
   strings they come from. */
typedef struct {
    uint64_t hash;
    uint32_t start, len;
} BleucliToken;

enum { BLEUCLI_TOKENS_SPLIT = 0, BLEUCLI_TOKENS_13A = 1, BLEUCLI_TOKENS_CHRF = 2 };

/* Fill the character-class table the 13A tokens read; with the GIL held, before any thread
   asks for them (later calls return at once). */
void bleucli_fill_class_table(void);

/* The tokens of t into out (room for t->len + 1): str.split()'s words (SPLIT), 13a's tokens
   of the right-stripped text (13A, after bleucli_fill_class_table) or chrF++'s words (CHRF). *chars and *kind: where the
   tokens' characters are, t's own data, or the workspace's copy (until its next use) when
   13a had to rewrite the line. The count, or -1 (no memory, or 2**32 - 1 characters or
   more). */
Py_ssize_t bleucli_hashed_tokens(Workspace *w, const BleucliText *t, int mode,
                                 BleucliToken *out, const void **chars, int *kind);

/* chrF's characters of t (whitespace removed unless kept) into out (room for t->len). */
Py_ssize_t bleucli_chrf_chars(const BleucliText *t, int whitespace, uint32_t *out);

static inline BleucliText bleucli_view(PyObject *text) {
    BleucliText t = {PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text)};
    return t;
}

/* Errors of bleucli_ter_count (edit counts are >= 0). */
#define TER_NO_MEMORY (-1)
#define TER_TOO_LONG (-2)
#define TER_EMPTY_REFERENCE (-3)
#define TER_INTERNAL (-4)

/* The largest hypothesis x reference word product a pair may have (bleucli.metrics.ter
   checks the same bound first, with a message naming the line): beyond it the search's
   tables would take gigabytes. */
#define MAX_WORD_PAIRS 100000000LL

long long bleucli_ter_count(const Py_ssize_t *hyp, Py_ssize_t n_hyp,
                            const Py_ssize_t *ref, Py_ssize_t n_ref);

/* The same with the arrays of a reusable workspace (one per thread). */
typedef struct TerWork TerWork;
TerWork *bleucli_ter_work_new(void);
void bleucli_ter_work_free(TerWork *w);
long long bleucli_ter_count_in(TerWork *work, const Py_ssize_t *hyp, Py_ssize_t n_hyp,
                               const Py_ssize_t *ref, Py_ssize_t n_ref);

/* The Python exception for a TER_* error (with the GIL held); returns NULL. */
PyObject *bleucli_ter_error(long long code, Py_ssize_t n_hyp, Py_ssize_t n_ref);

PyObject *bleucli_ter_edits(PyObject *self, PyObject *args);

/* The batch engine (in _native_batch.c). */
PyObject *bleucli_batch_aligned(PyObject *self, PyObject *args);
PyObject *bleucli_kendall_counts(PyObject *self, PyObject *args);
PyObject *bleucli_batch_pairwise(PyObject *self, PyObject *args);

/* mwer_segment(hyp, rows, n_lines): minimum-WER segment lengths (bleucli/_native_mwer.c). */
PyObject *bleucli_mwer_segment(PyObject *self, PyObject *args);

#endif
