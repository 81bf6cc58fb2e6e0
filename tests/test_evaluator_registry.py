"""The one evaluator registry: names, task defaults, modifiers and errors; a class registered where it is defined.

The identities written into run files (scores.jsonl ``evaluator_hash``) and the template hashes a
policy binds to are pinned below as the code before ``registered_as`` computed them, for every
registered template evaluator, fenced or not, with each kind of option, on three model specs.
"""

import dataclasses
import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from judgelab.errors import JudgelabError, ParameterError, ParameterTypeError
from judgelab.evaluators import (
    BUILTIN_EVALUATORS,
    EvaluationRequest,
    FactCheckingEvaluator,
    RelevancyEvaluator,
    TemplateConfig,
    YesNoEvaluator,
    build_evaluator,
    default_evaluator_name,
    evaluator_config,
    evaluator_identity,
    evaluator_names,
    evaluator_tasks,
    register_evaluator,
    register_evaluator_class,
    registered_as,
    registered_evaluator,
)
from judgelab.specs import load_spec

ROOT = Path(__file__).resolve().parents[1]

#: The built-in names in ``BUILTIN_EVALUATORS``' order (its classes' names in their ``registered_as`` order).
BUILTIN_NAMES = ("fact-checking", "fact-checking-sentences", "bespoke-minicheck", "relevancy", "relevancy-spring-ai",
                 "cascade", "jury")


class _Model:
    """A stand-in model: the registry only passes it on."""

    spec = None


def test_shipped_names_and_task_defaults():
    assert {"fact-checking", "bespoke-minicheck", "relevancy"} <= set(evaluator_names())
    assert default_evaluator_name("fact-check") == "fact-checking"
    assert default_evaluator_name("relevancy") == "relevancy"
    assert registered_evaluator("relevancy").task == "relevancy"


def test_build_by_name_by_task_and_with_options():
    model = _Model()
    ev = build_evaluator("fact-checking", model, threshold=0.7)
    assert isinstance(ev, FactCheckingEvaluator) and ev.threshold == 0.7
    assert isinstance(build_evaluator(None, model, task="relevancy"), RelevancyEvaluator)


def test_unknown_names_and_modifiers_are_one_line_errors():
    with pytest.raises(JudgelabError, match="Unknown evaluator 'nope'.*fact-checking"):
        build_evaluator("nope", _Model())
    with pytest.raises(JudgelabError, match="modifier 'shiny'"):
        build_evaluator("relevancy+shiny", _Model())
    with pytest.raises(JudgelabError, match="No default evaluator for task 'summarise'"):
        build_evaluator(None, _Model(), task="summarise")


def test_register_refuses_a_taken_name_unless_replaced():
    with pytest.raises(JudgelabError, match="already registered"):
        register_evaluator("relevancy", lambda m, **o: None)
    entry = register_evaluator("test-only-registry", lambda m, **o: ("built", o), replace=True)
    assert build_evaluator("test-only-registry", _Model(), x=1) == ("built", {"x": 1})
    assert entry.name == "test-only-registry"


class _Calibrator:
    """A fitted calibrator as identity reads it: ``to_dict``."""

    def to_dict(self):
        return {"kind": "platt", "a": 1.5, "b": -0.25}

    def predict(self, scores):
        return scores


_TEMPLATES = {"fact-check": "D={document} C={claim}?", "relevancy": "Q={query} R={response} C={context}?"}
_OPTIONS = {
    "defaults": lambda task: {},
    "threshold": lambda task: {"threshold": 0.7},
    "system": lambda task: {"system": "Answer Yes or No."},
    "template": lambda task: {"prompt_template": _TEMPLATES[task]},
    "calibrator": lambda task: {"calibrator": _Calibrator()},
    "labels": lambda task: {"labels": ("yes", "no")},
    "window": lambda task: {"window": 2, "top_windows": 4},
}

