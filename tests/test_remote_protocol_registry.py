"""A remote protocol is one class: registering a new one makes its name a valid spec protocol, its scheme a
short form, and the remote judge speaks it, against ``judgelab serve`` (a real uvicorn on 127.0.0.1).

The new protocol here asks judgelab's own ``/v1/systemone`` (TypeSafe's System One API), which answers P(yes)
directly: the remote judge's probability must equal the same System One question asked in process.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from judgelab.engine import load_model
from judgelab.errors import RemoteError, SpecError
from judgelab.server import ServerConfig, ServerThread, create_app
from judgelab.specs import REMOTE_SCHEMES, RemoteAnswer, RemoteProtocol, load_spec, register_remote_protocol, remote_protocol, remote_protocols
from judgelab.wire import ask_systemone


@register_remote_protocol
class SystemOne(RemoteProtocol):
    """TypeSafe's System One: one ``noul`` question about the user's text; the server answers P(yes)."""

    name = "systemone-test"
    scheme = "systemone-test"
    path = "systemone"
    gives_probabilities = True
    writes_text = False

    def body(self, spec, call):
        question = {"type": "noul", "instructions": spec.instructions}
        return {"model": spec.model, "state": {"input": call.messages[-1][1]}, "questions": {"q": question}}

    def read(self, data, labels):
        yes, no = labels
        p = float(data["answers"]["q"]["noul"])
        return RemoteAnswer(probabilities={yes: p, no: 1.0 - p}, prompt_tokens=data["usage"]["input_tokens"])


def test_the_shipped_protocols_and_their_short_forms_come_from_the_registry():
    shipped = {"openai-chat", "openai-completions", "ollama-chat", "decisions"}
    assert shipped <= {p.name for p in remote_protocols()}
    assert {s: REMOTE_SCHEMES[s] for s in ("openai", "openai-completions", "ollama", "decisions", "openai+text",
                                            "ollama+text")} == {
        "openai": ("openai-chat", "OPENAI_API_KEY"), "openai-completions": ("openai-completions", "OPENAI_API_KEY"),
        "ollama": ("ollama-chat", None), "decisions": ("decisions", "OPENAI_API_KEY"),
        "openai+text": ("openai-chat", "OPENAI_API_KEY"), "ollama+text": ("ollama-chat", None)}
    assert "decisions+text" not in REMOTE_SCHEMES and "openai-completions+text" not in REMOTE_SCHEMES


def test_a_registered_protocol_is_a_spec_value_and_a_short_form(tmp_path):
    assert REMOTE_SCHEMES["systemone-test"] == ("systemone-test", None)
    spec = load_spec("systemone-test:http://127.0.0.1:9/v1#judge")
    assert (spec.remote.protocol, spec.prompt.style) == ("systemone-test", "chat")
    assert spec.remote.wire_protocol is remote_protocol("systemone-test")
    path = tmp_path / "judge.toml"
    path.write_text('id = "judge"\nfamily = "x"\nbackends = ["remote"]\n\n[remote]\n'
                    'url = "http://127.0.0.1:9/v1"\nprotocol = "systemone-test"\nmodel = "judge"\n', encoding="utf-8")
    assert load_spec(path).remote.wire_protocol.path == "systemone"


def test_an_unknown_protocol_or_scheme_is_refused_with_the_known_ones(tmp_path):
    path = tmp_path / "judge.toml"
    path.write_text('id = "judge"\nfamily = "x"\n\n[remote]\nurl = "http://h/v1"\nprotocol = "openai-chatt"\n'
                    'model = "m"\n', encoding="utf-8")
    with pytest.raises(SpecError) as err:
        load_spec(path)
    assert "remote.protocol" in str(err.value) and "'openai-chat'" in str(err.value)
    with pytest.raises(SpecError) as err:
        load_spec("systemone-tst:http://h/v1#m")
    assert "systemone-test" in str(err.value)


def test_a_second_protocol_cannot_take_a_name_or_short_form():
    class Clash(SystemOne):
        name = "systemone-clash"

    with pytest.raises(SpecError, match="short form 'systemone-test'"):
        register_remote_protocol(Clash)
    Clash.name, Clash.scheme = "decisions", None
    with pytest.raises(SpecError, match="named 'decisions'"):
        register_remote_protocol(Clash)
    assert "systemone-clash" not in {p.name for p in remote_protocols()}


def test_the_new_protocol_judges_against_judgelab_serve(judge_model):
    server = ServerThread(create_app(judge_model, ServerConfig()), host="127.0.0.1", port=0).start()
    try:
        texts = ["Paris is the capital of France.", "Cats lay eggs."]
        with load_model(f"systemone-test:{server.url}/v1#{judge_model.id}") as remote:
            got = remote.judge_many([remote.render(t) for t in texts], ["Yes", "No"])
            usage = remote.usage()
            with pytest.raises(RemoteError, match="answers questions only"):
                remote.complete(remote.render("Say something."))
        question = SimpleNamespace(type="noul", instructions=remote.remote.instructions, criteria=None)
        for text, judgment in zip(texts, got):
            answers, tokens = ask_systemone(judge_model, {"input": text}, {"q": question})
            assert judgment.mode == "decisions"
            assert judgment.probabilities["Yes"] == pytest.approx(answers["q"]["noul"], abs=1e-6)
            assert judgment.prompt_tokens == tokens
        assert usage["requests"] == len(texts) + 2 and usage["failures"] == 0  # + the model list and the probe
    finally:
        server.stop()
