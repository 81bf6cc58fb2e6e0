"""judgelab's exception family.

Every error judgelab raises on purpose is a ``JudgelabError``; its message says
what was wrong, where, and what to do about it. Context travels as attributes
so that callers (the server, the CLI) can build their own messages.

::

    JudgelabError
    ├── SpecError                 a model spec file is missing or malformed
    ├── WeightsNotFoundError      no weight source of a spec yielded a file
    ├── WeightsChecksumError      a weight file's sha256 is not the one its spec pins
    ├── BackendUnavailableError   an optional backend's packages are missing
    ├── LabelError                label words cannot be read as tokens
    ├── ContextLengthError        a prompt does not fit the model's context
    ├── TemplateError             a prompt template lacks a placeholder
    ├── QuestionError             a typed question, criterion or state is malformed (also ValueError)
    ├── DataError                 a labelled-set row or a run file is malformed
    ├── ParameterError            a parameter value is out of range (also ValueError)
    ├── ParameterTypeError        a parameter of the wrong type (also TypeError)
    ├── PolicyMismatchError       a decision policy was calibrated for another judge
    ├── ExecutorError             an executor (Ray) is missing or lost its replicas
    ├── RemoteError               a remote judge's server refused, failed or answered without what was asked
    └── PartialRunError           rows of a run failed: no figures are published from it (the CLI exits 3)
"""

from __future__ import annotations

__all__ = [
    "JudgelabError",
    "SpecError",
    "WeightsNotFoundError",
    "WeightsChecksumError",
    "BackendUnavailableError",
    "LabelError",
    "ContextLengthError",
    "TemplateError",
    "QuestionError",
    "DataError",
    "ParameterError",
    "ParameterTypeError",
    "check_parameter",
    "PolicyMismatchError",
    "ExecutorError",
    "RemoteError",
    "PartialRunError",
    "PARTIAL_RUN_EXIT",
]

#: The exit code of a command whose run lost rows (``PartialRunError``): neither success (0), a failed
#: check (1) nor a user error (2).
PARTIAL_RUN_EXIT = 3


class JudgelabError(Exception):
    """Base class of every error judgelab raises on purpose."""


class SpecError(JudgelabError):
    """A model spec could not be found or read."""

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class WeightsNotFoundError(JudgelabError):
    """None of a model spec's weight sources produced a file."""

    def __init__(self, message: str, *, model_id: str, tried: list[str]) -> None:
        super().__init__(message)
        self.model_id = model_id
        self.tried = tried


class WeightsChecksumError(JudgelabError):
    """A weight file's sha256 is not the one its spec pins: a corrupt, truncated or different build."""

    def __init__(self, message: str, *, model_id: str, path: str, expected: str, actual: str) -> None:
        super().__init__(message)
        self.model_id = model_id
        self.path = path
        self.expected = expected
        self.actual = actual


class BackendUnavailableError(JudgelabError):
    """An engine backend needs packages that are not installed."""

    def __init__(self, message: str, *, backend: str, extra: str | None = None) -> None:
        super().__init__(message)
        self.backend = backend
        self.extra = extra


class LabelError(JudgelabError):
    """Label words that cannot be read from the model's next-token distribution."""

    def __init__(self, message: str, *, labels: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.labels = labels


class ContextLengthError(JudgelabError):
    """A prompt has more tokens than the model's context holds."""

    def __init__(self, n_tokens: int, n_ctx: int, *, what: str = "prompt") -> None:
        super().__init__(
            f"The {what} has {n_tokens} tokens but the model's context holds {n_ctx}. "
            "Shorten it, load the model with a larger n_ctx, or use an evaluator "
            "that splits documents into chunks."
        )
        self.n_tokens = n_tokens
        self.n_ctx = n_ctx


class TemplateError(JudgelabError):
    """A prompt template is missing placeholders it needs."""

    def __init__(self, message: str, *, missing: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.missing = missing


class QuestionError(JudgelabError, ValueError):
    """A typed question, a criterion or a judged state that cannot be used.

    Also a ``ValueError``, so callers validating arguments can catch either.
    ``name`` is the criterion (or question field) at fault, when there is one.
    """

    def __init__(self, message: str, *, name: str | None = None) -> None:
        super().__init__(message)
        self.name = name


class DataError(JudgelabError):
    """A labelled-set row, run record or other data file is malformed."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.field = field


class ParameterError(JudgelabError, ValueError):
    """A parameter value (a function argument or a command-line option) that cannot be used.

    Also a ``ValueError``, as Python code expects of a bad argument value.
    The message has one shape: "The 'NAME' parameter of WHERE must be
    WHAT. Got VALUE instead." ``name`` is the parameter.
    """

    def __init__(self, message: str, *, name: str | None = None) -> None:
        super().__init__(message)
        self.name = name


class ParameterTypeError(JudgelabError, TypeError):
    """A parameter of the wrong type (also a ``TypeError``, as Python code expects)."""


def check_parameter(ok: bool, name: str, where: str, must: str, value: object) -> None:
    """Raise ``ParameterError`` in the one message shape unless ``ok``."""
    if not ok:
        raise ParameterError(
            f"The {name!r} parameter of {where} must be {must}. Got {value!r} instead.", name=name
        )


class PolicyMismatchError(JudgelabError):
    """A decision policy was calibrated for another judge (model spec or template)."""

    def __init__(
        self, message: str, *, expected: dict[str, str | int | None], actual: dict[str, str | int | None],
    ) -> None:
        super().__init__(message)
        self.expected = expected
        self.actual = actual


class ExecutorError(JudgelabError):
    """A run's executor cannot run: its extra is missing, or its replicas fail.

    ``extra`` names the pip extra to install when that is the fix.
    """

    def __init__(self, message: str, *, executor: str, extra: str | None = None) -> None:
        super().__init__(message)
        self.executor = executor
        self.extra = extra


class RemoteError(JudgelabError):
    """A remote judge's server could not be reached, refused the request, or answered without what was asked.

    ``url`` is the address asked, ``status`` the HTTP status (``None`` when no
    answer came: a wrong host or port, a timeout), ``reason`` a short word for
    what went wrong (``"unreachable"``, ``"unauthorized"``, ``"unknown_model"``,
    ``"no_logprobs"``, ``"no_label"``, ``"server_error"``, ``"bad_request"``...).
    """

    def __init__(self, message: str, *, url: str = "", status: int | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.url = url
        self.status = status
        self.reason = reason


class PartialRunError(JudgelabError):
    """Rows of a run failed (or were never scored), so the run publishes no figures.

    ``n_failed`` of ``n_rows`` rows have no score; ``first_error`` is the
    first failure's message; ``stopped_early`` is true when scoring stopped
    because the judge stopped answering. The scores written so far are kept:
    the same command resumes, scoring only the missing rows.
    """

    def __init__(self, message: str, *, n_failed: int, n_rows: int, first_error: str = "",
                 stopped_early: bool = False) -> None:
        super().__init__(message)
        self.n_failed = n_failed
        self.n_rows = n_rows
        self.first_error = first_error
        self.stopped_early = stopped_early
