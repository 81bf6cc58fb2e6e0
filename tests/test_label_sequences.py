"""Labels that share their first tokens are read as token sequences.

"GRADE: C" and "GRADE: I" start with the same tokens; the engine appends the
shared prefix to the prompt and reads the labels where they part. A label's
probability is the product of its tokens' probabilities restricted to the
label set (decoding constrained to the labels). Every probability here is
checked against a direct computation from the model's full-vocabulary logits
at every position of every label (prefix included); where labels part at
their last token that equals their full-sequence likelihoods normalised over
the set, and that is checked too.
"""

from __future__ import annotations

import numpy as np
import pytest

from judgelab import questions as q
from judgelab.errors import ContextLengthError, LabelError

GRADES = ("GRADE: C", "GRADE: I")
BRACKETS = ("[[A]]", "[[B]]")  # the labels part at the letter, and "]]" follows it
DEEPER = ("Yes, fully", "Yes, partly", "No")  # parts at "Yes"/"No", then again after "Yes,"
PROMPT = (
    "Question: What is the capital of France?\nExpert answer: Paris\nSubmitted answer: {answer}\n"
    "Reply with GRADE: C if the submission is correct, GRADE: I if it is not."
)


def _prompts(model):
    return [model.render(PROMPT.format(answer=a)) for a in ("Paris", "Lyon", "The capital of France is Paris.")]


@pytest.mark.parametrize("labels", [GRADES, ("Score: 1", "Score: 2", "Score: 3")])
def test_labels_parting_at_their_last_token_match_the_sequence_likelihoods(any_judge, labels, label_likelihoods):
    resolved = any_judge.resolve_labels(labels)
    assert resolved.sequences is not None and resolved.token_ids == ()
    for prompt in _prompts(any_judge):
        probs = any_judge.probabilities(prompt, labels)
        assert probs == pytest.approx(label_likelihoods(any_judge, prompt, labels), abs=2e-3), (labels, prompt)
        assert probs == pytest.approx(label_likelihoods(any_judge, prompt, labels, restricted=True), abs=2e-3)


@pytest.mark.parametrize("labels", [BRACKETS, DEEPER])
def test_sequence_labels_match_constrained_decoding(any_judge, labels, label_likelihoods):
    for prompt in _prompts(any_judge):
        probs = any_judge.probabilities(prompt, labels)
        direct = label_likelihoods(any_judge, prompt, labels, restricted=True)
        assert probs == pytest.approx(direct, abs=2e-3), (labels, prompt)


def test_the_trie_reads_only_where_labels_part(judge_model):
    grades = judge_model.resolve_labels(GRADES).sequences
    tokenize = judge_model.backend.tokenize
    assert grades.forms == tuple(tuple(tokenize(g, add_bos=False, special=False)) for g in GRADES)
    assert len(grades.prefix) == len(grades.forms[0]) - 1  # "GRADE:" once, then " C" or " I"
    assert [node for node, _ in grades.branches] == [()]  # one read, as for single tokens
    brackets = judge_model.resolve_labels(BRACKETS).sequences
    assert [node for node, _ in brackets.branches] == [()]  # "]]" is the one way on after either letter
    deeper = judge_model.resolve_labels(DEEPER).sequences
    assert deeper.prefix == () and len(deeper.branches) == 2  # "Yes"/"No", then "fully"/"partly"


def test_single_token_labels_keep_their_path(any_judge):
    for labels in [("Yes", "No"), tuple("ABCD"), tuple("12345")]:
        resolved = any_judge.resolve_labels(labels)
        assert resolved.sequences is None and resolved.token_ids


