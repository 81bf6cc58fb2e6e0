"""Document-level data (issue 27): the tuning importers, deletion negatives, exclusion, decomposition."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from judgelab.calibration import deletion_pairs, import_set, resolve_set
from judgelab.calibration.data import LabelledRow
from judgelab.errors import DataError
from judgelab.evaluators import EvaluationRequest, FactCheckingEvaluator, content_words, evidence_windows

STARTER = Path(__file__).resolve().parents[1] / "calibration" / "starter.jsonl"


def test_docnli_tsv_rows_and_a_bad_line(tmp_path):
    f = tmp_path / "dev.tsv"
    f.write_text("entailment\tThe cat sat on the mat.\tA cat sat.\n"
                 "not_entailment\tThe cat sat on the mat.\tA dog sat.\n"
                 "not_entailment\tIt rained.\tIt was sunny.\n")
    rows = import_set("mnli", f)
    assert [r.label for r in rows] == [1, 0, 0]
    assert rows[0].documents == ["The cat sat on the mat."] and rows[1].response == "A dog sat."
    assert rows[0].meta["pair"] == rows[1].meta["pair"] != rows[2].meta["pair"]
    assert {r.group for r in rows} == {"mnli"}
    assert import_set("fever-nli", f)[0].group == "fever-nli"
    f.write_text("entailment\tonly two fields\n")
    with pytest.raises(DataError, match=r"dev.tsv:1 .*label<TAB>premise<TAB>hypothesis"):
        import_set("mnli", f)


def test_fib_keeps_one_consistent_row_per_article_and_each_distinct_error(tmp_path):
    folder = tmp_path / "fib" / "xsum"
    folder.mkdir(parents=True)
    doc = "The council approved the budget on Monday. It rises by 3%."
    line = {"id": "7", "input": doc, "correct_choice": "The budget was approved.", "lbl": 0}
    (folder / "binary_choice-using_bart_distractors.jsonl").write_text(json.dumps(
        {**line, "list_choices": ["The budget was approved.", "The budget was rejected."]}) + "\n")
    (folder / "binary_choice-using_t5_distractors.jsonl").write_text(json.dumps(
        {**line, "list_choices": str(["The budget was approved.", "The budget fell by 3%."]), "lbl": 0}) + "\n")
    rows = import_set("fib", tmp_path / "fib")
    assert Counter(r.label for r in rows) == {1: 1, 0: 2}
    assert len({r.unit for r in rows}) == 1 and {r.group for r in rows} == {"fib-xsum"}
    assert sorted(r.meta["distractor_model"] or "" for r in rows) == ["", "bart", "t5"]


def test_factcg_and_begin(tmp_path):
    f = tmp_path / "CG2C_doc.json"
    # FactCG's twins: one claim with its support, and again with the support removed (another document)
    f.write_text(json.dumps({"text_a": "Doc one. Support.", "text_b": ["Claim a."], "orig_label": 1}) + "\n"
                 + json.dumps({"text_a": "Doc one.", "text_b": ["Claim  a."], "orig_label": 0}) + "\n"
                 + json.dumps({"text_a": "Doc one. Support.", "text_b": ["Claim b."], "orig_label": 1}) + "\n")
    rows = import_set("factcg", f)
    assert [(r.response, r.label) for r in rows] == [("Claim a.", 1), ("Claim  a.", 0), ("Claim b.", 1)]
    assert rows[0].unit == rows[1].unit != rows[2].unit, "the unit is the claim: twins stay together"
    b = tmp_path / "begin" / "wow"
    b.mkdir(parents=True)
    header = "model_name\tdata_source\tknowledge\tmessage\tresponse\tbegin_label\n"
    (b / "begin_dev_wow.tsv").write_text(
        header + "t5\twow\tCrayola began with chalk.\thi\tCrayola started with chalk.\tFully attributable\n"
        "gpt2\twow\tCrayola began with chalk.\thi\tI like red.\tGeneric\n"
        "gpt2\twow\tCrayola began with chalk.\thi\tCrayola began with paint.\tNot fully attributable\n")
    rows = import_set("begin", tmp_path / "begin")
    assert [r.label for r in rows] == [1, 0] and rows[0].user_text == "hi" and rows[0].generator == "t5"
    assert len(import_set("begin", tmp_path / "begin", generic="fail")) == 3
    (b / "begin_dev_wow.tsv").write_text(header + "t5\twow\tk\tm\tr\tMaybe\n")
    with pytest.raises(DataError, match="begin_dev_wow.tsv:2 has begin_label 'Maybe'"):
        import_set("begin", b)


def test_the_shared_sets_import_with_their_documented_counts(shared_data):
    assert len(import_set("mnli", shared_data / "mnli")) == 6647 + 13000
    assert len(import_set("fever-nli", shared_data / "fever_nli")) == 8209 + 10000
    fib = import_set("fib", shared_data / "fib")
    assert sum(r.label for r in fib) == len({r.unit for r in fib})  # one consistent summary per article
    assert Counter(r.label for r in import_set("factcg", shared_data / "factcg" / "CG2C_doc.json")) == {1: 1034, 0: 1034}
    assert Counter(r.label for r in import_set("begin", shared_data / "begin")) == {1: 1705, 0: 3044}


DOC = ("The bridge opened in 1932 after six years of work. Its main span is 503 metres long. "
       "Tourists often climb its arch. The city also has a large opera house. "
       "Ferries cross the harbour every twenty minutes. The weather is mild in spring.")


def _row(claim: str, label: int = 1) -> LabelledRow:
    return LabelledRow(id="r1", task="fact-check", documents=[DOC], response=claim, label=label)


def test_deletion_pairs_keep_the_claim_and_remove_its_support():
    claim = "The bridge opened in 1932, and its main span is 503 metres."
    positive, negative = deletion_pairs([_row(claim)])
    assert positive.response == negative.response == claim
    assert (positive.label, negative.label) == (1, 0)
    assert positive.meta["pair"] == negative.meta["pair"]
    assert "1932" not in negative.documents[0] and "503" not in negative.documents[0]
    assert "1932" in positive.documents[0] and "503" in positive.documents[0]
    # both lost the same number of sentences: length does not give the label away
    assert len(positive.meta["deleted"]) == len(negative.meta["deleted"]) == 2
    assert not content_words(claim) & content_words(" ".join(positive.meta["deleted"]))


def test_deletion_pairs_skip_unsupported_rows_and_support_that_cannot_be_deleted():
    assert deletion_pairs([_row("The bridge opened in 1932.", label=0)]) == []
    everywhere = LabelledRow(id="r2", task="fact-check", documents=["The bridge opened. The bridge opened again."],
                             response="The bridge opened.", label=1)
    assert deletion_pairs([everywhere]) == []


def test_d2c_set_spec_wraps_any_set(tmp_path):
    f = tmp_path / "rows.jsonl"
    f.write_text(_row("The bridge opened in 1932, and its main span is 503 metres.").model_dump_json() + "\n")
    rows, desc, _ = resolve_set(f"d2c:{f}")
    assert [r.label for r in rows] == [1, 0] and desc == f"d2c:{f}"


def test_deletion_pairs_are_a_set_a_claim_only_judge_cannot_tell_apart(shared_data):
    rows, _, _ = resolve_set(f"d2c:factcg:{shared_data / 'factcg' / 'CG2C_doc.json'}")
    by_pair: dict[str, set[str]] = {}
    for r in rows:
        by_pair.setdefault(r.meta["pair"], set()).add(r.response)
    assert len(rows) > 500 and all(len(claims) == 1 for claims in by_pair.values())
    assert Counter(r.label for r in rows)[0] == Counter(r.label for r in rows)[1]


def test_evidence_windows_rank_by_the_claims_content_words():
    best = evidence_windows("Ferries cross the harbour.", DOC, window=1, top=2)
    assert best[0].text.startswith("Ferries") and best[0].overlap == 1.0 and len(best) == 2


class _CountingScripted:
    """A scripted model that also counts tokens (one a word), as the fact-checking evaluator needs."""

    def __init__(self, base):
        self.base = base
        self.spec = base.spec
        self.n_ctx = base.n_ctx
        self.id = base.id

    def __getattr__(self, name):
        return getattr(self.base, name)

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def tokenize(self, text: str) -> list[int]:
        return list(range(len(text.split())))


def test_decomposition_names_the_unsupported_sentence_and_its_closest_evidence(scripted_model):
    model = _CountingScripted(scripted_model({
        "Claim:\nThe bridge opened in 1932.": 0.92,
        "Claim:\nIts main span is 900 metres long.": 0.08,
    }))
    judge = FactCheckingEvaluator(model, decompose=True, window=1, top_windows=2)
    res = judge.evaluate(EvaluationRequest(user_text=DOC, response_content=(
        "The bridge opened in 1932. Its main span is 900 metres long.")))
    assert not res.passed and res.score == pytest.approx(0.08)
    sentences = res.metadata["sentences"]
    assert [s["sentence"] for s in sentences] == ["The bridge opened in 1932.", "Its main span is 900 metres long."]
    assert res.metadata["unsupported"] == ["Its main span is 900 metres long."]
    assert sentences[1]["evidence"].startswith("Its main span is 503 metres long.")
    assert "sentence 2" in res.feedback
    plain = FactCheckingEvaluator(model)
    assert judge.identity() != plain.identity()


def test_decomposition_names_unsupported_sentences_on_the_calibrated_scale(scripted_model):
    # a calibrator that lifts raw 0.30 to about 1 and keeps 0.02 near 0: the claim's verdict and the list of
    # unsupported sentences must both read the calibrated score against the threshold
    from judgelab.calibration import PlattCalibrator

    calibrator = PlattCalibrator().fit([0.02] * 10 + [0.30] * 10, [0] * 10 + [1] * 10)
    model = _CountingScripted(scripted_model({
        "Claim:\nThe bridge opened in 1932.": 0.30,
        "Claim:\nIts main span is 900 metres long.": 0.02,
    }))
    judge = FactCheckingEvaluator(model, decompose=True, window=1, top_windows=2, calibrator=calibrator)
    claim = "The bridge opened in 1932. Its main span is 900 metres long."
    res = judge.evaluate(EvaluationRequest(user_text=DOC, response_content=claim))
    assert res.metadata["unsupported"] == ["Its main span is 900 metres long."]
    assert [s["score"] for s in res.metadata["sentences"]] == pytest.approx([0.30, 0.02])  # raw, as documented
    supported = judge.evaluate(EvaluationRequest(user_text=DOC, response_content="The bridge opened in 1932."))
    assert supported.passed and supported.metadata["unsupported"] == []


def test_tuning_never_sees_the_documents_of_an_excluded_set(tmp_path):
    from judgelab.tuning import TuneConfig, load_sources

    rows = [LabelledRow(id=f"r{i}", task="fact-check", documents=[f"Document {i // 2}."], response=f"claim {i}",
                        label=i % 2) for i in range(8)]
    train = tmp_path / "train.jsonl"
    train.write_text("".join(r.model_dump_json() + "\n" for r in rows))
    quick = tmp_path / "quick.jsonl"  # the evaluation set holds document 1 with another claim and spacing
    quick.write_text(LabelledRow(id="q", task="fact-check", documents=["Document  1. "], response="other",
                                 label=1).model_dump_json() + "\n")
    config = TuneConfig(sets=(str(train),), out=str(tmp_path / "out"), exclude=(str(quick),))
    (source,) = load_sources(config)
    assert sorted(r.id for r in source.rows) == ["r0", "r1", "r4", "r5", "r6", "r7"]
    assert config.training_hash() != TuneConfig(sets=(str(train),), out="x").training_hash()


def test_source_names_are_the_names_a_run_gives_its_sets(tmp_path):
    from judgelab.tuning import TuneConfig, heldout_file_name, load_sources, source_names

    rows = [LabelledRow(id=f"r{i}", task="fact-check", documents=[f"Document {i}."], response=f"claim {i}",
                        label=i % 2) for i in range(4)]
    train = tmp_path / "news.jsonl"
    train.write_text("".join(r.model_dump_json() + "\n" for r in rows))
    assert source_names((str(train), f"d2c:{train}", str(train))) == ["news", "d2c:news", "news#2"]
    assert heldout_file_name("d2c:news") != heldout_file_name("news")
    specs = (str(train), str(train))  # a repeated set gets a numbered name, the one load_sources gives it
    assert [s.name for s in load_sources(TuneConfig(sets=specs, out=str(tmp_path / "out")))] == ["news", "news#2"]


def test_tune_config_checks_chunk_tokens_and_autocast(tmp_path):
    from judgelab.errors import ParameterError
    from judgelab.tuning import TuneConfig

    with pytest.raises(ParameterError, match="chunk_tokens"):
        TuneConfig(sets=("a.jsonl",), out="x", chunk_tokens=8)
    with pytest.raises(ParameterError, match="autocast"):
        TuneConfig(sets=("a.jsonl",), out="x", autocast="fp8")


def test_shortcut_baselines_find_a_claim_that_gives_the_label_away():
    from judgelab.calibration import shortcut_baselines

    rows = []
    for i in range(40):
        label = i % 2
        word = "definitely true" if label else "maybe false"
        rows.append(LabelledRow(id=f"s{i}", task="fact-check", documents=[f"Document number {i}."],
                                response=f"Item {i} is {word} today.", label=label))
    leaky = shortcut_baselines(rows, n_resamples=200)
    assert leaky.claim_only.estimate > 0.9 and leaky.claim_only.low > 0.5
    pairs = deletion_pairs([LabelledRow(
        id=f"b{i}", task="fact-check", label=1,
        documents=[DOC.replace("1932", str(1900 + i)).replace("503", str(500 + i))],
        response=f"The bridge opened in {1900 + i}, and its main span is {500 + i} metres.") for i in range(12)])
    assert len(pairs) == 24
    fair = shortcut_baselines(pairs, n_resamples=200)
    assert fair.claim_only.estimate == pytest.approx(0.5) and fair.claim_length.estimate == pytest.approx(0.5)


def test_calibrate_scores_with_the_named_evaluator(tmp_path):
    """``judgelab calibrate --evaluator fact-checking-sentences`` scores with it (it was once ignored)."""
    from judgelab import load_model
    from judgelab.calibration import load_rows
    from judgelab.cli import main
    from judgelab.evaluators import build_evaluator

    starter = [r for r in load_rows(STARTER).rows if r.task == "fact-check" and r.id.startswith("qs-begin-begin_dev_cmu")][:12]
    f = tmp_path / "rows.jsonl"
    f.write_text("".join(r.model_dump_json() + "\n" for r in starter))
    out = tmp_path / "run"
    assert main(["calibrate", "--model", "gemma-3-270m-judge", "--evaluator", "fact-checking-sentences", "--set",
                 str(f), "--out", str(out), "--no-plots", "--no-progress", "--threads", "2"]) == 0
    records = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    wanted = build_evaluator("fact-checking-sentences", load_model("gemma-3-270m-judge"), task="fact-check")
    assert {r["evaluator_hash"] for r in records} == {wanted.identity().evaluator_hash}
    assert len(records) == 12
