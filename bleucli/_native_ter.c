/*
 * TER's edit count (edits + shifts) for one hypothesis/reference pair, in C.
 *
 * A line-by-line port of bleucli/metrics/ter_edit.py, which is the specification (and
 * SacreBLEU's search, made faster without changing a result): the greedy shift search in
 * tercom's order with its limits, costs from Myers' bit-parallel edit distance whenever the
 * beam bound proves the beam cannot matter, the beam matrix (kept as bands) otherwise, and
 * tercom's tie-breaking in the back-trace. Words arrive as integer ids (equal words, equal
 * ids), bit vectors span as many 64-bit words as the reference needs.
 * Shortcuts give the specification's distances with less work: a shift candidate equals
 * the current hypothesis after the words it moves, so its rows stop there and end on the
 * hypothesis' distances from that row to the end (ensure_back for the beam, the reversed
 * Myers rows of ensure_tail for references of more than 64 words); and where the beam
 * could matter, a trace of Myers' rows that stays in the beam proves that it does not
 * (alignment_exact, trace_in_beam), so beam rows are computed only when a trace leaves it.
 */
#include "_native.h"
#include <math.h>
#include <stdint.h>
#include <string.h>

#define MAX_SHIFT_SIZE 10
#define MAX_SHIFT_DIST 50
#define BEAM_WIDTH 25
#define MAX_SHIFT_CANDIDATES 1000
#define INF 10000000000000000LL
/* References of more than 64 words: a candidate with more than this many rows left after
   its change ends them with the hypothesis' distances to the end (tail_distance). */
#define TAIL_MIN_ROWS 8

enum { NOP, SUB, INS, DEL, UNDEF };

typedef long long ll;
typedef Py_ssize_t idx;

typedef struct {
    idx n_hyp, n_ref, W, vocab;
    idx *ref, *hyp, *cand, *best;  /* reference, current hypothesis, a candidate, the best one */
    uint64_t *peq;                  /* vocab x W: reference positions of each word id */
    uint64_t *mask;                 /* W */
    idx *low, *high;                /* beam columns [low, high) per matrix row */
    ll safe_below;                  /* Myers distances below this are beam distances */
    uint64_t *states;               /* (n_hyp + 1) x 4W: pv, mv, ph, mh per row */
    ll *scores;                     /* (n_hyp + 1) Myers distances */
    uint64_t *cand_states;          /* (n_hyp + 1) x 4W: a candidate's rows, for trace_in_beam */
    ll *band;                       /* the current hypothesis' beam rows, band by band */
    idx *band_at;                   /* n_hyp + 1 offsets into band */
    int rows_ok;
    ll *back;                       /* beam distances from each cell to the end, as bands */
    int back_ok;
    uint64_t *peq_rev;              /* peq of the reversed reference */
    uint64_t *rev_states;           /* (n_hyp + 1) x 4W: ensure_tail's rows */
    ll *rev_scores;
    int tail_ok;
    ll *row_a, *row_b;              /* two full-width rows for a candidate's beam matrix */
    idx *pos_start, *pos_list;      /* reference positions per word id (CSR) */
    idx *align, *hyp_sums, *ref_sums, *ops;
    char *hyp_err, *ref_err;
    ll cost;
    int exact, aligned;
} Ter;


static void *alloc(size_t count, size_t size) {
    if (count == 0)
        count = 1;
    if (count > (size_t)PY_SSIZE_T_MAX / size)
        return NULL;
    void *p = PyMem_RawCalloc(count, size);
    return p;
}

/* The beam geometry of _beam_geometry(): column ranges and the out-of-beam bound. */
static void geometry(Ter *t) {
    idx n_ref = t->n_ref, n_hyp = t->n_hyp;
    double ratio = n_hyp ? (double)n_ref / (double)n_hyp : 1.0;
    ll beam = ratio / 2 > BEAM_WIDTH ? (ll)ceil(ratio / 2 + BEAM_WIDTH) : BEAM_WIDTH;
    t->low[0] = 0;
    t->high[0] = n_ref + 1;
    ll cheapest = INF;
    for (idx i = 1; i <= n_hyp; i++) {
        ll diagonal = (ll)floor((double)i * ratio);
        ll low = diagonal - beam > 0 ? diagonal - beam : 0;
        ll high = i == n_hyp ? n_ref + 1 : (n_ref + 1 < diagonal + beam ? n_ref + 1 : diagonal + beam);
        t->low[i] = (idx)low;
        t->high[i] = (idx)high;
        ll outside[2];
        int n_out = 0;
        if (low > 0)
            outside[n_out++] = i < low - 1 ? i : low - 1;
        if (high <= n_ref) {
            ll j = i > high ? i : high;
            outside[n_out++] = j < n_ref ? j : n_ref;
        }
        for (int k = 0; k < n_out; k++) {
            ll j = outside[k];
            ll a = i - j, b = (ll)(n_hyp - i) - (ll)(n_ref - j);
            ll bound = (a < 0 ? -a : a) + (b < 0 ? -b : b);
            if (bound < cheapest)
                cheapest = bound;
        }
    }
    t->safe_below = cheapest;
}

/* Myers' step for a reference that fits one machine integer of type T (myers_step's loop
   for k = 0, without carries): the vertical deltas *p, *m after a word whose positions in
   the reference are `e`; the horizontal ones into *h_p, *h_m; the change of the last cell
   (bit `top`). */
