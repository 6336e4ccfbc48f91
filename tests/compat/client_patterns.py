"""How real clients call SacreBLEU, as one script: run with ``real`` (the installed SacreBLEU)
or ``bleucli`` (``bleucli.install_as_sacrebleu()`` first); it prints one JSON object of
results that the two runs must share. Each pattern names the client it comes from.

Not a test module itself: ``test_clients.py`` runs it in two fresh interpreters, since the
two ``sacrebleu`` packages must not share ``sys.modules``.
"""

from __future__ import annotations

import gzip
import json
import logging
import multiprocessing
import os
import pickle
import sys
import tempfile
from collections import Counter
from pathlib import Path

if sys.argv[1] == "bleucli":
    import bleucli

    bleucli.install_as_sacrebleu()

import sacrebleu  # noqa: E402

assert ("sacrebleu_compat" in sacrebleu.__file__) == (sys.argv[1] == "bleucli"), sacrebleu.__file__

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HYPS = (EXAMPLES / "hyp.de").read_text(encoding="utf-8").splitlines()
REFS = (EXAMPLES / "ref.de").read_text(encoding="utf-8").splitlines()
REFS2 = (EXAMPLES / "ref2.de").read_text(encoding="utf-8").splitlines()
out: dict[str, object] = {}


def signature(metric) -> str:
    """A signature without its version field (the one field that names the tool)."""
    return "|".join(
        p for p in str(metric.get_signature()).split("|") if not p.startswith("version:")
    )


# Hugging Face evaluate (sacrebleu, chrf, ter metrics): version check, transposed references
from packaging import version  # noqa: E402

out["evaluate_version_ok"] = not version.parse(sacrebleu.__version__) < version.parse("1.4.12")
transposed = [list(refs) for refs in zip(REFS, REFS2)]
streams = [[refs[i] for refs in transposed] for i in range(2)]
out["evaluate_bleu"] = sacrebleu.corpus_bleu(
    HYPS, streams, smooth_method="exp", tokenize="13a"
).score
bleu_metric = sacrebleu.BLEU()
out["evaluate_bleu_class"] = bleu_metric.corpus_score(HYPS, streams).score
out["evaluate_bleu_signature"] = signature(bleu_metric)
chrf = sacrebleu.CHRF(char_order=6, word_order=2, beta=2)
out["evaluate_chrf"] = chrf.corpus_score(HYPS, streams).score
ter = sacrebleu.TER(normalized=True, case_sensitive=True)
out["evaluate_ter"] = ter.corpus_score(HYPS, streams).score
out["evaluate_ter_signature"] = signature(ter)

# evaluate's sari / wiki_split: the tokenizer helper and the class attribute
from sacrebleu.metrics.bleu import _get_tokenizer  # noqa: E402

out["sari_tokenize"] = _get_tokenizer("13a")()("Hello, world! It's 3.5 km.")
out["sari_tokenizers"] = sorted(sacrebleu.BLEU.TOKENIZERS)

# fairseq --eval-bleu and --scoring sacrebleu
from sacrebleu.metrics import BLEU  # noqa: E402

fairseq = BLEU.compute_bleu(
    correct=[9, 7, 5, 3], total=[10, 8, 6, 4], sys_len=11, ref_len=12, smooth_method="exp"
)
out["fairseq_compute_bleu"] = [fairseq.score, fairseq.bp, fairseq.precisions]
out["fairseq_major_version"] = int(sacrebleu.__version__[0]) >= 2
out["fairseq_tokenizers"] = "13a" in sacrebleu.BLEU.TOKENIZERS

# COMET imports sacrebleu.utils at start-up; OCELoT uses smart_open
import sacrebleu.utils  # noqa: E402

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "x.gz")
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("eins\r\nzwei\n")
    with sacrebleu.utils.smart_open(path) as handle:
        out["ocelot_smart_open"] = handle.readlines()

# FLORES-200 chrF scripts: statistics per sentence, summed, scored
flores = sacrebleu.metrics.CHRF(word_order=2)
stats = flores._extract_corpus_statistics(HYPS, [REFS])
out["flores_stats_first"] = [list(map(int, row)) for row in stats[:2]]
out["flores_chrf"] = flores._compute_score_from_stats(sacrebleu.utils.sum_of_lists(stats)).score
out["flores_aggregate"] = flores._aggregate_and_compute(stats).score

# lm-eval 0.3: test-set listing and the CLI module
out["lm_eval_testsets"] = [
    name
    for name in ("wmt14", "wmt16", "wmt20", "iwslt17")
    if name in sacrebleu.get_available_testsets()
]
out["lm_eval_langpairs"] = sorted(sacrebleu.get_langpairs_for_testset("wmt16"))
from sacrebleu import sacrebleu as cli_module  # noqa: E402

out["lm_eval_datasets"] = sorted(n for n in cli_module.DATASETS if n.startswith("wmt1"))[:5]
out["lm_eval_main"] = callable(cli_module.main)

