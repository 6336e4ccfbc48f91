/*
 * What the two batch engines share (_native_batch.c: pairwise groups and the general
 * aligned path; _native_aligned.c: aligned jobs over prepared texts): the options of a
 * call, and each metric's score from its statistics, operation for operation as
 * bleucli.metrics computes it.
 */
#ifndef BLEUCLI_NATIVE_BATCH_H
#define BLEUCLI_NATIVE_BATCH_H

#include "_native.h"
#include <math.h>

#ifndef _WIN32
#include <pthread.h>
#define HAVE_THREADS 1
#else
#define HAVE_THREADS 0
#endif

enum { METRIC_BLEU = 0, METRIC_CHRF = 1, METRIC_TER = 2 };
enum { SMOOTH_NONE = 0, SMOOTH_FLOOR = 1, SMOOTH_ADD_K = 2, SMOOTH_EXP = 3 };
/* What went wrong in a thread, reported once the threads are joined. */
enum { BATCH_OK = 0, BATCH_NO_MEMORY = 1, BATCH_TER = 2 };

typedef struct {
    int metric, tok13a;
    /* BLEU */
    Py_ssize_t max_order;
    int smooth, effective_order;
    double smooth_value;
    /* chrF */
    Py_ssize_t char_order, word_order;
    long beta;
    int whitespace, eps_smoothing;
    /* statistics per job: BLEU 2 + 2 orders, chrF 3 per order */
    Py_ssize_t n_orders, width;
} Options;

/* ------------------------------------------------------------------------------------ */
/* Scores from statistics, operation for operation as bleucli.metrics computes them.     */

/* Python's sum() of floats: Neumaier's compensated summation from Python 3.12 on, plain
   left-to-right addition before (BLEU's geometric mean goes through it). */
static inline double python_sum(const double *x, Py_ssize_t n) {
    if (n == 0)
        return 0.0;
    double total = x[0];
#if PY_VERSION_HEX >= 0x030C0000
    double c = 0.0;
    for (Py_ssize_t i = 1; i < n; i++) {
        double t = total + x[i];
        if (fabs(total) >= fabs(x[i]))
            c += (total - t) + x[i];
        else
            c += (x[i] - t) + total;
        total = t;
    }
    if (c != 0.0 && isfinite(c))
        total += c;
#else
    for (Py_ssize_t i = 1; i < n; i++)
        total += x[i];
#endif
    return total;
}

/* compute_bleu() of bleucli.metrics.bleu from a statistics row; `work` holds 3 * order. */
static inline double bleu_score(const Options *o, const Py_ssize_t *row, double *work) {
    Py_ssize_t order = o->max_order, sys_len = row[0], ref_len = row[1];
    double *correct = work, *total = work + order, *precisions = work + 2 * order;
    double bp = 1.0;
    if (sys_len < ref_len)
        bp = sys_len > 0 ? exp(1.0 - (double)ref_len / (double)sys_len) : 0.0;
    int any = 0;
    for (Py_ssize_t n = 0; n < order; n++) {
        correct[n] = (double)row[2 + n];
        total[n] = (double)row[2 + order + n];
        precisions[n] = 0.0;
        any |= row[2 + n] != 0;
    }
    if (!any)
        return 0.0;
    double exp_factor = 1.0;
    Py_ssize_t eff_order = order;
    for (Py_ssize_t n = 1; n <= order; n++) {
        if (o->smooth == SMOOTH_ADD_K && n > 1) {
            correct[n - 1] += o->smooth_value;
            total[n - 1] += o->smooth_value;
        }
        if (total[n - 1] == 0.0)
            break;
        if (o->effective_order)
            eff_order = n;
        if (correct[n - 1] == 0.0) {
            if (o->smooth == SMOOTH_EXP) {
                exp_factor *= 2;
                precisions[n - 1] = 100.0 / (exp_factor * total[n - 1]);
            } else if (o->smooth == SMOOTH_FLOOR) {
                precisions[n - 1] = 100.0 * o->smooth_value / total[n - 1];
            }
        } else {
            precisions[n - 1] = 100.0 * correct[n - 1] / total[n - 1];
        }
    }
    /* a zero precision enters the mean as -9999999999: the score is 0 (exp underflows) */
    for (Py_ssize_t n = 0; n < eff_order; n++) {
        if (precisions[n] == 0.0)
            return bp * 0.0;
        precisions[n] = log(precisions[n]);
    }
    return bp * exp(python_sum(precisions, eff_order) / (double)eff_order);
}