#define DEFINE_MYERS_WORD(NAME, T)                                                         \
    static inline ll NAME(T e, T mask, int top, T *p, T *m, T *h_p, T *h_m) {              \
        T xv = e | *m, xh = (((e & *p) + *p) ^ *p) | e;                                    \
        T hp = *m | (~(xh | *p) & mask), hm = *p & xh;                                     \
        T shifted_ph = ((hp << 1) | 1) & mask, shifted_mh = (hm << 1) & mask;              \
        *p = shifted_mh | (~(xv | shifted_ph) & mask);                                     \
        *m = shifted_ph & xv;                                                              \
        *h_p = hp;                                                                         \
        *h_m = hm;                                                                         \
        return (ll)((hp >> top) & 1) - (ll)((hm >> top) & 1); /* disjoint sets */          \
    }
DEFINE_MYERS_WORD(myers_word, uint64_t)
#ifdef __SIZEOF_INT128__
/* References of 65 to 128 words (most long ones) as one 128-bit integer: the compiler's
   add-with-carry and double shifts instead of myers_step's loop over words. */
typedef unsigned __int128 u128;
DEFINE_MYERS_WORD(myers_wide, u128)
static inline u128 load_wide(const uint64_t *w) { return ((u128)w[1] << 64) | w[0]; }
static inline void store_wide(uint64_t *w, u128 v) {
    w[0] = (uint64_t)v;
    w[1] = (uint64_t)(v >> 64);
}
#endif

/* One column of Myers' algorithm: the state after `word` from state `in` (pv, mv, ph, mh). */
static inline void myers_step(const Ter *t, const uint64_t *peq, idx word, const uint64_t *in,
                              ll in_score, uint64_t *out, ll *out_score) {
    idx W = t->W;
    if (W == 1) {
        out[0] = in[0];
        out[1] = in[1];
        *out_score = in_score + myers_word(peq[word], t->mask[0], (int)((t->n_ref - 1) % 64),
                                           &out[0], &out[1], &out[2], &out[3]);
        return;
    }
#ifdef __SIZEOF_INT128__
    if (W == 2) {
        u128 p = load_wide(in), m = load_wide(in + 2), h_p, h_m;
        *out_score = in_score + myers_wide(load_wide(peq + 2 * word), load_wide(t->mask),
                                           (int)(t->n_ref - 1), &p, &m, &h_p, &h_m);
        store_wide(out, p);
        store_wide(out + 2, m);
        store_wide(out + 4, h_p);
        store_wide(out + 6, h_m);
        return;
    }
#endif
    const uint64_t *eq = peq + word * W, *pv = in, *mv = in + W, *mask = t->mask;
    uint64_t *npv = out, *nmv = out + W, *ph = out + 2 * W, *mh = out + 3 * W;
    uint64_t carry = 0, ph_carry = 1, mh_carry = 0;
    ll score = in_score;
    idx top_word = (t->n_ref - 1) / 64;
    uint64_t top_bit = (uint64_t)1 << ((t->n_ref - 1) % 64);
    for (idx k = 0; k < W; k++) {
        uint64_t e = eq[k], p = pv[k], m = mv[k];
        uint64_t xv = e | m;
        uint64_t a = e & p;
        uint64_t s1 = a + p;
        uint64_t c1 = s1 < a;
        uint64_t s = s1 + carry;
        uint64_t c2 = s < s1;
        carry = c1 | c2;
        uint64_t xh = (s ^ p) | e;
        uint64_t h_p = m | (~(xh | p) & mask[k]);
        uint64_t h_m = p & xh;
        if (k == top_word) {
            if (h_p & top_bit)
                score += 1;
            else if (h_m & top_bit)
                score -= 1;
        }
        uint64_t shifted_ph = ((h_p << 1) | ph_carry) & mask[k];
        uint64_t shifted_mh = ((h_m << 1) | mh_carry) & mask[k];
        ph_carry = h_p >> 63;
        mh_carry = h_m >> 63;
        npv[k] = shifted_mh | (~(xv | shifted_ph) & mask[k]);
        nmv[k] = shifted_ph & xv;
        ph[k] = h_p;
        mh[k] = h_m;
    }
    *out_score = score;
}

/* Myers states of t->hyp for rows start+1 .. n_hyp (rows 0..start are kept). */
static void evaluate_states(Ter *t, idx start) {
    idx S = 4 * t->W;
    for (idx i = start + 1; i <= t->n_hyp; i++)
        myers_step(t, t->peq, t->hyp[i - 1], t->states + (i - 1) * S, t->scores[i - 1],
                   t->states + i * S, &t->scores[i]);
}

static inline ll band_get(const Ter *t, idx i, idx j) {
    if (j < t->low[i] || j >= t->high[i])
        return INF;
    return t->band[t->band_at[i] + j - t->low[i]];
}

/* Row i of a beam matrix after `prev` (full width, INF outside its band), as _extend.
   Only the cells a later row or band_get reads are written outside the band: the one left
   of it and those up to the next row's band end. Branch-free minimums: which of the three
   moves wins is data, not a pattern a branch predictor learns. */
static void beam_row(const Ter *t, const ll *prev, idx word, idx i, ll *out) {
    idx low = t->low[i], high = t->high[i], width = t->n_ref + 1;
    idx reach = i < t->n_hyp ? t->high[i + 1] + 1 : width;
    if (reach > width)
        reach = width;
    if (low > 0)
        out[low - 1] = INF;
    ll left;
    if (low == 0) {
        left = prev[0] + 1;
        out[0] = left;
        low = 1;
    } else {
        left = INF;
    }
    const idx *ref = t->ref;
    for (idx j = low; j < high; j++) {
        ll best = prev[j - 1] + (ref[j - 1] != word);
        ll up = prev[j] + 1, side = left + 1;
        best = up < best ? up : best;
        best = side < best ? side : best;
        out[j] = best;
        left = best;
    }
    for (idx j = high > t->low[i] ? high : t->low[i]; j < reach; j++)
        out[j] = INF;
}