def test_batches_equal_single_prompts_and_the_label_head_reads_the_branch(judge_model):
    prompts = _prompts(judge_model)
    before = judge_model.backend.label_head_decodes
    batch = judge_model.batch_probabilities(prompts, GRADES)
    if judge_model.backend.label_head_error is not None and judge_model.backend.label_head_error <= 1e-3:
        assert judge_model.backend.label_head_decodes > before
    for prompt, probs in zip(prompts, batch):
        judge_model.reset_caches()
        assert judge_model.probabilities(prompt, GRADES) == pytest.approx(probs, abs=1e-12)
    for prompt, probs in zip(prompts, judge_model.batch_probabilities(prompts, DEEPER)):
        judge_model.reset_caches()
        assert judge_model.probabilities(prompt, DEEPER) == pytest.approx(probs, abs=1e-12)


def test_label_mass_is_the_labels_share_of_the_full_distribution(judge_model):
    prompt = _prompts(judge_model)[0]
    plain = judge_model.judge(prompt, DEEPER)
    judge_model.label_mass = True
    try:
        with_mass = judge_model.judge(prompt, DEEPER)
    finally:
        judge_model.label_mass = False
    assert with_mass.probabilities == pytest.approx(plain.probabilities, abs=2e-3)
    tokens = list(judge_model.tokenize(prompt))
    mass = 0.0
    for label in DEEPER:
        seq = judge_model.backend.tokenize(label, add_bos=False, special=False)
        logp = 0.0
        for k, token in enumerate(seq):
            logits = np.asarray(judge_model.backend.next_logits(tokens + seq[:k]), dtype=np.float64)
            logp += logits[token] - np.log(np.exp(logits - logits.max()).sum()) - logits.max()
        mass += float(np.exp(logp))
    assert with_mass.label_mass == pytest.approx(mass, rel=1e-3)


def test_generate_writes_one_whole_label(judge_model):
    for prompt in _prompts(judge_model):
        probs = judge_model.probabilities(prompt, GRADES)
        assert judge_model.generate(prompt, max_tokens=3, allowed=GRADES) == max(probs, key=probs.get)
    with pytest.raises(LabelError, match="takes 3 tokens but max_tokens is 2"):
        judge_model.generate(_prompts(judge_model)[0], max_tokens=2, allowed=GRADES)


@pytest.mark.parametrize("labels, match", [
    (("Score: 1", "Score: 10"), "'Score: 10' starts with all the tokens of 'Score: 1'"),
    (("GRADE: C", "GRADE: C "), "cannot be told apart|not distinct"),
])
def test_labels_that_cannot_be_told_apart_are_refused(any_judge, labels, match):
    with pytest.raises(LabelError, match=match):
        any_judge.probabilities("x", labels)


def test_the_prompt_plus_its_label_tokens_must_fit(judge_model):
    base = len(judge_model.tokenize("word"))
    per = len(judge_model.tokenize("word word")) - base
    prompt = "word" + " word" * ((judge_model.n_ctx - base) // per)
    assert len(judge_model.tokenize(prompt)) == judge_model.n_ctx  # fits alone, not with "GRADE: " after it
    with pytest.raises(ContextLengthError, match="prompt plus its labels' tokens"):
        judge_model.probabilities(prompt, GRADES)


def test_typed_choice_reads_sequence_labels(judge_model):
    question = q.Choice("Is the submitted answer correct?",
                        {"GRADE: C": "the submission is correct", "GRADE: I": "it is not"}, letters=False)
    answer = q.ask(judge_model, {"question": "Capital of France?", "submission": "Paris"}, question)
    assert set(answer.probabilities) == set(GRADES)
    assert answer.choice in GRADES and answer.read_as == GRADES
    assert sum(answer.probabilities.values()) == pytest.approx(1.0)


def test_transformers_backend_reads_sequence_labels(smollm_hf, label_likelihoods):
    for labels in (GRADES, DEEPER):
        assert smollm_hf.resolve_labels(labels).sequences is not None
        for prompt in _prompts(smollm_hf)[:2]:
            assert smollm_hf.probabilities(prompt, labels) == pytest.approx(
                label_likelihoods(smollm_hf, prompt, labels, restricted=True), abs=2e-3)
