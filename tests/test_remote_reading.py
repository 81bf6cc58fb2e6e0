"""Remote judges without a server: reading labels from top logprobs and reply text, the short form, the spec hash.

The servers themselves are in test_remote_llama_server.py (llama-cpp-python's) and
test_remote_judgelab_server.py (judgelab serve).
"""

from __future__ import annotations

import hashlib
import math

import pytest

from judgelab.engine import estimate_tokens, pool_top_logprobs, read_label_text
from judgelab.errors import RemoteError, SpecError
from judgelab.specs import load_spec, remote_spec


def test_pooling_adds_case_and_space_variants_and_renormalises_over_the_labels():
    top = [(" Yes", math.log(0.30)), ("Yes", math.log(0.10)), (" yes", math.log(0.05)), (" Paris", math.log(0.20)),
           (" No", math.log(0.10)), ("NO", math.log(0.05)), ("Nope", math.log(0.05))]
    reading = pool_top_logprobs(top, ["Yes", "No"])
    assert reading.probabilities["Yes"] == pytest.approx(0.45 / 0.60)
    assert reading.probabilities["No"] == pytest.approx(0.15 / 0.60)
    assert reading.label_mass == pytest.approx(0.60)
    assert reading.outside_mass == pytest.approx(1 - 0.85)
    assert reading.missing == ()


def test_a_label_missing_from_the_top_k_gets_zero_and_is_named():
    reading = pool_top_logprobs([(" Yes", math.log(0.5)), (" Paris", math.log(0.3))], ["Yes", "No"])
    assert reading.probabilities == {"Yes": 1.0, "No": 0.0}
    assert reading.missing == ("No",)
    assert reading.outside_mass == pytest.approx(0.2)


def test_no_label_in_the_top_k_is_an_error_not_a_guess():
    with pytest.raises(RemoteError) as err:
        pool_top_logprobs([(" Paris", -0.5), ("\n", -1.5)], ["Yes", "No"], where=" (judge at http://x)")
    assert err.value.reason == "no_label"
    assert "' Paris'" in str(err.value) and "top_logprobs" in str(err.value)


def test_spec_variants_replace_the_default_forms():
    top = [("Yes", math.log(0.4)), ("Y", math.log(0.2)), ("N", math.log(0.2))]
    reading = pool_top_logprobs(top, ["Yes", "No"], {"Yes": ["Y"], "No": ["N"]})
    assert reading.probabilities == {"Yes": pytest.approx(0.5), "No": pytest.approx(0.5)}


@pytest.mark.parametrize("reply, label", [("Yes", "Yes"), (" yes.", "Yes"), ("**No**, because", "No"),
                                          ('"NO"', "No"), ("No\n", "No")])
def test_text_mode_reads_the_label_the_reply_starts_with(reply, label):
    reading = read_label_text(reply, ["Yes", "No"])
    assert reading.probabilities == {"Yes": float(label == "Yes"), "No": float(label == "No")}
    assert reading.label_mass is None


@pytest.mark.parametrize("reply", ["Nobody knows", "Maybe", "", "Yesterday"])
def test_text_mode_refuses_a_reply_without_a_label(reply):
    with pytest.raises(RemoteError) as err:
        read_label_text(reply, ["Yes", "No"])
    assert err.value.reason == "no_label"


def test_short_form_names_protocol_model_and_key_variable():
    spec = load_spec("openai:http://127.0.0.1:8080/v1/#judge-name")
    assert (spec.id, spec.backends, spec.remote.url) == ("judge-name", ["remote"], "http://127.0.0.1:8080/v1")
    assert (spec.remote.protocol, spec.remote.mode, spec.remote.api_key_env) == ("openai-chat", "logprobs",
                                                                                 "OPENAI_API_KEY")
    assert load_spec("openai-completions:http://h/v1#m").prompt.style == "raw"
    assert load_spec("ollama+text:http://h:11434#bespoke-minicheck").remote.mode == "text"
    assert load_spec("decisions:https://h/v1#m").remote.protocol == "decisions"


@pytest.mark.parametrize("ref, says", [("openai:http://h/v1", "#NAME"), ("openai:ftp://h/v1#m", "http(s)"),
                                       ("vllm:http://h/v1#m", "scheme")])
def test_short_form_errors_say_what_to_write(ref, says):
    with pytest.raises(SpecError) as err:
        remote_spec(ref)
    assert says in str(err.value)


def test_client_settings_do_not_change_the_spec_hash_but_the_judge_does():
    spec = remote_spec("openai:http://h/v1#m")
    faster = spec.model_copy(update={"remote": spec.remote.model_copy(update={"concurrency": 32, "timeout": 5.0})})
    other = spec.model_copy(update={"remote": spec.remote.model_copy(update={"model": "m2"})})
    assert faster.spec_hash == spec.spec_hash
    assert other.spec_hash != spec.spec_hash


def test_local_spec_hashes_are_unchanged_by_the_remote_field():
    # the hash of a spec without [remote] is what it was before the field existed (saved runs still resume);
    # the licence and the weights' pinned sha256 came later and leave it unchanged too
    spec = load_spec("gemma-3-270m")
    old_fields = {"source_path": True, "adapter": True, "remote": True, "licence": True, "weights": {"__all__": {"sha256"}}}
    before = hashlib.sha256(spec.model_dump_json(exclude=old_fields).encode()).hexdigest()
    assert spec.remote is None and spec.spec_hash == before[:16]


def test_token_estimate_counts_words_and_symbols():
    assert len(estimate_tokens("Is Paris the capital of France?")) == 7
    assert len(estimate_tokens("internationalisation")) == 4
    assert len(estimate_tokens("1889")) == 4
    assert (len(estimate_tokens("a b")), len(estimate_tokens("a  b"))) == (2, 3)


def test_a_run_of_verdicts_says_what_it_cannot_measure():
    """Text mode scores 1 or 0; the analysis says threshold, calibration and AUROC mean nothing then."""
    from judgelab.calibration import ScoreRecord, analyze

    labels = [1, 0] * 20
    verdicts = [1.0 if (i % 7) else 1.0 - y for i, y in enumerate(labels)]
    records = [ScoreRecord(id=f"r{i}", task="fact-check", label=y, score=s, split="dev" if i % 2 else "test")
               for i, (y, s) in enumerate(zip(labels, verdicts))]
    notes = analyze(records, n_resamples=50).warnings()
    assert any("exactly 0 or 1" in n and "AUROC" in n for n in notes)
    probabilities = [ScoreRecord(id=f"r{i}", task="fact-check", label=y, score=0.3 + 0.4 * y)
                     for i, y in enumerate(labels)]
    assert not any("exactly 0 or 1" in n for n in analyze(probabilities, n_resamples=50).warnings())
