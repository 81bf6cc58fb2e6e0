"""Evaluator identities read from the name and the model spec equal those of really built evaluators.

Calibration (resuming saved scores), the server and MCP (binding a policy) read an evaluator's
identity and template hash with ``judgelab.evaluators.evaluator_config`` instead of building it;
these tests build every registered evaluator on the real model and compare.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from judgelab.calibration import CalibrationOptions, LabelledRow, calibrate, read_scores
from judgelab.errors import JudgelabError
from judgelab.evaluators import (
    FactCheckingEvaluator,
    TemplateConfig,
    build_evaluator,
    evaluator_config,
    evaluator_identity,
    evaluator_names,
    registered_evaluator,
)
from judgelab.specs import load_spec
from judgelab.wire import registered_template_hashes

SRC = Path(__file__).resolve().parents[1] / "src"

#: Options the registry passes on (the server's threshold, a tuned template, a system prompt, decomposition).
OPTIONS = [{}, {"threshold": 0.7}, {"system": "Answer Yes or No."}]


def _template_names():
    """The registered template evaluators (a builder registered without a config, as a plugin or another test
    file may add, has no template to compare)."""
    return [n for n in evaluator_names()
            if registered_evaluator(n).argument is None and registered_evaluator(n).config is not None]


@pytest.mark.parametrize("options", OPTIONS, ids=["defaults", "threshold", "system"])
def test_every_registered_evaluators_config_is_the_built_ones(judge_model, options):
    names = _template_names()
    assert {"fact-checking", "fact-checking-sentences", "bespoke-minicheck", "relevancy"} <= set(names)
    for base in names:
        for name in (base, f"{base}+fenced"):
            opts = {} if base == "bespoke-minicheck" and "system" in options else options  # its system is MiniCheck's
            built = build_evaluator(name, judge_model, **opts)
            config = evaluator_config(name, judge_model.spec, **opts)
            assert isinstance(config, TemplateConfig), name
            assert config == built.config(), name
            assert config.template_hash == built.template_hash, name
            assert config.identity(judge_model.spec.spec_hash) == evaluator_identity(built), name


def test_the_config_tells_evaluators_apart(judge_model):
    spec = judge_model.spec
    ids = {n: evaluator_config(n, spec).identity(spec.spec_hash) for n in _template_names()}
    assert len(set(ids.values())) == len(ids)  # each name asks or decides differently
    plain, fenced = evaluator_config("fact-checking", spec), evaluator_config("fact-checking+fenced", spec)
    assert plain.template_hash != fenced.template_hash and fenced.name == "fact-checking+fenced"
    # the threshold changes the identity (saved scores' decisions), not the question (a policy's binding)
    moved = evaluator_config("fact-checking", spec, threshold=0.7)
    assert moved.template_hash == plain.template_hash and moved.identity("s") != plain.identity("s")
    # the task's default, as build_evaluator(None, model, task=...) picks it
    assert evaluator_config(None, spec, task="relevancy") == evaluator_config("relevancy", spec)


def test_bespoke_minichecks_prompt_comes_from_the_spec():
    minicheck = load_spec("bespoke-minicheck-7b")
    task = minicheck.tasks["fact-check"]
    config = evaluator_config("bespoke-minicheck", minicheck)
    assert (config.template, config.system, config.name) == (task.template, task.system or config.system,
                                                             "bespoke-minicheck")
    assert FactCheckingEvaluator.bespoke_config(None).template == "Document: {document}\nClaim: {claim}"


def test_the_tuned_judges_relevancy_prompt_comes_from_its_spec_however_the_evaluator_is_built():
    from judgelab.evaluators import DEFAULT_RELEVANCY_TEMPLATE, RelevancyEvaluator
    from judgelab.specs import TaskFormat
    from judgelab.testing import FakeSpec, ScriptedModel

    judge = load_spec("gemma-3-270m-judge")
    own = judge.tasks["relevancy"].template
    assert own != DEFAULT_RELEVANCY_TEMPLATE and "{query}" in own and "{response}" in own and "{context}" in own
    assert evaluator_config("relevancy", judge).template == own
    assert evaluator_config(None, judge, task="relevancy").template == own
    assert evaluator_config("relevancy-spring-ai", judge).template == DEFAULT_RELEVANCY_TEMPLATE
    assert evaluator_config("relevancy", load_spec("gemma-3-270m")).template == DEFAULT_RELEVANCY_TEMPLATE

    class _Judge(ScriptedModel):
        spec = FakeSpec(tasks={"relevancy": TaskFormat(template="Q {query} R {response} C {context}", system="S",
                                                       labels={"yes": "Oui", "no": "Non"})})

    model = _Judge({})
    built = RelevancyEvaluator(model)  # the class, not only the name, asks the judge's own prompt
    assert (built.prompt_template, built.system, built.labels) == ("Q {query} R {response} C {context}", "S",
                                                                  ("Oui", "Non"))
    assert built.config() == build_evaluator("relevancy", model).config()
    assert built.config() == evaluator_config("relevancy", model.spec)  # type: ignore[arg-type]
    mine = RelevancyEvaluator(model, prompt_template="{query}|{response}|{context}", threshold=0.7)
    assert (mine.prompt_template, mine.system, mine.threshold) == ("{query}|{response}|{context}", None, 0.7)
    assert build_evaluator("relevancy-spring-ai", model).prompt_template == DEFAULT_RELEVANCY_TEMPLATE
    assert RelevancyEvaluator(ScriptedModel({})).prompt_template == DEFAULT_RELEVANCY_TEMPLATE  # no spec prompt


def test_ensembles_and_callables_are_known_only_built(judge_model):
    assert evaluator_config("cascade", judge_model.spec) is None
    assert evaluator_config("jury@gemma-3-270m", judge_model.spec) is None
    assert evaluator_config("judgelab.evaluators:FactCheckingEvaluator", judge_model.spec) is None
    hashes = registered_template_hashes(["fact-checking", "relevancy+fenced", "cascade", "jury"], judge_model)
    assert hashes == {"fact-checking": FactCheckingEvaluator(judge_model).template_hash,
                      "relevancy+fenced": build_evaluator("relevancy+fenced", judge_model).template_hash,
                      "cascade": None, "jury": None}


def test_a_bad_option_is_refused_as_the_constructor_refuses_it(judge_model):
    for bad in ({"threshold": 2.0}, {"prompt_template": "no placeholders"}, {"window": 0}):
        with pytest.raises(JudgelabError) as built:
            build_evaluator("fact-checking", judge_model, **bad)
        with pytest.raises(type(built.value)) as unbuilt:
            evaluator_config("fact-checking", judge_model.spec, **bad)
        assert str(unbuilt.value) == str(built.value)


def test_a_plugin_registered_without_a_config_is_built_once_on_the_real_model(tmp_path):
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(SRC)!r})
        from judgelab.engine import load_model
        from judgelab.evaluators import RelevancyEvaluator, register_evaluator
        from judgelab.wire import registered_template_hashes
        built = []
        def plugin(model, **options):
            built.append(model)
            return RelevancyEvaluator(model, system="plugin", **options)
        register_evaluator("plugin-relevancy", plugin)
        model = load_model("gemma-3-270m", n_threads=1)
        hashes = registered_template_hashes(["plugin-relevancy", "relevancy"], model)
        assert built == [model], built  # the plugin was built on the loaded model, the registered one was not
        assert hashes["plugin-relevancy"] == RelevancyEvaluator(model, system="plugin").template_hash
        assert hashes["relevancy"] == RelevancyEvaluator(model).template_hash
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


def test_calibrate_reuses_saved_scores_by_the_unbuilt_identity(judge_model, tmp_path):
    rows = [LabelledRow(id=f"r{i}", task="fact-check", documents=["The sky is blue."],
                        response="The sky is blue." if i % 2 else "The sky is green.", label=i % 2) for i in range(4)]
    options = CalibrationOptions(n_resamples=20, k_folds=2, progress=False, figures=False)
    calibrate(judge_model, rows, tmp_path, options=options)
    saved = read_scores(tmp_path / "scores.jsonl")
    expected = evaluator_config("fact-checking", judge_model.spec).identity(judge_model.spec.spec_hash)
    assert {(r.spec_hash, r.evaluator_hash) for r in saved} == {(expected.spec_hash, expected.evaluator_hash)}

    class NeverLoads:  # a loader that fails: a finished run must be re-analysed without the model
        spec = judge_model.spec

        def __call__(self):
            raise AssertionError("the model was loaded although every saved score is reused")

    again = calibrate(NeverLoads(), rows, tmp_path, options=options)
    assert [r.score for r in again.records] == [r.score for r in saved]
