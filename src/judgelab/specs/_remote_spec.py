"""The ``[remote]`` table of a spec: a judge another process serves, and the protocol to ask it with."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from judgelab.errors import SpecError
from judgelab.specs._remote_protocol import RemoteProtocol, remote_protocol

__all__ = ["RemoteSpec"]


class RemoteSpec(BaseModel):
    """A judge served by another process (the ``[remote]`` table); the remote backend asks it over HTTP.

    ``url`` is the API's base (``http://127.0.0.1:8080/v1`` for OpenAI-compatible servers and
    ``/v1/decisions``, ``http://127.0.0.1:11434`` for Ollama). ``protocol`` names a registered
    remote protocol (``remote_protocols()``); judgelab ships:

    - ``openai-chat``: ``/chat/completions`` with ``logprobs`` and ``top_logprobs``; the server
      applies its chat template to ``[system, user]`` messages;
    - ``openai-completions``: ``/completions`` with ``logprobs``; the prompt is rendered here, as
      in process (raw templates), so an in-process judge and the same weights served agree;
    - ``ollama-chat``: Ollama's ``/api/chat`` with ``logprobs`` (Ollama 0.12.11 and later);
    - ``decisions``: ``/decisions`` (vLLM, SGLang, judgelab serve): the probabilities directly.

    ``mode = "text"`` reads the reply's label word for servers that give no logprobs: scores are
    1 or 0. ``api_key_env`` names the environment variable that holds the API key (none is sent
    when it is unset). ``top_logprobs`` is how many alternatives to ask for (OpenAI allows 20).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str
    protocol: str = "openai-chat"
    model: str
    mode: Literal["logprobs", "text"] = "logprobs"
    api_key_env: str | None = None
    top_logprobs: int = Field(20, ge=1, le=1000)
    max_tokens: int = Field(1, ge=1, le=64)
    concurrency: int = Field(4, ge=1, le=256)
    timeout: float = Field(60.0, gt=0)
    max_retries: int = Field(4, ge=0, le=20)
    instructions: str = "Answer the question in the input."
    """The question a ``decisions`` request asks about the rendered prompt."""

    @field_validator("protocol")
    @classmethod
    def _registered(cls, name: str) -> str:
        try:
            remote_protocol(name)
        except SpecError as exc:
            raise ValueError(str(exc)) from None
        return name

    @property
    def wire_protocol(self) -> RemoteProtocol:
        """The registered protocol this judge is asked with (what it sends and how its answers read)."""
        return remote_protocol(self.protocol)