/* The beam rows of the current hypothesis, stored as bands. */
static void ensure_rows(Ter *t) {
    if (t->rows_ok)
        return;
    ll *prev = t->row_a, *next = t->row_b;
    for (idx j = 0; j <= t->n_ref; j++)
        prev[j] = j;
    for (idx i = 0; i <= t->n_hyp; i++) {
        if (i > 0) {
            beam_row(t, prev, t->hyp[i - 1], i, next);
            ll *swap = prev; prev = next; next = swap;
        }
        idx low = t->low[i], high = t->high[i];
        for (idx j = low; j < high; j++)
            t->band[t->band_at[i] + j - low] = prev[j];
    }
    t->rows_ok = 1;
}

/* The current hypothesis' beam distances from cell (i, j) to the end, (n_hyp, n_ref), by
   the same moves inside the same beam, stored as bands like the rows. A candidate equal to
   the hypothesis from row e on has the beam distance min_j row_e[j] + back[e][j] (a path
   crosses row e), so its rows stop at e instead of running to the end. */
static void ensure_back(Ter *t) {
    if (t->back_ok)
        return;
    idx n = t->n_hyp, R = t->n_ref;
    const idx *ref = t->ref;
    /* full-width rows (INF where the next row up reads outside the band), as beam_row */
    ll *below = t->row_a, *cur = t->row_b;
    for (idx i = n; i >= 0; i--) {
        idx low = t->low[i], high = t->high[i];
        if (i == n) {
            for (idx j = low; j < high; j++)
                cur[j] = R - j; /* row n: insertions to the end */
        } else {
            idx word = t->hyp[i], j = high - 1;
            ll right = INF;
            if (high == R + 1) { /* the last column has no diagonal */
                cur[R] = below[R] + 1;
                right = cur[R];
                j = R - 1;
            }
            for (; j >= low; j--) {
                ll best = below[j + 1] + (ref[j] != word);
                ll down = below[j] + 1, side = right + 1;
                best = down < best ? down : best;
                best = side < best ? side : best;
                cur[j] = best;
                right = best;
            }
        }
        memcpy(t->back + t->band_at[i], cur + low, (size_t)(high - low) * sizeof(ll));
        if (i > 0) {
            for (idx j = t->low[i - 1]; j < low; j++)
                cur[j] = INF;
            if (high <= R)
                cur[high] = INF;
        }
        ll *swap = below; below = cur; cur = swap;
    }
    t->back_ok = 1;
}

/* Prefix sums of the error flags (the tail of Evaluated.alignment / _alignment). */
static void finish_sums(Ter *t) {
    t->hyp_sums[0] = 0;
    for (idx i = 0; i < t->n_hyp; i++)
        t->hyp_sums[i + 1] = t->hyp_sums[i] + t->hyp_err[i];
    t->ref_sums[0] = 0;
    for (idx j = 0; j < t->n_ref; j++)
        t->ref_sums[j + 1] = t->ref_sums[j] + t->ref_err[j];
}

/* The delta (+1, -1 or 0) at bit j of a pair of disjoint bit vectors (plus, minus). j is
   not negative: unsigned division is a shift, a signed one three more instructions in the
   back-trace's every step. */
static inline int bit_diff(const uint64_t *plus, const uint64_t *minus, idx j) {
    size_t w = (size_t)j / 64;
    uint64_t bit = (uint64_t)1 << ((size_t)j % 64);
    return (plus[w] & bit) ? 1 : (minus[w] & bit) ? -1 : 0;
}

/* One move back of the edit-distance trace from cell (i, j), both above 0, at distance
   *here, on Myers' row i (`row`) and row i - 1 (`before`): the diagonal when it is
   cheapest, else a deletion, else an insertion (BeamEditDistance.trace's order). *here
   becomes the distance of the cell moved to. */
static inline int trace_move(const Ter *t, const uint64_t *row, const uint64_t *before,
                             int match, idx j, ll *here) {
    idx W = t->W;
    ll up = *here - bit_diff(row + 2 * W, row + 3 * W, j - 1);
    ll diagonal = up - bit_diff(before, before + W, j - 1);
    ll left = *here - bit_diff(row, row + W, j - 1);
    ll best = diagonal + !match;
    int op = match ? NOP : SUB;
    *here = diagonal;
    if (up + 1 < best) {
        best = up + 1; op = DEL; *here = up;
    }
    if (left + 1 < best) {
        op = INS; *here = left;
    }
    return op;
}

/* Whether cell (i, j) is in the beam; a trace that reaches row 0 or column 0 stays in it
   (row 0 is whole, the band's low edge never falls as rows go up). */
static inline int in_band(const Ter *t, idx i, idx j) {
    return j > 0 ? t->low[i] <= j && j < t->high[i] : t->low[i] == 0;
}

/* Alignment of the current hypothesis, followed backwards on Myers' rows. With `check`,
   0 (and no alignment) when the trace leaves the beam. A trace that stays in it proves
   the beam distance Myers' (the beam allows a path that cheap), and the beam's own trace
   takes the same moves: on the path both give the same distances, elsewhere the beam's
   are no smaller, so no other move wins a tie it lost. */