# torchmetrics reference tests / OpenCompass
from sacrebleu.metrics import TER  # noqa: E402
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a  # noqa: E402
from sacrebleu.tokenizers.tokenizer_char import TokenizerChar  # noqa: E402
from sacrebleu.tokenizers.tokenizer_intl import TokenizerV14International  # noqa: E402
from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh  # noqa: E402

line = "Der „Hund“ – 3.5€ (z. B.) 中文字"
out["tokenizers"] = [
    cls()(line) for cls in (Tokenizer13a, TokenizerV14International, TokenizerChar, TokenizerZh)
]
out["torchmetrics_ter"] = TER().sentence_score(HYPS[0], [REFS[0]]).score

# MATEO: paired tests through PairedTest and Result
from sacrebleu.significance import PairedTest, Result  # noqa: E402

os.environ["SACREBLEU_SEED"] = "12345"
named = [("base", HYPS), ("other", REFS2)]
metrics = {"BLEU": BLEU(references=[REFS]), "CHRF": sacrebleu.CHRF(references=[REFS])}
sigs, scores = PairedTest(named, metrics, references=None, test_type="bs", n_samples=200)()
out["mateo_systems"] = scores["System"]
out["mateo_types"] = all(isinstance(r, Result) for key in ("BLEU", "chrF2") for r in scores[key])
out["mateo_bs"] = [
    [r.score, r.p_value, r.mean, r.ci] for key in ("BLEU", "chrF2") for r in scores[key]
]
out["mateo_signature"] = "|".join(
    p for p in str(sigs["BLEU"]).split("|") if not p.startswith("version:")
)
_, ar = PairedTest(
    named, {"BLEU": BLEU(references=[REFS])}, references=None, test_type="ar", n_samples=300
)()
out["mateo_ar"] = [[r.score, r.p_value] for r in ar["BLEU"]]

# Many scripts silence SacreBLEU's warnings through its logger
records: list[str] = []