#: ``(name, options): (template_hash, evaluator_hash)``, computed by the registry before evaluators were
#: registered by class (build/config function pairs); the same on the specs in ``_SPECS`` and without one.
MAIN_HASHES = {
    ('bespoke-minicheck', 'calibrator'): ('b2c621f570baba6a', '53578b0019659802'),
    ('bespoke-minicheck', 'defaults'): ('b2c621f570baba6a', 'f808672efcefc6be'),
    ('bespoke-minicheck', 'threshold'): ('b2c621f570baba6a', '0a22f9f96ab50092'),
    ('bespoke-minicheck+fenced', 'calibrator'): ('15254081f2323951', '5d1bc06b8b5fa9a6'),
    ('bespoke-minicheck+fenced', 'defaults'): ('15254081f2323951', '9ed89a901397f5b0'),
    ('bespoke-minicheck+fenced', 'threshold'): ('15254081f2323951', 'afcddf328ff9b812'),
    ('fact-checking', 'calibrator'): ('a6e52e64551a24e4', 'd14f9c76ed281b2b'),
    ('fact-checking', 'defaults'): ('a6e52e64551a24e4', 'dba849e46aa2a4f2'),
    ('fact-checking', 'labels'): ('e51181c70ec57f35', 'b3cb069238f51d7f'),
    ('fact-checking', 'system'): ('ca40f06921fba59d', '390fb86d21277232'),
    ('fact-checking', 'template'): ('97be96f783d2bc9b', 'a0c8c79862bbef3b'),
    ('fact-checking', 'threshold'): ('a6e52e64551a24e4', '08bc2811c2ecc0f9'),
    ('fact-checking+fenced', 'calibrator'): ('cc5a6491e4c57a26', 'be1cfc8e596e84ef'),
    ('fact-checking+fenced', 'defaults'): ('cc5a6491e4c57a26', '492d2e03ea04ea08'),
    ('fact-checking+fenced', 'labels'): ('def843334249cb04', 'a438da188c9362da'),
    ('fact-checking+fenced', 'system'): ('ce2f66fe6cc1809e', 'faea1283ae6e6dd5'),
    ('fact-checking+fenced', 'template'): ('cc5a6491e4c57a26', '492d2e03ea04ea08'),
    ('fact-checking+fenced', 'threshold'): ('cc5a6491e4c57a26', 'c3d86f5508d2ae64'),
    ('fact-checking-sentences', 'calibrator'): ('a6e52e64551a24e4', '010527f72493e255'),
    ('fact-checking-sentences', 'defaults'): ('a6e52e64551a24e4', '7ef46038ad028913'),
    ('fact-checking-sentences', 'labels'): ('e51181c70ec57f35', '394c5e7bec6e6e5d'),
    ('fact-checking-sentences', 'system'): ('ca40f06921fba59d', '855a1a0856835e19'),
    ('fact-checking-sentences', 'template'): ('97be96f783d2bc9b', 'fd92355287f5d29c'),
    ('fact-checking-sentences', 'threshold'): ('a6e52e64551a24e4', '02a388da412de3a1'),
    ('fact-checking-sentences', 'window'): ('a6e52e64551a24e4', '2f24eead2e796e3a'),
    ('fact-checking-sentences+fenced', 'calibrator'): ('cc5a6491e4c57a26', '76882d4ec9da7bcc'),
    ('fact-checking-sentences+fenced', 'defaults'): ('cc5a6491e4c57a26', '4156b40e9dab0ec1'),
    ('fact-checking-sentences+fenced', 'labels'): ('def843334249cb04', '9ccf8ec90f1f6402'),
    ('fact-checking-sentences+fenced', 'system'): ('ce2f66fe6cc1809e', '79728258bd5f9a36'),
    ('fact-checking-sentences+fenced', 'template'): ('cc5a6491e4c57a26', '4156b40e9dab0ec1'),
    ('fact-checking-sentences+fenced', 'threshold'): ('cc5a6491e4c57a26', '435a408f53fa3e17'),
    ('relevancy', 'calibrator'): ('ccda01042c16e23a', 'd67cababc0d45bd9'),
    ('relevancy', 'defaults'): ('ccda01042c16e23a', 'a4e32140de46cf69'),
    ('relevancy', 'labels'): ('d4177c048f313ff4', '5def6848999edf78'),
    ('relevancy', 'system'): ('622a2e09548ec479', 'c78d25741b202071'),
    ('relevancy', 'template'): ('b4299a6e3b0b6eff', 'ef4c09f2cc704c31'),
    ('relevancy', 'threshold'): ('ccda01042c16e23a', 'cf0f26c2b301795b'),
    ('relevancy+fenced', 'calibrator'): ('5da635f8a9ef323c', 'f4e037321dfd23a8'),
    ('relevancy+fenced', 'defaults'): ('5da635f8a9ef323c', '1ded873d99bf7705'),
    ('relevancy+fenced', 'labels'): ('783c4cccb4d43114', 'a8456566717d9420'),
    ('relevancy+fenced', 'system'): ('faaf34f90fe855ea', '576b04020d96c2d9'),
    ('relevancy+fenced', 'template'): ('5da635f8a9ef323c', '1ded873d99bf7705'),
    ('relevancy+fenced', 'threshold'): ('5da635f8a9ef323c', '6e75d926580826f9'),
}