static int alignment_exact(Ter *t, int check) {
    idx S = 4 * t->W;
    idx i = t->n_hyp, j = t->n_ref;
    ll here = t->cost;
    memset(t->hyp_err, 0, (size_t)t->n_hyp);
    memset(t->ref_err, 0, (size_t)t->n_ref);
    for (idx k = 0; k < t->n_ref; k++)
        t->align[k] = 0;
    while (i > 0 && j > 0) {
        if (check && !in_band(t, i, j))
            return 0;
        int op = trace_move(t, t->states + i * S, t->states + (i - 1) * S,
                            t->hyp[i - 1] == t->ref[j - 1], j, &here);
        if (op == INS) {
            j -= 1;
            t->align[j] = i - 1;
            t->ref_err[j] = 1;
            continue;
        }
        i -= 1;
        if (op == DEL) {
            t->hyp_err[i] = 1;
        } else {
            j -= 1;
            t->align[j] = i;
            if (op == SUB)
                t->hyp_err[i] = t->ref_err[j] = 1;
        }
    }
    if (check && !in_band(t, i, j))
        return 0;
    for (idx k = 0; k < i; k++)
        t->hyp_err[k] = 1;
    for (idx k = 0; k < j; k++) {
        t->ref_err[k] = 1;
        t->align[k] = -1;
    }
    finish_sums(t);
    return 1;
}

/* Cost of the current hypothesis (Evaluated.__init__). */
static void evaluate(Ter *t, idx same_prefix) {
    evaluate_states(t, same_prefix);
    t->rows_ok = t->back_ok = t->tail_ok = 0;
    t->cost = t->scores[t->n_hyp];
    t->exact = t->cost < t->safe_below;
    t->aligned = 0;
    if (!t->exact && alignment_exact(t, 1))
        t->exact = t->aligned = 1; /* the trace stayed in the beam: Myers' distance holds */
    if (!t->exact) {
        ensure_rows(t);
        ll last = band_get(t, t->n_hyp, t->n_ref);
        t->cost = last < INF ? last : INF;
    }
}

/* Alignment from the beam matrix: BeamEditDistance.trace, then _alignment. */
static int alignment_beam(Ter *t) {
    ensure_rows(t);
    idx i = t->n_hyp, j = t->n_ref, n_ops = 0;
    while (i > 0 || j > 0) {
        int op;
        if (i == 0) {
            op = INS;
        } else {
            if (!(t->low[i] <= j && j < t->high[i]))
                return -1; /* the back-trace left the beam: cannot happen */
            if (j == 0) {
                op = DEL;
            } else {
                ll best = INF;
                op = UNDEF;
                int match = t->hyp[i - 1] == t->ref[j - 1];
                ll substitution = band_get(t, i - 1, j - 1) + (match ? 0 : 1);
                if (substitution < best) {
                    best = substitution;
                    op = match ? NOP : SUB;
                }
                if (band_get(t, i - 1, j) + 1 < best) {
                    best = band_get(t, i - 1, j) + 1;
                    op = DEL;
                }
                if (band_get(t, i, j - 1) + 1 < best)
                    op = INS;
            }
        }
        t->ops[n_ops++] = op;
        if (op == NOP || op == SUB) {
            i--; j--;
        } else if (op == INS) {
            j--;
        } else if (op == DEL) {
            i--;
        } else {
            return -1; /* the back-trace left the beam: cannot happen */
        }
    }
    idx pos_hyp = 0, n_align = 0, h = 0, r = 0;
    ll hyp_errors = 0, ref_errors = 0;
    t->hyp_sums[0] = t->ref_sums[0] = 0;
    for (idx k = n_ops - 1; k >= 0; k--) {
        int op = (int)t->ops[k];
        if (op == NOP || op == SUB) {
            t->align[n_align++] = pos_hyp++;
            if (op == SUB) {
                hyp_errors++;
                ref_errors++;
            }
            t->hyp_sums[++h] = hyp_errors;
            t->ref_sums[++r] = ref_errors;
        } else if (op == DEL) {
            pos_hyp++;
            hyp_errors++;
            t->hyp_sums[++h] = hyp_errors;
        } else {
            t->align[n_align++] = pos_hyp - 1;
            ref_errors++;
            t->ref_sums[++r] = ref_errors;
        }
    }
    return 0;
}

/* _shifted(): words[start:start+length] moved to begin before position target. */
static void shifted(const idx *w, idx n, idx start, idx length, idx target, idx *out) {
    idx k = 0;
    if (target < start) {
        for (idx p = 0; p < target; p++) out[k++] = w[p];
        for (idx p = start; p < start + length; p++) out[k++] = w[p];
        for (idx p = target; p < start; p++) out[k++] = w[p];
        for (idx p = start + length; p < n; p++) out[k++] = w[p];
    } else if (target > start + length) {
        for (idx p = 0; p < start; p++) out[k++] = w[p];
        for (idx p = start + length; p < target; p++) out[k++] = w[p];
        for (idx p = start; p < start + length; p++) out[k++] = w[p];
        for (idx p = target; p < n; p++) out[k++] = w[p];
    } else {  /* slices clamp at the end, as Python's do */
        idx end = length + target < n ? length + target : n;
        for (idx p = 0; p < start; p++) out[k++] = w[p];
        for (idx p = start + length; p < end; p++) out[k++] = w[p];
        for (idx p = start; p < start + length; p++) out[k++] = w[p];
        for (idx p = end; p < n; p++) out[k++] = w[p];
    }
}

/* Myers' states of the current hypothesis and reference both reversed: row r is the
   hypothesis' last r words against every suffix of the reference, so its values are the
   edit distances (no beam) from the cells of row n_hyp - r to the end. */
