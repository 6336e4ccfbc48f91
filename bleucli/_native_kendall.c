/*
 * Kendall's tau pair counts for meta-evaluation's permutation tests: the same gold vector
 * against many metric vectors (draws), group by group. The pure-Python specification is
 * bleucli/metaeval/stats.py (sorted_counts); both give the same integers.
 *
 * Per draw and group, the entries come in gold order (the caller's permutation), with the
 * runs of equal gold scores marked. Each run is sorted by metric score, which lays the
 * entries out by (gold, metric): pairs tied in both are then neighbours. A merge sort of
 * the metric scores over the whole group counts the discordant pairs (a larger metric
 * score before a smaller one; gold ties cannot be discordant, being sorted already), and
 * the sorted result gives the pairs tied in the metric. Knight's algorithm, as scipy's.
 *
 * Draws are shared out among threads in fixed blocks; every count is an integer, so any
 * number of threads gives the same result. Inputs are copied before the GIL is released.
 */
#include "_native.h"

#include <string.h>

#if !defined(_WIN32)
#include <pthread.h>
#define HAVE_THREADS 1
#else
#define HAVE_THREADS 0
#endif

typedef struct {
    const double *metric;    /* draws x n */
    const int64_t *perm;     /* n: entries in (group, gold) order */
    const uint8_t *new_run;  /* n: 1 where a run of equal gold scores starts (in perm order) */
    const int64_t *starts;   /* groups + 1 offsets into perm */
    Py_ssize_t n, draws, groups, max_group;
    int64_t *out;            /* draws x groups x 3: discordant, metric ties, both ties */
    Py_ssize_t next;         /* next draw to claim */
    int failed;
#if HAVE_THREADS
    pthread_mutex_t lock;
#endif
} Job;

/* Sort a[0..n) ascending (tmp: n scratch; the result is left in a), counting the pairs
   i < j with a[i] > a[j]: insertion sort of short runs (each shift is one such pair), then
   merges back and forth between the two buffers. Comparisons are `<=`/`>`, so the sort is
   stable and never undefined, whatever the values (NaN too). */
#define SHORT_RUN 24
static int64_t merge_count(double *a, double *tmp, Py_ssize_t n) {
    int64_t inversions = 0;
    for (Py_ssize_t lo = 0; lo < n; lo += SHORT_RUN) {
        Py_ssize_t hi = lo + SHORT_RUN < n ? lo + SHORT_RUN : n;
        for (Py_ssize_t i = lo + 1; i < hi; i++) {
            double v = a[i];
            Py_ssize_t j = i;
            while (j > lo && a[j - 1] > v) {
                a[j] = a[j - 1];
                j--;
            }
            inversions += i - j;
            a[j] = v;
        }
    }
    double *from = a, *to = tmp;
    for (Py_ssize_t width = SHORT_RUN; width < n; width *= 2) {
        for (Py_ssize_t lo = 0; lo < n; lo += 2 * width) {
            Py_ssize_t mid = lo + width < n ? lo + width : n;
            Py_ssize_t hi = mid + width < n ? mid + width : n;
            Py_ssize_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                if (from[i] <= from[j]) {
                    to[k++] = from[i++];
                } else {
                    inversions += mid - i;
                    to[k++] = from[j++];
                }
            }
            while (i < mid)
                to[k++] = from[i++];
            while (j < hi)
                to[k++] = from[j++];
        }
        double *swap = from;
        from = to;
        to = swap;
    }
    if (from != a)
        memcpy(a, from, (size_t)n * sizeof(double));
    return inversions;
}

static int64_t tie_pairs(const double *a, Py_ssize_t n) {
    int64_t pairs = 0, run = 1;
    for (Py_ssize_t i = 1; i <= n; i++) {
        if (i < n && a[i] == a[i - 1]) {
            run++;
        } else {
            pairs += run * (run - 1) / 2;
            run = 1;
        }
    }
    return pairs;
}

static void count_draw(const Job *job, Py_ssize_t d, double *values, double *tmp) {
    const double *metric = job->metric + d * job->n;
    for (Py_ssize_t g = 0; g < job->groups; g++) {
        Py_ssize_t lo = (Py_ssize_t)job->starts[g], size = (Py_ssize_t)job->starts[g + 1] - lo;
        for (Py_ssize_t k = 0; k < size; k++)
            values[k] = metric[job->perm[lo + k]];
        int64_t both = 0;
        for (Py_ssize_t k = 0; k < size;) {
            Py_ssize_t end = k + 1;
            while (end < size && !job->new_run[lo + end])
                end++;
            merge_count(values + k, tmp + k, end - k);
            both += tie_pairs(values + k, end - k);
            k = end;
        }
        int64_t *out = job->out + (d * job->groups + g) * 3;
        out[0] = merge_count(values, tmp, size);
        out[1] = tie_pairs(values, size);
        out[2] = both;
    }
}

static void *kendall_worker(void *arg) {
    Job *job = arg;
    double *values = PyMem_RawMalloc((size_t)(job->max_group > 0 ? job->max_group : 1) * 2 *
                                     sizeof(double));
    if (values == NULL) {
#if HAVE_THREADS
        pthread_mutex_lock(&job->lock);
#endif
        job->failed = 1;
#if HAVE_THREADS
        pthread_mutex_unlock(&job->lock);
#endif
        return NULL;
    }
    double *tmp = values + (job->max_group > 0 ? job->max_group : 1);
    for (;;) {
        Py_ssize_t start, stop;
#if HAVE_THREADS
        pthread_mutex_lock(&job->lock);
#endif
        start = job->next;
        stop = start + 4 < job->draws ? start + 4 : job->draws;
        job->next = stop;
        int failed = job->failed;
#if HAVE_THREADS
        pthread_mutex_unlock(&job->lock);
#endif
        if (start >= stop || failed)
            break;
        for (Py_ssize_t d = start; d < stop; d++)
            count_draw(job, d, values, tmp);
    }
    PyMem_RawFree(values);
    return NULL;
}

