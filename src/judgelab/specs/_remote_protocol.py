"""A remote protocol is one class; one registry holds them all.

A ``RemoteProtocol`` subclass says everything judgelab knows about one way of
asking a served judge: its name (the spec's ``[remote] protocol``), its short
form (``SCHEME:URL#MODEL``, plus ``SCHEME+text`` when it can read reply text),
the path it posts to, the request body, how a JSON answer becomes a
``RemoteAnswer`` (the label reader), where a free-text reply is, and how the
server lists its models. ``@register_remote_protocol`` puts it in the registry,
and everything else is derived from there: the values a spec's ``protocol``
may take, the short forms ``load_spec`` accepts (``REMOTE_SCHEMES``), and what
the engine's remote judge sends and reads. Adding a protocol is one class in
one file (docs/architecture.md, "Adding a remote protocol").

Why it lives with the specs and not in the engine: a spec is checked when it
is read (a misspelt protocol or scheme is a ``SpecError`` naming the known
ones), and the spec layer sits below the engine, so it may not import it. A
protocol is pure (JSON in, JSON out: it builds a body and reads a mapping; it
never opens a connection), so it needs nothing from the engine. The engine
owns the rest: the HTTP client (retries, concurrency, timeouts), pooling
top logprobs into label probabilities, the up-front server check; it asks
``remote_protocol(spec.protocol)`` for what differs between protocols.
"""

from __future__ import annotations

import abc
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, TypeVar

from judgelab.errors import RemoteError, SpecError