static void ensure_tail(Ter *t) {
    if (t->tail_ok)
        return;
    idx n = t->n_hyp, S = 4 * t->W;
    for (idx r = 1; r <= n; r++)
        myers_step(t, t->peq_rev, t->hyp[n - r], t->rev_states + (r - 1) * S,
                   t->rev_scores[r - 1], t->rev_states + r * S, &t->rev_scores[r]);
    t->tail_ok = 1;
}

/* The edit distance of a candidate whose Myers state at row `row` is `state` and which
   equals the current hypothesis from there on: the minimum over j of its distance to
   (row, j) plus the hypothesis' distance from (row, j) to the end, both summed from their
   vertical deltas (the reversed one from its far end). */
static ll tail_distance(Ter *t, const uint64_t *state, idx row) {
    ensure_tail(t);
    idx R = t->n_ref, W = t->W, r = t->n_hyp - row;
    const uint64_t *pv = state, *mv = state + W;
    const uint64_t *rpv = t->rev_states + r * 4 * W, *rmv = rpv + W;
    ll here = row, there = t->rev_scores[r], best = here + there;
    for (idx j = 1; j <= R; j++) {
        idx k = j - 1, q = R - j; /* reversed position of column j: delta q, from q + 1 */
        here += (ll)((pv[k / 64] >> (k % 64)) & 1) - (ll)((mv[k / 64] >> (k % 64)) & 1);
        there -= (ll)((rpv[q / 64] >> (q % 64)) & 1) - (ll)((rmv[q / 64] >> (q % 64)) & 1);
        if (here + there < best)
            best = here + there;
    }
    return best;
}

/* Myers' row i of a candidate equal to the hypothesis for `split` words: the hypothesis'
   row up to split, the candidate's own (t->cand_states) after it. */
static inline const uint64_t *cand_row(const Ter *t, idx i, idx split) {
    return (i > split ? t->cand_states : t->states) + i * 4 * t->W;
}

/* Whether the trace of `words` from (n_hyp, n_ref) at distance `here`, on Myers' rows (up
   to `split` in t->states, the later ones in t->cand_states), stays in the beam: then
   the beam distance is Myers' (alignment_exact). */
static int trace_in_beam(const Ter *t, const idx *words, idx split, ll here) {
    idx i = t->n_hyp, j = t->n_ref;
    while (i > 0 && j > 0) {
        if (!in_band(t, i, j))
            return 0;
        int op = trace_move(t, cand_row(t, i, split), cand_row(t, i - 1, split),
                            words[i - 1] == t->ref[j - 1], j, &here);
        j -= op != DEL;
        i -= op != INS;
    }
    return in_band(t, i, j);
}

/* The beam distance of t->cand, equal to the current hypothesis for `start` words; or,
   when even Myers' distance (a lower bound) is above `useless_above`, that bound: such a
   candidate gains nothing or loses to the best so far either way. */
static ll candidate_cost(Ter *t, idx start, idx end, ll useless_above) {
    idx W = t->W, S = 4 * W, n = t->n_hyp, stop = start; /* Myers rows kept up to stop */
    ll score = t->scores[start];
    if (W == 1) { /* myers_step's one-word case with the state in registers, score only */
        uint64_t p = t->states[start * S], m = t->states[start * S + 1], mask = t->mask[0];
        uint64_t h_p, h_m;
        int top = (int)((t->n_ref - 1) % 64);
        for (idx i = start + 1; i <= n; i++)
            score += myers_word(t->peq[t->cand[i - 1]], mask, top, &p, &m, &h_p, &h_m);
    } else {
        /* Myers' steps while the candidate differs, then (when many rows would remain)
           the hypothesis' distances to the end */
        stop = n - end > TAIL_MIN_ROWS ? end : n;
        const uint64_t *in = t->states + start * S;
        for (idx i = start + 1; i <= stop; i++) {
            myers_step(t, t->peq, t->cand[i - 1], in, score, t->cand_states + i * S, &score);
            in = t->cand_states + i * S;
        }
        if (stop < n)
            score = tail_distance(t, in, stop);
    }
    /* the beam distance is at least Myers' (the beam only takes paths away): a candidate
       that even at Myers' distance could not beat the best so far needs no beam rows,
       nor one whose trace on its Myers rows stays in the beam */
    if (score < t->safe_below || score > useless_above)
        return score;
    for (idx i = stop + 1; i <= n; i++) {
        ll unused = 0;
        myers_step(t, t->peq, t->cand[i - 1], cand_row(t, i - 1, start), 0,
                   t->cand_states + i * S, &unused);
    }
    if (trace_in_beam(t, t->cand, start, score))
        return score;
    ensure_rows(t);
    ensure_back(t); /* before the rows below: it uses the same two rows */
    ll *prev = t->row_a, *next = t->row_b;
    for (idx j = 0; j <= t->n_ref; j++)
        prev[j] = band_get(t, start, j);
    /* rows up to `end`, where the candidate and the hypothesis agree again, then the
       hypothesis' distances to the end (ensure_back) */
    for (idx i = start + 1; i <= end; i++) {
        beam_row(t, prev, t->cand[i - 1], i, next);
        ll *swap = prev; prev = next; next = swap;
    }
    ll best = INF;
    const ll *back = t->back + t->band_at[end] - t->low[end];
    for (idx j = t->low[end]; j < t->high[end]; j++)
        if (prev[j] + back[j] < best)
            best = prev[j] + back[j];
    return best;
}

typedef struct {
    ll gain;
    idx length, start_h, target;
} Key;