/* Whether a buffer's struct format is one of `formats` (native, or '=' '@' prefixed). */
static int format_is(const char *format, const char *formats) {
    if (format == NULL)
        format = "B";
    if (format[0] == '@' || format[0] == '=')
        format++;
    return format[0] != '\0' && format[1] == '\0' && strchr(formats, format[0]) != NULL;
}

/* A C-contiguous buffer of exactly `count` items of `itemsize` bytes whose format is one of
   `formats` (float64 read as float64 only: an int64 array is refused, not reinterpreted),
   copied before anything is checked in it. */
static void *copied(PyObject *object, Py_ssize_t count, Py_ssize_t itemsize, const char *formats,
                    const char *what) {
    if (count < 0 || count > PY_SSIZE_T_MAX / itemsize) {
        PyErr_Format(PyExc_ValueError, "kendall_counts: %s is too large", what);
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(object, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return NULL;
    void *copy = NULL;
    if (view.len != count * itemsize || view.itemsize != itemsize ||
        !format_is(view.format, formats)) {
        PyErr_Format(PyExc_ValueError,
                     "kendall_counts: %s must hold %zd items of %zd bytes (format %s)", what,
                     count, itemsize, formats);
    } else {
        copy = PyMem_RawMalloc(view.len > 0 ? (size_t)view.len : 1);
        if (copy == NULL)
            PyErr_NoMemory();
        else if (view.len > 0)
            memcpy(copy, view.buf, (size_t)view.len);
    }
    PyBuffer_Release(&view);
    return copy;
}

/* kendall_counts(metric, draws, n, perm, new_run, starts, threads) -> bytes of int64
   (draws x groups x 3): discordant pairs, metric-tied pairs, pairs tied in both. */
PyObject *bleucli_kendall_counts(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *metric_obj, *perm_obj, *run_obj, *starts_obj;
    Py_ssize_t draws, n, groups;
    int threads;
    if (!PyArg_ParseTuple(args, "OnnOOOni", &metric_obj, &draws, &n, &perm_obj, &run_obj,
                          &starts_obj, &groups, &threads))
        return NULL;
    /* every size the call forms, checked before it is formed: the metric's draws x n x 8
       bytes, the counts' draws x groups x 3 x 8, the groups' (groups + 1) x 8; a size the
       buffers do not back is refused by their length check, before any loop runs */
    if (draws < 0 || n < 0 || groups < 0 || threads < 1 || groups > PY_SSIZE_T_MAX / 8 - 1 ||
        (n > 0 && draws > PY_SSIZE_T_MAX / 8 / n) ||
        (groups > 0 && draws > PY_SSIZE_T_MAX / 24 / groups)) {
        PyErr_SetString(PyExc_ValueError, "kendall_counts: sizes out of range");
        return NULL;
    }
    Job job;
    memset(&job, 0, sizeof(job));
    job.n = n;
    job.draws = draws;
    job.groups = groups;
    double *metric = copied(metric_obj, draws * n, 8, "d", "metric");
    int64_t *perm = metric ? copied(perm_obj, n, 8, "qlL", "perm") : NULL;
    uint8_t *new_run = perm ? copied(run_obj, n, 1, "B?bc", "new_run") : NULL;
    int64_t *starts = new_run ? copied(starts_obj, groups + 1, 8, "qlL", "starts") : NULL;
    int64_t *out = NULL;
    PyObject *result = NULL;
    if (starts == NULL)
        goto done;
    if (starts[0] != 0 || starts[groups] != n) {
        PyErr_SetString(PyExc_ValueError, "kendall_counts: starts must run from 0 to n");
        goto done;
    }
    for (Py_ssize_t g = 0; g < groups; g++) {
        if (starts[g + 1] < starts[g]) {
            PyErr_SetString(PyExc_ValueError, "kendall_counts: starts must not decrease");
            goto done;
        }
        if (starts[g + 1] - starts[g] > job.max_group)
            job.max_group = (Py_ssize_t)(starts[g + 1] - starts[g]);
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        if (perm[k] < 0 || perm[k] >= n) {
            PyErr_SetString(PyExc_ValueError, "kendall_counts: perm out of range");
            goto done;
        }
    }
    out = PyMem_RawMalloc((size_t)(draws * groups * 3 > 0 ? draws * groups * 3 : 1) * 8);
    if (out == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    job.metric = metric;
    job.perm = perm;
    job.new_run = new_run;
    job.starts = starts;
    job.out = out;
    Py_BEGIN_ALLOW_THREADS
#if HAVE_THREADS
    pthread_t ids[256];
    int started = 0;
    pthread_mutex_init(&job.lock, NULL);
    for (int k = 1; k < threads && k < 256 && k < draws; k++) {
        if (pthread_create(&ids[started], NULL, kendall_worker, &job) != 0)
            break; /* fewer threads: the same counts */
        started++;
    }
    kendall_worker(&job);
    for (int k = 0; k < started; k++)
        pthread_join(ids[k], NULL);
    pthread_mutex_destroy(&job.lock);
#else
    kendall_worker(&job);
#endif
    Py_END_ALLOW_THREADS
    if (job.failed)
        PyErr_NoMemory();
    else
        result = PyBytes_FromStringAndSize((const char *)out, (Py_ssize_t)(draws * groups * 3 * 8));
done:
    PyMem_RawFree(metric);
    PyMem_RawFree(perm);
    PyMem_RawFree(new_run);
    PyMem_RawFree(starts);
    PyMem_RawFree(out);
    return result;
}