_SPECS = {"none": None, "gemma-3-270m": "0966fda6543f5a3d", "bespoke-minicheck-7b": "9dbd101383bf4599"}


class _SpecModel:
    """A model as construction reads it (its spec); building an evaluator asks it nothing."""

    id = "spec-only"

    def __init__(self, spec):
        self.spec = spec


@pytest.mark.parametrize("spec_id", list(_SPECS))
def test_identities_and_template_hashes_are_those_main_wrote(spec_id):
    spec = None if spec_id == "none" else load_spec(spec_id)
    assert (spec.spec_hash if spec else None) == _SPECS[spec_id]  # the spec hash itself is unchanged
    for (name, option), (template_hash, evaluator_hash) in MAIN_HASHES.items():
        options = _OPTIONS[option](registered_evaluator(name.partition("+")[0]).task)
        config = evaluator_config(name, spec, **options)
        ident = config.identity(_SPECS[spec_id])
        assert (config.template_hash, ident.evaluator_hash) == (template_hash, evaluator_hash), (name, option)
        if spec is not None:  # built, on a model with that spec, it says the same
            built = build_evaluator(name, _SpecModel(spec), **options)
            assert (built.template_hash, evaluator_identity(built)) == (template_hash, ident), (name, option)
    # every template name shipped before the class registry (relevancy-spring-ai came after)
    assert {n.partition("+")[0] for n, _ in MAIN_HASHES} == set(evaluator_names()[:4])


def test_the_shipped_names_keep_their_order_tasks_and_descriptions():
    assert evaluator_names()[:7] == BUILTIN_NAMES
    assert evaluator_tasks()[:2] == ("fact-check", "relevancy")
    assert [registered_evaluator(n).task for n in evaluator_names()[:7]] == ["fact-check"] * 3 + ["relevancy"] * 2 + [
        "fact-check"] * 2
    assert registered_evaluator("bespoke-minicheck").description.startswith("Fact-checking with MiniCheck")
    # the order is the one explicit tuple's: its classes, then the ensembles' entries
    assert [getattr(item, "__name__", getattr(item, "name", None)) for item in BUILTIN_EVALUATORS] == [
        "FactCheckingEvaluator", "RelevancyEvaluator", "cascade", "jury"]


def test_the_builtin_order_does_not_depend_on_import_order():
    # a fresh interpreter that imports the modules in the reverse of their sorted order first
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT / "src")!r})
        import judgelab.evaluators.relevancy, judgelab.evaluators._ensembles, judgelab.evaluators.fact_checking
        from judgelab.evaluators import evaluator_names
        print(",".join(evaluator_names()))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert tuple(out.stdout.strip().split(",")) == BUILTIN_NAMES


def test_an_evaluator_takes_one_config_or_its_parameters():
    model = _SpecModel(load_spec("gemma-3-270m"))
    config = FactCheckingEvaluator.config_for(threshold=0.7, decompose=True)
    ev = FactCheckingEvaluator(model, config)
    assert ev.config() is config and ev.settings is config
    assert (ev.name, ev.threshold, ev.decompose) == ("fact-checking-sentences", 0.7, True)
    assert FactCheckingEvaluator(model, threshold=0.7, decompose=True).config() == config
    with pytest.raises(ParameterError, match="not both"):
        FactCheckingEvaluator(model, config, threshold=0.5)
    with pytest.raises(ParameterError, match="config of FactCheckingEvaluator"):
        RelevancyEvaluator(model, config)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.threshold = 0.1  # type: ignore[misc]