static inline int key_greater(const Key *a, const Key *b) {
    if (a->gain != b->gain) return a->gain > b->gain;
    if (a->length != b->length) return a->length > b->length;
    if (a->start_h != b->start_h) return a->start_h < b->start_h;
    return a->target < b->target;
}

/* One round of _best_shift; returns the gain (0 without candidates), -1 on error. */
static int best_shift(Ter *t, idx *checked, ll *gain, idx *best_start) {
    if (t->exact) {
        if (!t->aligned)
            alignment_exact(t, 0);
    } else if (alignment_beam(t) < 0)
        return -1;
    idx n_hyp = t->n_hyp, n_ref = t->n_ref;
    const idx *hyp = t->hyp, *ref = t->ref;
    int have = 0;
    Key best = {0, 0, 0, 0};
    *best_start = 0;
    for (idx start_h = 0; start_h < n_hyp; start_h++) {
        idx word = hyp[start_h];
        for (idx p = t->pos_start[word]; p < t->pos_start[word + 1]; p++) {
            idx start_r = t->pos_list[p];
            if ((start_r > start_h ? start_r - start_h : start_h - start_r) > MAX_SHIFT_DIST)
                continue;
            idx aligned_to = t->align[start_r];
            if (aligned_to == start_h)
                continue;
            idx length = 0;
            while (length < MAX_SHIFT_SIZE && hyp[start_h + length] == ref[start_r + length]) {
                length++;
                if (start_h <= aligned_to && aligned_to < start_h + length)
                    break;
                if (t->hyp_sums[start_h + length] != t->hyp_sums[start_h] &&
                    t->ref_sums[start_r + length] != t->ref_sums[start_r]) {
                    idx previous_target = -1;
                    for (idx offset = -1; offset < length; offset++) {
                        idx target = start_r + offset == -1 ? 0 : t->align[start_r + offset] + 1;
                        if (target == previous_target)
                            continue;
                        previous_target = target;
                        shifted(hyp, n_hyp, start_h, length, target, t->cand);
                        idx start = start_h < target ? start_h : target;
                        /* the candidate differs from the hypothesis in [start, end) */
                        idx end = target < start_h             ? start_h + length
                                  : target > start_h + length ? target
                                  : length + target < n_hyp    ? length + target
                                                               : n_hyp;
                        /* only a candidate that gains (a round applies no other) and
                           could beat the best so far needs its exact cost */
                        ll need = have && best.gain > 1 ? best.gain : 1;
                        ll cost = candidate_cost(t, start, end, t->cost - need);
                        (*checked)++;
                        Key key = {t->cost - cost, length, start_h, target};
                        if (!have || key_greater(&key, &best)) {
                            have = 1;
                            best = key;
                            *best_start = start;
                            memcpy(t->best, t->cand, (size_t)n_hyp * sizeof(idx));
                        }
                    }
                    if (*checked >= MAX_SHIFT_CANDIDATES)
                        goto done;
                }
                if (start_h + length == n_hyp || start_r + length == n_ref)
                    break;
            }
        }
    }
done:
    *gain = have ? best.gain : 0;
    return 0;
}

/* Word ids of a list of non-negative ints, read into a C array before any Python object
   is allocated (which could run code that changes the list). */
