"""Rendering a (system, user) pair into a model's prompt text.

Chat-style specs use the model's Jinja chat template (the GGUF's own, or the
spec's ``chat_template``), rendered the way transformers renders it; raw-style
specs fill the spec's ``raw_template``.
"""

from __future__ import annotations

from functools import lru_cache

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from judgelab.errors import SpecError
from judgelab.specs import PromptFormat

__all__ = ["render_prompt"]


def _raise(message: str) -> None:
    raise jinja2.TemplateError(message)


@lru_cache(maxsize=16)
def _compile(template: str) -> jinja2.Template:
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = _raise
    return env.from_string(template)


def render_prompt(
    fmt: PromptFormat,
    user: str,
    *,
    system: str | None = None,
    model_template: str | None = None,
    bos_text: str = "",
    eos_text: str = "",
    model_id: str = "",
) -> str:
    """The prompt text for ``user`` (and ``system``, else the spec's system prompt).

    The returned text does not start with the BOS token; the backend adds it
    when tokenising.
    """
    system = fmt.system if system is None else system
    if fmt.style == "raw":
        text = fmt.raw_template.replace("{system}", system or "").replace("{user}", user)
        return text.lstrip("\n") if not system else text
    template = fmt.chat_template or model_template
    if not template:
        raise SpecError(
            f"Model {model_id!r} has prompt style 'chat' but its weights carry no chat template. "
            "Set `prompt.chat_template` in its spec, or use `style = \"raw\"`."
        )
    messages = ([{"role": "system", "content": system}] if system else []) + [
        {"role": "user", "content": user}
    ]
    try:
        text = _compile(template).render(
            messages=messages,
            add_generation_prompt=True,
            bos_token=bos_text,
            eos_token=eos_text,
        )
    except jinja2.TemplateError as exc:
        raise SpecError(f"Chat template of model {model_id!r} failed to render: {exc}") from exc
    if bos_text and text.startswith(bos_text):
        text = text[len(bos_text):]
    return text
