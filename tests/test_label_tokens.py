"""Label tokens do not depend on how a tokenizer treats a text's start.

transformers 5.17 converted Gemma's GGUF to a tokenizer that starts every
text with a prefix-space token, so 'Yes' and 'No' both began with it and
every judgment failed. Labels are now read as the tokens they add after a
prompt. The prefix tokenizer is rebuilt here from the converted tokenizer
(a prepended '▁' split off as its own piece), so CI covers it on any version.
"""

from __future__ import annotations

import json
import string

import pytest

from judgelab.engine._labels import resolve_labels
from judgelab.errors import LabelError

LABEL_SETS = [
    ("Yes", "No"), ("True", "False"), tuple(str(i) for i in range(10)), tuple(string.ascii_uppercase[:8]),
    ("yes", "no", "maybe"), ("Pass", "Fail"), ("consistent", "inconsistent"), ("positive", "negative", "neutral"),
]


def test_labels_resolve_as_before_on_the_gguf_tokenizer(any_judge):
    for labels in LABEL_SETS:
        alone = resolve_labels(labels, lambda text: any_judge.backend.tokenize(text, add_bos=False))
        assert any_judge.resolve_labels(labels) == alone, labels


@pytest.fixture(scope="module")
def prefix_model(tmp_path_factory):
    """gemma-3-270m through transformers, with a tokenizer that starts every text with '▁'."""
    pytest.importorskip("torch", reason="needs the transformers extra: pip install 'judgelab[transformers]'")
    from judgelab.engine import load_model
    from judgelab.engine._hf_cache import converted_folder
    from judgelab.specs import load_spec
    from judgelab.weights import resolve_weights

    source = converted_folder(resolve_weights(load_spec("gemma-3-270m")))
    folder = tmp_path_factory.mktemp("prefix-tokenizer")
    for item in source.iterdir():
        if item.name not in ("tokenizer.json", "tokenizer_config.json"):
            (folder / item.name).symlink_to(item)
    config = json.loads((source / "tokenizer_config.json").read_text(encoding="utf-8"))
    config["tokenizer_class"] = "PreTrainedTokenizerFast"  # tokenizer.json as written, not Gemma's own pipeline
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    tokenizer = json.loads((source / "tokenizer.json").read_text(encoding="utf-8"))
    tokenizer["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": "\u2581"}, tokenizer["normalizer"]]}
    tokenizer["pre_tokenizer"] = {"type": "Split", "pattern": {"String": "\u2581"},
                                  "behavior": "MergedWithPrevious", "invert": False}
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")
    model = load_model(folder, backend="transformers", device="cpu", n_threads=1)
    yield model
    model.close()


def test_prefix_token_tokenizer_resolves_labels(prefix_model, judge_model):
    be = prefix_model.backend
    prefix = be.tokenize("Yes", add_bos=False)[0]
    assert prefix == be.tokenize("No", add_bos=False)[0] == be.tokenize(" ", add_bos=False)[0]  # the bug's premise
    with pytest.raises(LabelError, match="share the token"):  # what reading labels on their own gave
        resolve_labels(("Yes", "No"), lambda text: be.tokenize(text, add_bos=False))
    resolved = prefix_model.resolve_labels(("Yes", "No"))
    yes, no = (judge_model.backend.tokenize(w, add_bos=False) for w in ("Yes", "No"))
    assert yes[0] in resolved.tokens_of(0) and no[0] in resolved.tokens_of(1)
    assert prefix not in resolved.token_ids
    probs = prefix_model.probabilities("Is Paris in France? Answer:", ("Yes", "No"))
    assert sum(probs.values()) == pytest.approx(1.0)


def test_a_tokenizer_that_cannot_tell_labels_apart_is_named(prefix_model):
    import transformers

    with pytest.raises(LabelError, match=f"transformers {transformers.__version__}"):
        prefix_model.resolve_labels(("Yes", "Yes!"))
