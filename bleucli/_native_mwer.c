/*
 * Minimum-WER segmentation (bleucli.mwer's engine): the hypothesis' word ids are cut into
 * as many segments as there are reference lines, minimising the total edit distance.
 *
 * One Levenshtein column per hypothesis word runs down all reference lines at once, each
 * line followed by a boundary row. A boundary row closes its line: its cost is the best
 * cost of ending that line at the current hypothesis word, and the next line starts from
 * it. Every cell carries the hypothesis position where its line's segment started, and
 * each boundary row records it in a (words x lines) table, from which the segments are read
 * back from the end. Ties are broken as mwerSegmenter breaks them (a substitution only when
 * strictly cheaper than both alternatives, then a deletion before an insertion), and the
 * column before the first word counts boundary rows as deletions, as mwerSegmenter's does,
 * so that the segments are identical to mweralign 1.4.1's. The Python engine in
 * bleucli/mwer.py is the specification.
 *
 * Memory: 4 bytes per (hypothesis word x reference line) plus two columns; the GIL is
 * released while the table is filled, over copies of the caller's buffers.
 */
#include "_native.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The boundary marker: no word id is negative. */
#define BOUNDARY (-1)

typedef struct {
    int64_t cost;
    int32_t start;
} Cell;

/* Fill counts[0..n_lines) from hyp[0..n_hyp) and the lines' ids (rows, with markers).
   0, or -1 without memory. */
static int segment(const int32_t *hyp, Py_ssize_t n_hyp, const int32_t *rows, Py_ssize_t n_rows,
                   Py_ssize_t n_lines, int32_t *counts) {
    Cell *column = malloc((size_t)(n_rows + 1) * sizeof(Cell));
    int32_t *starts = malloc((size_t)n_hyp * (size_t)n_lines * sizeof(int32_t));
    if (column == NULL || starts == NULL) {
        free(column);
        free(starts);
        return -1;
    }
    for (Py_ssize_t i = 0; i <= n_rows; i++) {
        column[i].cost = i; /* boundary rows count too, as in mwerSegmenter */
        column[i].start = 0;
    }
    for (Py_ssize_t j = 1; j <= n_hyp; j++) {
        const int32_t word = hyp[j - 1];
        int32_t *ends = starts + (size_t)(j - 1) * (size_t)n_lines;
        Cell above = {j, 0}; /* this column's cell one row up */
        Py_ssize_t line = 0;
        column[0].cost = j - 1;
        column[0].start = 0;
        for (Py_ssize_t i = 1; i <= n_rows; i++) {
            const int32_t ref = rows[i - 1];
            Cell here;
            if (ref == BOUNDARY) {
                ends[line++] = above.start;
                here.cost = above.cost;
                here.start = (int32_t)j;
            } else {
                const int64_t del = above.cost + 1;
                const int64_t ins = column[i].cost + 1;
                const int64_t sub = column[i - 1].cost + (ref != word);
                if (sub < del && sub < ins) {
                    here.cost = sub;
                    here.start = column[i - 1].start;
                } else if (sub >= del && del <= ins) {
                    here = above;
                    here.cost = del;
                } else {
                    here.cost = ins;
                    here.start = column[i].start;
                }
            }
            column[i - 1] = above;
            above = here;
        }
        column[n_rows] = above;
    }
    /* read the segments back from the last word and line */
    Py_ssize_t end = n_hyp;
    for (Py_ssize_t s = n_lines - 1; s >= 0; s--) {
        const int32_t start = starts[(size_t)(end - 1) * (size_t)n_lines + (size_t)s];
        if (s == 0) {
            counts[0] = (int32_t)end;
        } else {
            counts[s] = (int32_t)(end - start);
            end = start;
        }
        if (end == 0 && s > 0) { /* the rest of the lines start at the first word */
            for (Py_ssize_t t = s - 1; t >= 0; t--) counts[t] = 0;
            break;
        }
    }
    free(column);
    free(starts);
    return 0;
}

PyObject *bleucli_mwer_segment(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer hyp, rows;
    Py_ssize_t n_lines;
    if (!PyArg_ParseTuple(args, "y*y*n:mwer_segment", &hyp, &rows, &n_lines)) return NULL;
    PyObject *result = NULL;
    int32_t *own = NULL, *counts = NULL;
    Py_ssize_t n_hyp = hyp.len / (Py_ssize_t)sizeof(int32_t);
    Py_ssize_t n_rows = rows.len / (Py_ssize_t)sizeof(int32_t);
    if (hyp.len % (Py_ssize_t)sizeof(int32_t) || rows.len % (Py_ssize_t)sizeof(int32_t) ||
        n_hyp < 1 || n_lines < 1 || n_hyp > INT32_MAX - 1 ||
        (size_t)n_lines > SIZE_MAX / sizeof(int32_t) / (size_t)n_hyp) {
        PyErr_SetString(PyExc_ValueError,
                        "mwer_segment: int32 word ids, at least one word and one line");
        goto done;
    }
    /* both inputs copied, then checked and used: a writable buffer (bytearray, numpy) could
       be changed by another thread once the GIL is released */
    counts = PyMem_Malloc((size_t)n_lines * sizeof(int32_t));
    own = PyMem_Malloc((size_t)(n_hyp + n_rows) * sizeof(int32_t));
    if (counts == NULL || own == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(own, hyp.buf, (size_t)n_hyp * sizeof(int32_t));
    memcpy(own + n_hyp, rows.buf, (size_t)n_rows * sizeof(int32_t));
    {
        /* every line closed by exactly one boundary row, the last row closing the last */
        const int32_t *r = own + n_hyp;
        Py_ssize_t boundaries = 0;
        for (Py_ssize_t i = 0; i < n_rows; i++) boundaries += (r[i] == BOUNDARY);
        if (n_rows < 1 || boundaries != n_lines || r[n_rows - 1] != BOUNDARY) {
            PyErr_SetString(PyExc_ValueError,
                            "mwer_segment: rows must hold n_lines lines, each ending with -1");
            goto done;
        }
    }
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = segment(own, n_hyp, own + n_hyp, n_rows, n_lines, counts);
    Py_END_ALLOW_THREADS
    if (status < 0) {
        PyErr_NoMemory();
    } else {
        result = PyList_New(n_lines);
        for (Py_ssize_t s = 0; result != NULL && s < n_lines; s++) {
            PyObject *count = PyLong_FromLong(counts[s]);
            if (count == NULL) Py_CLEAR(result);
            else PyList_SET_ITEM(result, s, count);
        }
    }
done:
    PyMem_Free(counts);
    PyMem_Free(own);
    PyBuffer_Release(&hyp);
    PyBuffer_Release(&rows);
    return result;
}