/* f_score() of bleucli.metrics.chrf over [hyp, ref, match] triples. */
static inline double chrf_score(const Options *o, const Py_ssize_t *stats) {
    const double eps = 1e-16;
    double factor = (double)(o->beta * o->beta), score = 0.0, avg_prec = 0.0, avg_rec = 0.0;
    Py_ssize_t effective = 0;
    for (Py_ssize_t i = 0; i < o->n_orders; i++) {
        Py_ssize_t n_hyp = stats[3 * i], n_ref = stats[3 * i + 1], n_match = stats[3 * i + 2];
        double prec = n_hyp > 0 ? (double)n_match / (double)n_hyp : eps;
        double rec = n_ref > 0 ? (double)n_match / (double)n_ref : eps;
        double denom = factor * prec + rec;
        score += denom > 0 ? (1.0 + factor) * prec * rec / denom : eps;
        if (n_hyp > 0 && n_ref > 0) {
            avg_prec += prec;
            avg_rec += rec;
            effective++;
        }
    }
    if (o->eps_smoothing)
        return 100.0 * score / (double)o->n_orders;
    if (effective == 0) {
        avg_prec = avg_rec = 0.0;
    } else {
        avg_prec /= (double)effective;
        avg_rec /= (double)effective;
    }
    if (avg_prec + avg_rec != 0.0)
        return 100.0 * ((1.0 + factor) * avg_prec * avg_rec / ((factor * avg_prec) + avg_rec));
    return 0.0;
}

/* TER's score from the fewest edits and the summed reference lengths of n_refs references. */
static inline double ter_score(long long edits, long long ref_lengths, Py_ssize_t n_refs) {
    double ref_length = (double)ref_lengths / (double)n_refs;
    if (ref_length > 0)
        return 100.0 * ((double)edits / ref_length);
    return edits > 0 ? 100.0 * 1.0 : 100.0 * 0.0;
}

/* Flags of batch_aligned: 13a-tokenise the texts (BLEU), lowercase them (str.lower); for
   the tests, which compare the engine's three ways of scoring a job: no match sets (the
   n-gram tables for every job), or the per-call API's statistics functions for every job;
   and the match sets' copy built for any x86-64 where the CPU has a bit-count instruction. */
#define BATCH_TOK13A 1
#define BATCH_LOWER 2
#define BATCH_NO_SETS 4
#define BATCH_GENERAL 8
#define BATCH_PLAIN 16

/* Reads of memory the caches do not hold yet, started this many items ahead of their use. */
#define PREFETCH_AHEAD 8
static inline void bleucli_prefetch(const void *p) {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch(p);
#else
    (void)p;
#endif
}

/* Work handed out to threads in chunks, and the first error any of them met. */
typedef struct {
    Py_ssize_t next, n_items;
    int error;
    long long ter_code;
    Py_ssize_t failed_job, failed_words[2];
#if HAVE_THREADS
    pthread_mutex_t lock;
#endif
} Sharing;

/* The next chunk of at most `chunk` items into [*start, *stop); 0 when none is left or a
   thread has failed. */
int bleucli_claim(Sharing *s, Py_ssize_t chunk, Py_ssize_t *start, Py_ssize_t *stop);

/* Record a failure (the first one wins); words: the line pair TER refused, or NULL. */
void bleucli_fail(Sharing *s, int error, long long ter_code, Py_ssize_t job,
                  const Py_ssize_t *words);

/* After the threads: None, or NULL with the Python error for what failed. */
PyObject *bleucli_batch_result(const Sharing *s);

/* *ptr with room for `need` items of `size` bytes (grown by half again); 0 or -1. */
int bleucli_grow(void **ptr, Py_ssize_t *cap, Py_ssize_t need, size_t size);

/* The options tuple of a metric's batch_spec() into o; 0, or -1 with the error set. */
int bleucli_batch_options(int metric, PyObject *options, int tok13a, Options *o);

/* Whether view is a writable float64 buffer of n values; 0, or -1 with the error set. */
int bleucli_out_buffer(Py_buffer *view, Py_ssize_t n);

/* Drop the references held in objects[0..n) (NULL entries skipped), then the array. */
void bleucli_release_objects(PyObject **objects, Py_ssize_t n);

#endif