def test_a_misspelled_or_mistyped_parameter_fails_at_construction_naming_the_parameters():
    model = _SpecModel(load_spec("gemma-3-270m"))
    with pytest.raises(ParameterError, match=r"takes no parameter 'threshhold' \(did you mean 'threshold'\?\); "
                                             r"its parameters are prompt_template, threshold, .*top_windows") as bad:
        FactCheckingEvaluator(model, threshhold=0.7)  # type: ignore[call-arg]
    assert bad.value.name == "threshhold"
    with pytest.raises(ParameterError, match="takes no parameter 'decompose'.*its parameters are prompt_template"):
        RelevancyEvaluator(model, decompose=True)  # type: ignore[call-arg]
    with pytest.raises(ParameterTypeError, match="'threshold' parameter of FactCheckingEvaluator must be float. "
                                                 "Got '0.7' \\(str\\)"):
        FactCheckingEvaluator(model, threshold="0.7")  # type: ignore[arg-type]
    with pytest.raises(ParameterTypeError, match="'decompose' parameter"):
        FactCheckingEvaluator.config_for(decompose="yes")  # type: ignore[typeddict-item]
    # by name, the registry refuses the same, in the same words, built or not
    for call in (lambda: build_evaluator("fact-checking", model, threshhold=0.7),
                 lambda: evaluator_config("fact-checking-sentences", None, threshhold=0.7)):
        with pytest.raises(ParameterError, match="FactCheckingEvaluator takes no parameter 'threshhold'"):
            call()
    with pytest.raises(ParameterError, match="RelevancyEvaluator takes no parameter 'window'"):
        build_evaluator("relevancy", model, window=2)


class _Scripted:
    """The scripted model the evaluator tests use, with the token counts a template evaluator reads."""

    def __init__(self, scripted_model, script):
        self.base = scripted_model(script)
        self.id, self.spec, self.n_ctx = self.base.id, self.base.spec, self.base.n_ctx

    def __getattr__(self, name):
        return getattr(self.base, name)

    def count_tokens(self, text):
        return len(text.split())

    def tokenize(self, text):
        return list(range(len(text.split())))


def test_a_new_evaluator_is_one_registered_class(scripted_model):
    @registered_as("test-only-politeness", task="politeness")
    class PolitenessEvaluator(YesNoEvaluator):
        default_name = "politeness"
        default_template = "Is this reply polite?\n{response}"
        required_placeholders = ("response",)

        def template_values(self, request):
            return {"response": request.response_content}

    # the decorator only attaches the names: nothing is registered until the class is
    assert "test-only-politeness" not in evaluator_names()
    assert register_evaluator_class(PolitenessEvaluator) is PolitenessEvaluator
    assert evaluator_names()[:7] == BUILTIN_NAMES and evaluator_names()[-1] == "test-only-politeness"
    with pytest.raises(JudgelabError, match="already registered; pass replace=True"):
        register_evaluator_class(PolitenessEvaluator)
    assert register_evaluator_class(PolitenessEvaluator, replace=True) is PolitenessEvaluator
    model = _Scripted(scripted_model, {"Thank you kindly": 0.9, "Go away": 0.2})
    ev = build_evaluator("test-only-politeness", model, threshold=0.6)
    assert isinstance(ev, PolitenessEvaluator)
    assert ev.evaluate(EvaluationRequest(user_text="", response_content="Thank you kindly")).passed
    assert not ev.evaluate(EvaluationRequest(user_text="", response_content="Go away")).passed
    # its identity and template hash are its config's, read by name without a model
    config = evaluator_config("test-only-politeness", None, threshold=0.6)
    assert isinstance(config, TemplateConfig) and config == ev.config()
    assert (config.kind, config.name, config.threshold) == (PolitenessEvaluator, "test-only-politeness", 0.6)
    assert ev.template_hash == config.template_hash
    assert evaluator_identity(ev) == config.identity(model.spec.spec_hash)
    assert evaluator_config("test-only-politeness+fenced", None) == build_evaluator(
        "test-only-politeness+fenced", model).config()
    # its parameters are its base's, checked alike
    with pytest.raises(ParameterError, match="PolitenessEvaluator takes no parameter 'treshold'"):
        PolitenessEvaluator(model, treshold=0.6)  # type: ignore[call-arg]