class RemoteSettings(Protocol):
    """What a protocol reads of a remote spec (``judgelab.specs.RemoteSpec``, which validates its
    protocol name against this module's registry, so this module may not import it)."""

    @property
    def url(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def mode(self) -> str: ...
    @property
    def max_tokens(self) -> int: ...
    @property
    def top_logprobs(self) -> int: ...
    @property
    def instructions(self) -> str: ...


__all__ = [
    "Messages", "REMOTE_SCHEMES", "RemoteAnswer", "RemoteCall", "RemoteProtocol", "RemoteSettings", "register_remote_protocol",
    "remote_protocol", "remote_protocols",
]

Messages = tuple[tuple[str, str], ...]
"""Chat messages as ``(role, content)`` pairs."""

JsonObject = dict[str, object]
"""A JSON object judgelab sends."""


@dataclass(frozen=True)
class RemoteAnswer:
    """One server answer, before the labels are read from it.

    ``top`` holds ``(token text, logprob)`` alternatives at the first
    generated position (``None`` when the server sent no logprobs);
    ``probabilities`` the label probabilities a server gave directly.
    """

    text: str = ""
    top: tuple[tuple[str, float], ...] | None = None
    probabilities: dict[str, float] | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass(frozen=True)
class RemoteCall:
    """What one request asks: a judgment over ``labels``, or free text when ``labels`` is empty.

    ``prompt`` is the text rendered here (what a protocol with
    ``renders_prompt`` sends), ``messages`` the ``(role, content)`` turns (what
    a chat protocol sends); ``logprobs`` says whether to ask for top logprobs.
    """

    prompt: str
    messages: Messages
    labels: tuple[str, ...]
    max_tokens: int
    logprobs: bool
    stop: tuple[str, ...] = ()

    @classmethod
    def judgment(cls, spec: RemoteSettings, prompt: str, messages: Messages, labels: Sequence[str]) -> RemoteCall:
        """One judgment: the spec's ``max_tokens``; logprobs unless the spec reads reply text."""
        return cls(prompt, messages, tuple(labels), spec.max_tokens, spec.mode == "logprobs")

    @classmethod
    def free_text(cls, prompt: str, messages: Messages, max_tokens: int, stop: Sequence[str] = ()) -> RemoteCall:
        """Free greedy text, up to ``max_tokens`` or a stop string; no logprobs."""
        return cls(prompt, messages, (), max_tokens, False, tuple(stop))

    @property
    def is_free_text(self) -> bool:
        return not self.labels


class RemoteProtocol(abc.ABC):
    """One way of asking a served judge; subclass it, set the class attributes, write ``body`` and ``read``.

    Class attributes
    ----------------
    name
        The spec's ``[remote] protocol`` value.
    path
        Where a judgment is posted, relative to the spec's ``url``.
    scheme
        The short form ``SCHEME:URL#MODEL`` (``None``: spec files only); ``text_scheme`` adds
        ``SCHEME+text`` (reads the reply's label word); ``api_key_env`` is the short form's API key variable.
    renders_prompt
        The prompt is rendered here from the spec's prompt format and sent as text (a short form's
        prompt style is then ``raw``); otherwise the ``(system, user)`` messages are sent and the
        server applies its chat template.
    gives_probabilities
        The server answers label probabilities itself (``RemoteAnswer.probabilities``): no logprobs to
        pool, and the judgment's mode is ``decisions``.
    writes_text
        Free text can be asked for (``RemoteJudgeModel.complete``); ``reply_text`` reads it.
    models_path
        Where the server lists its models (``None``: it has no list; the probe judgment checks the rest).
    """

    name: ClassVar[str]
    path: ClassVar[str]
    scheme: ClassVar[str | None] = None
    text_scheme: ClassVar[bool] = False
    api_key_env: ClassVar[str | None] = None
    renders_prompt: ClassVar[bool] = False
    gives_probabilities: ClassVar[bool] = False
    writes_text: ClassVar[bool] = True
    models_path: ClassVar[str | None] = "models"

    @abc.abstractmethod
    def body(self, spec: RemoteSettings, call: RemoteCall) -> JsonObject:
        """The JSON body that asks ``spec``'s server what ``call`` asks."""

    @abc.abstractmethod
    def read(self, data: Any, labels: Sequence[str]) -> RemoteAnswer:
        """The ``RemoteAnswer`` in a server's JSON answer (a shape error may raise KeyError, TypeError...)."""

    def reply_text(self, data: Any) -> str:
        """The text of a free-text answer (only asked when ``writes_text``)."""
        raise NotImplementedError(f"the {self.name} protocol does not say where a reply's text is")

    def listed_models(self, data: Any) -> list[str]:
        """The model names in the answer to ``GET models_path`` (OpenAI's ``{"data": [{"id"}]}`` by default)."""
        return [m.get("id", "") for m in data.get("data", [])]

    def served_names(self, model: str) -> set[str]:
        """The names under which the server may list ``model``."""
        return {model}

    # -- what the engine calls (not overridden) ------------------------------------------

    def request(self, spec: RemoteSettings, call: RemoteCall) -> tuple[str, JsonObject]:
        """The ``(path, JSON body)`` for ``call``.

        Raises
        ------
        RemoteError
            When ``call`` asks for free text and the protocol answers questions only (``unsupported``).
        """
        if call.is_free_text and not self.writes_text:
            raise RemoteError(f"The {self.name} protocol answers questions only; {spec.model} at {spec.url} cannot "
                              "write free text (use an openai-chat or ollama-chat spec for that).", url=spec.url,
                              reason="unsupported")
        return self.path, self.body(spec, call)

    def answer(self, spec: RemoteSettings, data: Any, labels: Sequence[str], url: str) -> RemoteAnswer:
        """The ``RemoteAnswer`` in a server's JSON answer, checked.

        Raises
        ------
        RemoteError
            When the answer lacks what the protocol promises (``bad_response``), a
            server refused the question (``refused``), or logprobs were
            asked for and not given (``no_logprobs``; ``no_label`` when the reply was empty).
        """
        try:
            answer = self.read(data, labels)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            raise RemoteError(f"The judge server at {url} answered in a shape the {self.name} protocol does not "
                              f"have ({type(exc).__name__}: {exc}); is the protocol right?", url=url,
                              reason="bad_response") from exc
        if spec.mode == "logprobs" and not self.gives_probabilities and not answer.top:
            if answer.completion_tokens == 0 and not answer.text:
                raise RemoteError(f"The judge at {url} ended its reply before writing a token (its most likely "
                                  "first token was end-of-turn), so the server returned no logprobs to read a label "
                                  "from.", url=url, reason="no_label")
            raise RemoteError(f"The judge server at {url} ignored logprobs (its answer has none); use a server that "
                              "returns them (llama.cpp: --logits_all True; Ollama 0.12.11+) or text mode (mode = "
                              '"text", scheme openai+text / ollama+text).', url=url, reason="no_logprobs")
        return answer

    def __repr__(self) -> str:
        return f"<remote protocol {self.name!r}>"


_REGISTRY: dict[str, RemoteProtocol] = {}

P = TypeVar("P", bound=type[RemoteProtocol])


def _short_forms(protocol: RemoteProtocol) -> list[str]:
    if protocol.scheme is None:
        return []
    return [protocol.scheme] + ([protocol.scheme + "+text"] if protocol.text_scheme else [])


def _where(cls: type[RemoteProtocol]) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def register_remote_protocol(cls: P) -> P:
    """Class decorator: register the protocol ``cls`` under its ``name`` (and its short forms).

    Registering the same class again (a module reloaded) replaces it.

    Raises
    ------
    SpecError
        When the class has no ``name`` or ``path``, or another protocol already has its name or a short form.
    """
    for attribute in ("name", "path"):
        if not isinstance(getattr(cls, attribute, None), str):
            raise SpecError(f"Remote protocol {_where(cls)} needs a class attribute {attribute!r} (a string).")
    protocol = cls()
    previous = _REGISTRY.get(cls.name)
    if previous is not None and _where(type(previous)) != _where(cls):
        raise SpecError(f"Remote protocol {_where(cls)} is named {cls.name!r}, as {_where(type(previous))} "
                        "already is; pick another name.")
    schemes = {form: p for p in _REGISTRY.values() if p.name != cls.name for form in _short_forms(p)}
    for form in _short_forms(protocol):
        if form in schemes:
            raise SpecError(f"Remote protocol {_where(cls)} claims the short form {form!r}:, which protocol "
                            f"{schemes[form].name!r} already has; pick another scheme.")
    _REGISTRY[cls.name] = protocol
    return cls


def remote_protocol(name: str) -> RemoteProtocol:
    """The registered protocol called ``name``.

    Raises
    ------
    SpecError
        When no protocol has that name (the message lists the known ones).
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        raise SpecError(f"Unknown remote protocol {name!r}; use one of {sorted(_REGISTRY)} "
                        "(or register one: docs/architecture.md, 'Adding a remote protocol').") from None


def remote_protocols() -> tuple[RemoteProtocol, ...]:
    """Every registered protocol, in registration order."""
    return tuple(_REGISTRY.values())


class _Schemes(Mapping[str, tuple[str, "str | None"]]):
    """Short-form scheme -> (protocol name, API key variable), read from the registry each time."""

    def _table(self) -> dict[str, tuple[str, str | None]]:
        table = {p.scheme: (p.name, p.api_key_env) for p in _REGISTRY.values() if p.scheme is not None}
        table.update({f"{p.scheme}+text": (p.name, p.api_key_env) for p in _REGISTRY.values()
                      if p.scheme is not None and p.text_scheme})
        return table

    def __getitem__(self, scheme: str) -> tuple[str, str | None]:
        return self._table()[scheme]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())

    def __repr__(self) -> str:
        return repr(self._table())


REMOTE_SCHEMES: Mapping[str, tuple[str, str | None]] = _Schemes()
"""Short forms of a remote judge (``--model openai:http://127.0.0.1:8080/v1#judge``): scheme -> (protocol,
API key variable), derived from the registered protocols. ``SCHEME+text`` reads reply text instead of logprobs."""
