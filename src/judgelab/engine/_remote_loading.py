"""Loading a remote judge: options, the API key, and a check that the server is the one named.

``load_remote(spec, options)`` builds the client and, unless ``check=False``,
asks the server up front, so that a wrong URL, a wrong key, a model the
server does not have, or a server that ignores ``logprobs`` is one clear
``RemoteError`` before any row is scored (the CLI prints it in one line and
exits 2), instead of an error record on every row.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from judgelab.engine._remote_backend import RemoteBackend
from judgelab.engine._remote_client import ClientConfig, RemoteClient
from judgelab.engine._remote_model import RemoteJudgeModel
from judgelab.errors import RemoteError
from judgelab.specs import ModelSpec

__all__ = ["LOCAL_ONLY_OPTIONS", "check_server", "load_remote"]

log = logging.getLogger(__name__)

#: In-process engine options that mean nothing for a judge on a server (ignored, logged).
LOCAL_ONLY_OPTIONS = frozenset({
    "n_threads", "n_threads_batch", "n_gpu_layers", "n_batch", "n_seq_max", "flash_attn", "kv_f32", "packed",
    "repack_weights", "label_head", "verbose", "device", "dtype", "batch_size", "gguf_file", "cache_dir",
})
_CLIENT_OPTIONS = ("concurrency", "timeout", "max_retries", "connect_retries", "backoff", "max_backoff")

_PROBE = ("Is two plus two equal to four? Answer Yes or No.", ("Yes", "No"))


def load_remote(spec: ModelSpec, options: dict[str, Any]) -> RemoteJudgeModel:
    """A ``RemoteJudgeModel`` for a spec with a ``[remote]`` table.

    Options: ``concurrency``, ``timeout``, ``max_retries``, ``connect_retries``, ``backoff``,
    ``max_backoff`` (override the spec's), ``api_key`` (instead of the
    variable the spec names), ``n_ctx`` (the context to check prompts
    against), ``check`` (ask the server up front; default true). In-process
    options such as ``n_threads`` are ignored.

    Raises
    ------
    RemoteError
        When the check finds the server unreachable, the key refused, the
        model unknown, or logprobs ignored.
    TypeError
        For an option no backend knows.
    """
    remote = spec.remote
    assert remote is not None
    options = dict(options)
    ignored = sorted(set(options) & LOCAL_ONLY_OPTIONS)
    if ignored:
        log.info("remote judge %s: ignoring in-process option(s) %s", spec.id, ignored)
    check = bool(options.pop("check", True))
    n_ctx = int(options.pop("n_ctx", None) or spec.context_length)
    key = options.pop("api_key", None) or (os.environ.get(remote.api_key_env) if remote.api_key_env else None)
    client_options = {k: options.pop(k) for k in _CLIENT_OPTIONS if k in options}
    unknown = sorted(set(options) - LOCAL_ONLY_OPTIONS)
    if unknown:
        raise TypeError(f"Unknown option(s) {unknown} for the remote backend; known: "
                        f"{sorted({*_CLIENT_OPTIONS, 'api_key', 'n_ctx', 'check'})}")
    config = ClientConfig(base_url=remote.url, api_key=key, key_env=remote.api_key_env,
                          **{"concurrency": remote.concurrency, "timeout": remote.timeout,
                             "max_retries": remote.max_retries, **client_options})
    model = RemoteJudgeModel(RemoteBackend(remote, RemoteClient(config), n_ctx), spec)
    if check:
        try:
            check_server(model)
        except BaseException:
            model.close()
            raise
    return model


def check_server(model: RemoteJudgeModel) -> None:
    """Ask the server for its models and one probe judgment; raise what is wrong.

    Raises
    ------
    RemoteError
        ``unreachable``, ``unauthorized``, ``unknown_model`` (the server lists
        its models and this one is not among them), ``not_found`` or
        ``no_logprobs``.
    """
    remote, client = model.remote, model.client
    if model.protocol.models_path is not None:
        _check_listed(model, model.protocol.models_path)
    text, labels = _PROBE
    try:
        model.judge(model.render(text), labels)
    except RemoteError as exc:
        if exc.reason != "no_label":  # a probe answered without a label still proves the rest
            raise
    log.info("remote judge %s at %s answers (%s)", remote.model, remote.url, client.counts)


def _check_listed(model: RemoteJudgeModel, path: str) -> None:
    remote, protocol = model.remote, model.protocol
    try:
        data = model.client.get(path, retry=False)
    except RemoteError as exc:
        if exc.reason == "not_found":  # the server has no model list: the probe says the rest
            return
        raise
    try:
        listed = [n for n in protocol.listed_models(data) if n]
    except (AttributeError, TypeError):
        return
    wanted = protocol.served_names(remote.model)
    if listed and not wanted & set(listed):
        shown = ", ".join(listed[:10]) + (f" (and {len(listed) - 10} more)" if len(listed) > 10 else "")
        raise RemoteError(f"The judge server at {model.client.url(path)} does not have model {remote.model!r}; it "
                          f"serves: {shown}.", url=model.client.url(path), status=404, reason="unknown_model")