static int read_ids(PyObject *ids, idx **out, idx *n) {
    *n = PyList_GET_SIZE(ids);
    *out = alloc((size_t)*n, sizeof(idx));
    if (*out == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (idx i = 0; i < *n; i++) {
        idx v = PyLong_AsSsize_t(PyList_GET_ITEM(ids, i));
        if (v == -1 && PyErr_Occurred())
            return -1;
        if (v < 0) {
            PyErr_SetString(PyExc_ValueError, "word ids must be non-negative ints");
            return -1;
        }
        (*out)[i] = v;
    }
    return 0;
}

static int compare_idx(const void *a, const void *b) {
    idx x = *(const idx *)a, y = *(const idx *)b;
    return (x > y) - (x < y);
}

/* Renumber the ids of both sentences densely (0..V-1, the same word the same id), so that
   the tables indexed by word are as large as the sentences, whatever ids the caller
   used. Returns V, or -1 on failure. */
static idx dense_ids(idx *ref, idx n_ref, idx *hyp, idx n_hyp) {
    idx total = n_ref + n_hyp, vocab = 0;
    idx *sorted = alloc((size_t)total, sizeof(idx));
    if (sorted == NULL)
        return -1;
    memcpy(sorted, ref, (size_t)n_ref * sizeof(idx));
    memcpy(sorted + n_ref, hyp, (size_t)n_hyp * sizeof(idx));
    qsort(sorted, (size_t)total, sizeof(idx), compare_idx);
    for (idx i = 0; i < total; i++)
        if (i == 0 || sorted[i] != sorted[vocab - 1])
            sorted[vocab++] = sorted[i];
    for (int side = 0; side < 2; side++) {
        idx *ids = side ? hyp : ref, n = side ? n_hyp : n_ref;
        for (idx i = 0; i < n; i++) {
            idx lo = 0, hi = vocab - 1;
            while (lo < hi) {
                idx mid = lo + (hi - lo) / 2;
                if (sorted[mid] < ids[i])
                    lo = mid + 1;
                else
                    hi = mid;
            }
            ids[i] = lo;
        }
    }
    PyMem_RawFree(sorted);
    return vocab;
}

struct TerWork {
    unsigned char *block;   /* every array of a pair, carved out of one allocation */
    size_t cap;
    unsigned char *band;    /* the beam's bands */
    size_t band_cap;
};

TerWork *bleucli_ter_work_new(void) { return PyMem_RawCalloc(1, sizeof(TerWork)); }

void bleucli_ter_work_free(TerWork *w) {
    if (w != NULL) {
        PyMem_RawFree(w->block);
        PyMem_RawFree(w->band);
        PyMem_RawFree(w);
    }
}

/* At least `size` bytes in *block (grown when needed, contents undefined); NULL without
   memory. */
static unsigned char *room(unsigned char **block, size_t *cap, size_t size) {
    if (size == 0)
        size = 1;
    if (size > *cap) {
        unsigned char *grown = PyMem_RawRealloc(*block, size);
        if (grown == NULL)
            return NULL;
        *block = grown;
        *cap = size;
    }
    return *block;
}

/* The arrays of a pair, laid out from `base` (or only measured, base NULL): the byte size. */
static size_t layout(Ter *t, unsigned char *base, idx vocab) {
    size_t at = 0;
    idx n_hyp = t->n_hyp, n_ref = t->n_ref, W = t->W;
#define CARVE(field, count, type)                                                          \
    do {                                                                                   \
        if (base != NULL)                                                                  \
            t->field = (type *)(void *)(base + at);                                        \
        at += ((size_t)(count) * sizeof(type) + 15) & ~(size_t)15;                         \
    } while (0)
    CARVE(hyp, n_hyp + 1, idx);
    CARVE(ref, n_ref + 1, idx);
    CARVE(cand, n_hyp + 1, idx);
    CARVE(best, n_hyp + 1, idx);
    CARVE(peq, (size_t)vocab * (size_t)W, uint64_t);
    CARVE(mask, W, uint64_t);
    CARVE(low, n_hyp + 1, idx);
    CARVE(high, n_hyp + 1, idx);
    CARVE(states, ((size_t)n_hyp + 1) * 4 * (size_t)W, uint64_t);
    CARVE(scores, n_hyp + 1, ll);
    CARVE(peq_rev, W > 1 ? (size_t)vocab * (size_t)W : 0, uint64_t);
    CARVE(rev_states, W > 1 ? ((size_t)n_hyp + 1) * 4 * (size_t)W : 0, uint64_t);
    CARVE(rev_scores, W > 1 ? n_hyp + 1 : 0, ll);
    CARVE(cand_states, ((size_t)n_hyp + 1) * 4 * (size_t)W, uint64_t);
    CARVE(band_at, n_hyp + 2, idx);
    CARVE(row_a, n_ref + 1, ll);
    CARVE(row_b, n_ref + 1, ll);
    CARVE(pos_start, vocab + 1, idx);
    CARVE(pos_list, n_ref, idx);
    CARVE(align, n_ref, idx);
    CARVE(hyp_sums, n_hyp + 1, idx);
    CARVE(ref_sums, n_ref + 1, idx);
    CARVE(ops, n_hyp + n_ref + 3, idx); /* also a cursor per word id (vocab <= n + 2) */
    CARVE(hyp_err, n_hyp + 1, char);
    CARVE(ref_err, n_ref + 1, char);
#undef CARVE
    return at;
}

/* The edit count (shifts included) of hyp[0..n_hyp) against ref[0..n_ref) (word ids:
   any non-negative values, equal words equal ids), or a TER_* error code, with the arrays
   in `work` (reused from pair to pair). Needs no GIL: raw allocations only, no Python
   object (the batch engines call it from their threads). */
long long bleucli_ter_count_in(TerWork *work, const Py_ssize_t *hyp, Py_ssize_t n_hyp_words,
                               const Py_ssize_t *ref, Py_ssize_t n_ref_words) {
    if (n_ref_words == 0)
        return TER_EMPTY_REFERENCE;
    if ((long long)n_hyp_words * (long long)n_ref_words > MAX_WORD_PAIRS)
        return TER_TOO_LONG;
    Ter t;
    memset(&t, 0, sizeof t);
    idx n_hyp = n_hyp_words, n_ref = n_ref_words, W = (n_ref + 63) / 64;
    t.n_hyp = n_hyp;
    t.n_ref = n_ref;
    t.W = W;
    /* ids below the word count index tables as they are; others are renumbered densely */
    idx most = 0, vocab, *renumbered = NULL;
    for (idx i = 0; i < n_hyp; i++)
        most = hyp[i] > most ? hyp[i] : most;
    for (idx j = 0; j < n_ref; j++)
        most = ref[j] > most ? ref[j] : most;
    if (most < n_hyp + n_ref + 2) {
        vocab = most + 1;
    } else {
        renumbered = alloc((size_t)(n_hyp + n_ref), sizeof(idx));
        if (renumbered == NULL)
            return TER_NO_MEMORY;
        memcpy(renumbered, ref, (size_t)n_ref * sizeof(idx));
        memcpy(renumbered + n_ref, hyp, (size_t)n_hyp * sizeof(idx));
        vocab = dense_ids(renumbered, n_ref, renumbered + n_ref, n_hyp);
        if (vocab < 0) {
            PyMem_RawFree(renumbered);
            return TER_NO_MEMORY;
        }
        ref = renumbered;
        hyp = renumbered + n_ref;
    }
    t.vocab = vocab;
    unsigned char *base = room(&work->block, &work->cap, layout(&t, NULL, vocab));
    if (base != NULL) {
        /* every array is written before it is read, but for these counts and row 0 */
        layout(&t, base, vocab);
        memset(t.peq, 0, (size_t)vocab * (size_t)W * sizeof(uint64_t));
        if (W > 1) {
            memset(t.peq_rev, 0, (size_t)vocab * (size_t)W * sizeof(uint64_t));
            memset(t.rev_states, 0, 4 * (size_t)W * sizeof(uint64_t));
        }
        memset(t.pos_start, 0, (size_t)(vocab + 1) * sizeof(idx));
        memset(t.states, 0, 4 * (size_t)W * sizeof(uint64_t));
        memcpy(t.hyp, hyp, (size_t)n_hyp * sizeof(idx));
        memcpy(t.ref, ref, (size_t)n_ref * sizeof(idx));
    }
    PyMem_RawFree(renumbered);
    if (base == NULL)
        return TER_NO_MEMORY;
    for (idx k = 0; k < W; k++)
        t.mask[k] = ~(uint64_t)0;
    if (n_ref % 64)
        t.mask[W - 1] = ((uint64_t)1 << (n_ref % 64)) - 1;
    for (idx j = 0; j < n_ref; j++) {
        t.peq[t.ref[j] * W + j / 64] |= (uint64_t)1 << (j % 64);
        if (W > 1) {
            idx q = n_ref - 1 - j;
            t.peq_rev[t.ref[j] * W + q / 64] |= (uint64_t)1 << (q % 64);
        }
        t.pos_start[t.ref[j] + 1]++;
    }
    for (idx v = 0; v < vocab; v++)
        t.pos_start[v + 1] += t.pos_start[v];
    /* positions per word: pos_list, filled with ops[] as each word's cursor (ops is not in
       use yet and has n_hyp + n_ref + 3 >= vocab entries) */
    for (idx v = 0; v < vocab; v++)
        t.ops[v] = t.pos_start[v];
    for (idx j = 0; j < n_ref; j++)
        t.pos_list[t.ops[t.ref[j]]++] = j;
    if (n_hyp == n_ref && memcmp(t.hyp, t.ref, (size_t)n_ref * sizeof(idx)) == 0)
        return 0;
    geometry(&t);
    size_t cells = 0;
    for (idx i = 0; i <= n_hyp; i++) {
        t.band_at[i] = (idx)cells;
        if (t.high[i] > t.low[i])
            cells += (size_t)(t.high[i] - t.low[i]);
    }
    if (cells > (size_t)PY_SSIZE_T_MAX / (2 * sizeof(ll)) - 1)
        return TER_NO_MEMORY;
    /* written by ensure_rows() and ensure_back() before anything reads them */
    t.band = (ll *)(void *)room(&work->band, &work->band_cap, 2 * cells * sizeof(ll));
    if (t.band == NULL)
        return TER_NO_MEMORY;
    t.back = t.band + cells;
    for (idx k = 0; k < W; k++)
        t.states[k] = t.mask[k];  /* pv = all ones, mv = ph = mh = 0 */
    t.scores[0] = n_ref;
    if (W > 1) {
        for (idx k = 0; k < W; k++)
            t.rev_states[k] = t.mask[k];
        t.rev_scores[0] = n_ref;
    }
    evaluate(&t, 0);
    ll shifts = 0;
    idx checked = 0;
    for (;;) {
        ll gain;
        idx same_prefix;
        if (best_shift(&t, &checked, &gain, &same_prefix) < 0)
            return TER_INTERNAL;
        if (checked >= MAX_SHIFT_CANDIDATES || gain <= 0)
            break;
        shifts++;
        idx *swap = t.hyp; t.hyp = t.best; t.best = swap;
        evaluate(&t, same_prefix);
    }
    return shifts + t.cost;
}

long long bleucli_ter_count(const Py_ssize_t *hyp, Py_ssize_t n_hyp_words,
                            const Py_ssize_t *ref, Py_ssize_t n_ref_words) {
    TerWork work = {NULL, 0, NULL, 0};
    long long result = bleucli_ter_count_in(&work, hyp, n_hyp_words, ref, n_ref_words);
    PyMem_RawFree(work.block);
    PyMem_RawFree(work.band);
    return result;
}

PyObject *bleucli_ter_error(long long code, Py_ssize_t n_hyp, Py_ssize_t n_ref) {
    if (code == TER_TOO_LONG)
        PyErr_Format(PyExc_ValueError, "ter_edits(): %zd x %zd words is more than %lld word "
                     "pairs", n_hyp, n_ref, MAX_WORD_PAIRS);
    else if (code == TER_EMPTY_REFERENCE)
        PyErr_SetString(PyExc_ValueError, "empty reference");
    else if (code == TER_INTERNAL)
        PyErr_SetString(PyExc_RuntimeError, "TER back-trace left the beam");
    else
        PyErr_NoMemory();
    return NULL;
}

/* ter_edits(hyp_ids, ref_ids) -> edits including shifts; the reference is not empty. */
PyObject *bleucli_ter_edits(PyObject *self, PyObject *args) {
    PyObject *hyp_list, *ref_list;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &hyp_list, &PyList_Type, &ref_list))
        return NULL;
    idx *hyp = NULL, *ref = NULL, n_hyp = 0, n_ref = 0;
    PyObject *result = NULL;
    if (read_ids(ref_list, &ref, &n_ref) == 0 && read_ids(hyp_list, &hyp, &n_hyp) == 0) {
        long long edits = bleucli_ter_count(hyp, n_hyp, ref, n_ref);
        result = edits >= 0 ? PyLong_FromLongLong(edits) : bleucli_ter_error(edits, n_hyp, n_ref);
    }
    PyMem_RawFree(hyp);
    PyMem_RawFree(ref);
    return result;
}