class Collect(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        records.append(record.levelname)


logging.getLogger("sacrebleu").addHandler(Collect())
tokenised = ["the cat sat on the mat ."] * 150
sacrebleu.corpus_bleu(tokenised, [tokenised])
out["warned_when_tokenised"] = "WARNING" in records
records.clear()
logging.getLogger("sacrebleu").setLevel(logging.ERROR)
sacrebleu.corpus_bleu(tokenised, [tokenised])
out["silenced_by_level"] = records == []


# Metric objects sent to multiprocessing
def _score(metric_and_data):
    metric, hyps, refs = metric_and_data
    return metric.corpus_score(hyps, refs).score


picklable = []
for metric in (sacrebleu.BLEU(), sacrebleu.CHRF(), sacrebleu.TER()):
    copy = pickle.loads(pickle.dumps(metric))
    picklable.append(copy.corpus_score(HYPS, [REFS]).score)
out["pickled_scores"] = picklable
with multiprocessing.get_context("fork").Pool(2) as pool:  # arguments are pickled
    out["pool_scores"] = pool.map(
        _score, [(sacrebleu.BLEU(), HYPS, [REFS]), (sacrebleu.TER(), HYPS, [REFS])]
    )

# Wrongly nested references: SacreBLEU truncates silently (bleucli's alias warns)
out["truncated_flat_refs"] = sacrebleu.corpus_bleu(HYPS[:3], REFS[:2]).score

# fairseq examples/translation_moe/score.py: its sentence_bleu(hypothesis, reference) passes
# two strings to corpus_bleu (each a sequence of characters), adds one to the higher-order
# counts and rescores with compute_bleu; multi_ref picks the best reference per hypothesis
# with it, then scores the corpus with tokenize='none'


def moe_sentence_bleu(hypothesis: str, reference: str) -> float:
    bleu = sacrebleu.corpus_bleu(hypothesis, reference)
    for i in range(1, 4):
        bleu.counts[i] += 1
        bleu.totals[i] += 1
    return BLEU.compute_bleu(
        bleu.counts, bleu.totals, bleu.sys_len, bleu.ref_len, smooth_method="exp"
    ).score


out["moe_sentence_bleu"] = [moe_sentence_bleu(h, r) for h, r in zip(HYPS[:6], REFS[:6])]
out["moe_string_shapes"] = [
    str(sacrebleu.corpus_bleu(h, r))
    for h, r in [("abc", "abd"), ("abc", ["abd"]), (["abc"], "abd"), ("the cat", "the cat")]
]
out["moe_string_chrf_ter"] = [
    sacrebleu.corpus_chrf("abc", "abd").score,
    sacrebleu.corpus_ter("abc", "abd").score,
]
moe_refs = [[REFS[i], REFS2[i]] for i in range(5)]
moe_hypos = [[HYPS[i], REFS2[i + 1]] for i in range(5)]
chosen, chosen_hypos = [], []
for rs, hs in zip(moe_refs, moe_hypos):
    for h in hs:
        s = [moe_sentence_bleu(h, r) for r in rs]
        chosen.append(rs[max(range(len(s)), key=s.__getitem__)])
        chosen_hypos.append(h)
out["moe_multi_ref"] = sacrebleu.corpus_bleu(chosen_hypos, [chosen], tokenize="none").score

# lm-evaluation-harness 0.3.0 (tasks/translation.py) builds one task per listed test set and
# language pair when it is imported
out["lm_eval_all_benchmarks"] = {
    name: sorted(sacrebleu.get_langpairs_for_testset(name))
    for name in sacrebleu.get_available_testsets()
}
out["lm_eval_dataset_names"] = sorted(sacrebleu.DATASETS)

# mbrs 0.1.8 (MBR decoding): expected_scores_reference_aggregation reads the metric classes'
# reference caches and helpers directly, with weighted (float) n-gram counts
from sacrebleu.metrics.helpers import (  # noqa: E402
    extract_all_char_ngrams,
    extract_all_word_ngrams,
    extract_word_ngrams,
)

mbr_samples = REFS[:4] + HYPS[:2]
mbr_bleu = BLEU(effective_order=True)
reference_stats = mbr_bleu._cache_references([mbr_samples])
out["mbrs_bleu_cache"] = [
    [sorted((" ".join(k), v) for k, v in stat["ref_ngrams"].items()), stat["ref_lens"]]
    for stat in reference_stats
]
weight = 1.0 / len(mbr_samples)
aggregate: Counter = Counter()
for stat in reference_stats:
    ngrams = stat["ref_ngrams"]
    for ngram in ngrams:
        ngrams[ngram] *= weight
    aggregate += ngrams
expected_length = sum(stat["ref_lens"][0] for stat in reference_stats) * weight
mbrs_bleu = []
for hypothesis in HYPS[:5]:
    hyp_ngrams, hyp_len = extract_all_word_ngrams(
        mbr_bleu._preprocess_segment(hypothesis), 1, mbr_bleu.max_ngram_order
    )
    correct = [0.0] * mbr_bleu.max_ngram_order
    total = correct[:]
    for ngram, count in hyp_ngrams.items():
        total[len(ngram) - 1] += float(count)
        if ngram in aggregate:
            correct[len(ngram) - 1] += float(min(count, aggregate[ngram]))
    mbrs_bleu.append([hyp_len, expected_length, correct, total])
out["mbrs_bleu_expected"] = mbrs_bleu
out["mbrs_bleu_reference_info"] = [
    sorted(
        (" ".join(k), v)
        for k, v in mbr_bleu._extract_reference_info(["a b a", "a b b"])["ref_ngrams"].items()
    ),
    mbr_bleu._extract_reference_info(["a b a", "a b b"])["ref_lens"],
]
out["mbrs_bleu_segment"] = mbr_bleu._compute_segment_statistics(
    "a b a c", mbr_bleu._extract_reference_info(["a b a", "a b b"])
)
for word_order in (0, 2):
    mbr_chrf = sacrebleu.CHRF(word_order=word_order)
    per_reference = mbr_chrf._cache_references([[sample] for sample in mbr_samples])[0][
        "ref_ngrams"
    ]
    out[f"mbrs_chrf{word_order}_cache_shape"] = [len(per_reference), len(per_reference[0])]
    accumulated: dict[int, Counter] = {}
    for ngrams_of_reference in per_reference:
        for order, counts in enumerate(ngrams_of_reference):
            for ngram in counts:
                counts[ngram] = counts[ngram] * weight
            accumulated[order] = accumulated.get(order, Counter()) + counts
    scores = []
    for hypothesis in HYPS[:5]:
        hypothesis = mbr_chrf._preprocess_segment(hypothesis)
        hyp_ngrams = extract_all_char_ngrams(hypothesis, mbr_chrf.char_order, mbr_chrf.whitespace)
        if mbr_chrf.word_order > 0:
            words = mbr_chrf._remove_punctuation(hypothesis)
            hyp_ngrams.extend(
                extract_word_ngrams(words, n) for n in range(1, mbr_chrf.word_order + 1)
            )
        stats = []
        for h, r in zip(hyp_ngrams, [accumulated[k] for k in range(len(accumulated))]):
            stats.extend(mbr_chrf._get_match_statistics(h, r))
        scores.append(mbr_chrf._compute_f_score(stats))
    out[f"mbrs_chrf{word_order}_expected"] = scores
    cached = mbr_chrf._cache_references([REFS[:3], REFS2[:3]])
    out[f"mbrs_chrf{word_order}_segment"] = [
        mbr_chrf._compute_segment_statistics(mbr_chrf._preprocess_segment(h), kwargs)
        for h, kwargs in zip(HYPS[:3], cached)
    ]
mbr_ter = TER()
ter_cache = mbr_ter._cache_references([REFS[:3], [None, REFS2[1], REFS2[2]]])
out["mbrs_ter_cache"] = [kwargs["ref_words"] for kwargs in ter_cache]
out["mbrs_ter_segment"] = [
    mbr_ter._compute_segment_statistics(mbr_ter._preprocess_segment(h), k)
    for h, k in zip(HYPS[:3], ter_cache)
]
out["mbrs_num_refs"] = mbr_ter.num_refs

print(json.dumps(out, ensure_ascii=False, default=float))