def test_an_undecorated_class_is_refused_with_what_to_do():
    class Unnamed(YesNoEvaluator):
        pass

    with pytest.raises(JudgelabError, match="no evaluator names; decorate it with @registered_as"):
        register_evaluator_class(Unnamed)


def _docs_example() -> str:
    """The worked example of docs/architecture.md ("Adding an evaluator"), as the page shows it."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = page.split("## Adding an evaluator", 1)[1].split("\n## ", 1)[0]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_docs_worked_example_is_a_user_module_that_registers_after_the_builtins(tmp_path, scripted_model):
    source = _docs_example()
    assert "class PolitenessEvaluator(YesNoEvaluator)" in source and "judgelab.evaluators._" not in source
    path = tmp_path / "my_evaluators_docs_example.py"
    path.write_text(source, encoding="utf-8")
    before = evaluator_names()
    spec = importlib.util.spec_from_file_location("my_evaluators_docs_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert evaluator_names() == (*before, "politeness")  # appended; no built-in moved
    assert evaluator_names()[:7] == BUILTIN_NAMES
    model = _Scripted(scripted_model, {"Thank you kindly": 0.9, "Go away": 0.2})
    ev = build_evaluator("politeness", model)
    assert isinstance(ev, module.PolitenessEvaluator) and ev.name == "politeness"
    assert ev.evaluate(EvaluationRequest(user_text="", response_content="Thank you kindly")).passed
    assert not ev.evaluate(EvaluationRequest(user_text="", response_content="Go away")).passed
    assert registered_evaluator("politeness").description == "Is the reply polite?"
    assert evaluator_config("politeness", None) == module.PolitenessEvaluator.config_for()


def test_an_evaluator_in_a_users_own_module_registers_without_moving_a_builtin(tmp_path):
    (tmp_path / "acme_judges.py").write_text(textwrap.dedent("""
        from judgelab.evaluators import (EvaluationRequest, EvaluatorName, RelevancyEvaluator, YesNoEvaluator,
                                         register_evaluator_class, registered_as)

        @registered_as(EvaluatorName("aaa-tone", task="tone", default_for_task=True),
                       EvaluatorName("aaa-tone-strict", task="tone", options={"threshold": 0.9}))
        class ToneEvaluator(YesNoEvaluator):
            default_name = "aaa-tone"
            default_template = "Is the tone calm?\\n{response}"
            required_placeholders = ("response",)

            def template_values(self, request: EvaluationRequest) -> dict[str, str]:
                return {"response": request.response_content}

        register_evaluator_class(ToneEvaluator)

        @register_evaluator_class
        @registered_as("a-relevancy", task="relevancy")  # sorts before every built-in; a task default stays
        class StrictRelevancy(RelevancyEvaluator):
            default_template = RelevancyEvaluator.default_template + " Be strict."
    """), encoding="utf-8")
    code = textwrap.dedent(f"""
        import sys
        sys.path[:0] = [{str(ROOT / "src")!r}, {str(tmp_path)!r}]
        import acme_judges  # the user's module first: the built-ins still come first, in their order
        from judgelab.evaluators import default_evaluator_name, evaluator_config, evaluator_names, evaluator_tasks
        print(",".join(evaluator_names()))
        print(",".join(evaluator_tasks()))
        print(default_evaluator_name("tone"), default_evaluator_name("relevancy"))
        print(evaluator_config("aaa-tone-strict").threshold, evaluator_config("a-relevancy").kind.__name__)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    names, tasks, defaults, configs = out.stdout.strip().splitlines()
    assert tuple(names.split(",")) == (*BUILTIN_NAMES, "aaa-tone", "aaa-tone-strict", "a-relevancy")
    assert tasks.split(",") == ["fact-check", "relevancy", "tone"]
    assert defaults == "aaa-tone relevancy"
    assert configs == "0.9 StrictRelevancy"
