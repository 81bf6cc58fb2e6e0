"""Score calibrators: temperature scaling, Platt scaling and isotonic regression.

A calibrator maps a judge's score (a probability) to a better calibrated
one. ``fit(scores, labels)`` returns self and keeps the learned state in
trailing-underscore attributes; ``predict(scores)`` refuses to run before
``fit``; ``to_json``/``save`` and ``load_calibrator`` round-trip the state,
so an evaluator built with ``calibrator=load_calibrator(path)`` serves
calibrated scores.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

from judgelab.errors import DataError, JudgelabError

__all__ = [
    "CALIBRATORS",
    "Calibrator",
    "IsotonicCalibrator",
    "NotFittedError",
    "PlattCalibrator",
    "TemperatureScaling",
    "load_calibrator",
    "make_calibrator",
]

_EPS = 1e-6
_FORMAT = "judgelab-calibrator"


class NotFittedError(JudgelabError, AttributeError):
    """A calibrator was asked to predict before it was fitted."""


def _logit(p: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    q: npt.NDArray[np.float64] = np.clip(np.asarray(p, dtype=float), _EPS, 1 - _EPS)
    out: npt.NDArray[np.float64] = np.log(q) - np.log1p(-q)
    return out


def _sigmoid(z: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    out: npt.NDArray[np.float64] = 1.0 / (1.0 + np.exp(-z))
    return out


def _check_fit_input(scores: ArrayLike, labels: ArrayLike) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int_]]:
    s = np.asarray(scores, dtype=float).ravel()
    y = np.asarray(labels).ravel()
    if s.shape != y.shape or s.size == 0:
        raise JudgelabError(
            f"fit needs equal-length, non-empty scores and labels. Got {s.size} scores and {y.size} labels."
        )
    if not np.isin(y, (0, 1)).all():
        raise JudgelabError("fit labels must be 0 or 1.")
    return s, y.astype(int)


class Calibrator:
    """Base class: subclasses set ``kind`` and implement ``_fit``, ``_predict``, ``_params``."""

    kind: ClassVar[str] = ""
    _state: ClassVar[tuple[str, ...]] = ()

    def fit(self, scores: ArrayLike, labels: ArrayLike) -> "Calibrator":
        """Learn the mapping from scores (in [0, 1]) and labels (0/1); returns self."""
        s, y = _check_fit_input(scores, labels)
        self._fit(s, y)
        self.n_fit_ = int(s.size)
        return self

    def predict(self, scores: ArrayLike) -> npt.NDArray[np.float64]:
        """Calibrated scores, same shape as ``scores``."""
        if not self.is_fitted:
            raise NotFittedError(
                f"This {type(self).__name__} is not fitted yet. Call fit(scores, labels) "
                "or load a fitted one with load_calibrator(path)."
            )
        s = np.asarray(scores, dtype=float)
        out: npt.NDArray[np.float64] = np.clip(self._predict(s.ravel()), 0.0, 1.0).reshape(s.shape)
        return out

    @property
    def is_fitted(self) -> bool:
        return all(hasattr(self, name) for name in self._state)

    def to_dict(self) -> dict[str, object]:
        """The fitted state as a JSON-ready dict."""
        if not self.is_fitted:
            raise NotFittedError(f"This {type(self).__name__} is not fitted yet; nothing to save.")
        return {"format": _FORMAT, "version": 1, "kind": self.kind, "n_fit": self.n_fit_, "params": self._params()}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def save(self, path: str | Path) -> Path:
        """Write ``to_json()`` to ``path``; returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.to_json() + "\n", encoding="utf-8")
        return path

    def __repr__(self) -> str:
        if not self.is_fitted:
            return f"{type(self).__name__}()"
        params = ", ".join(f"{k}={v!r}" for k, v in self._params().items() if not isinstance(v, list))
        return f"{type(self).__name__}({params})"

    # subclass hooks
    def _fit(self, s: npt.NDArray[np.float64], y: npt.NDArray[np.int_]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _predict(self, s: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _params(self) -> dict[str, float | list[float]]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _load(self, params: dict[str, Any]) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


class TemperatureScaling(Calibrator):
    """``sigmoid(logit(p) / T)``: one parameter, keeps the ranking and the 0.5 point."""

    kind = "temperature"
    _state = ("temperature_",)

    def _fit(self, s: npt.NDArray[np.float64], y: npt.NDArray[np.int_]) -> None:
        from scipy.optimize import minimize_scalar

        z = _logit(s)

        def nll(log_t: float) -> float:
            p = np.clip(_sigmoid(z / np.exp(log_t)), 1e-12, 1 - 1e-12)
            return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))

        res = minimize_scalar(nll, bounds=(-5.0, 5.0), method="bounded")
        self.temperature_ = float(np.exp(res.x))

    def _predict(self, s: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return _sigmoid(_logit(s) / self.temperature_)

    def _params(self) -> dict[str, float | list[float]]:
        return {"temperature": self.temperature_}

    def _load(self, params: dict[str, Any]) -> None:
        self.temperature_ = float(params["temperature"])


class PlattCalibrator(Calibrator):
    """Platt scaling on the logit: ``sigmoid(a * logit(p) + b)`` (logistic regression)."""

    kind = "platt"
    _state = ("coef_", "intercept_")

    def _fit(self, s: npt.NDArray[np.float64], y: npt.NDArray[np.int_]) -> None:
        from sklearn.linear_model import LogisticRegression

        if y.min() == y.max():
            raise JudgelabError("Platt scaling needs both labels among the fitting rows.")
        lr = LogisticRegression(C=1e6, max_iter=1000)
        lr.fit(_logit(s).reshape(-1, 1), y)
        self.coef_ = float(lr.coef_[0, 0])
        self.intercept_ = float(lr.intercept_[0])

    def _predict(self, s: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return _sigmoid(self.coef_ * _logit(s) + self.intercept_)

    def _params(self) -> dict[str, float | list[float]]:
        return {"coef": self.coef_, "intercept": self.intercept_}

    def _load(self, params: dict[str, Any]) -> None:
        self.coef_ = float(params["coef"])
        self.intercept_ = float(params["intercept"])


class IsotonicCalibrator(Calibrator):
    """Isotonic regression: a non-decreasing step map, linear between fitted points."""

    kind = "isotonic"
    _state = ("x_thresholds_", "y_thresholds_")

    def _fit(self, s: npt.NDArray[np.float64], y: npt.NDArray[np.int_]) -> None:
        from sklearn.isotonic import IsotonicRegression

        iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip", increasing=True)
        iso.fit(s, y)
        self.x_thresholds_ = np.asarray(iso.X_thresholds_, dtype=float)
        self.y_thresholds_ = np.asarray(iso.y_thresholds_, dtype=float)

    def _predict(self, s: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        out: npt.NDArray[np.float64] = np.interp(s, self.x_thresholds_, self.y_thresholds_)
        return out

    def _params(self) -> dict[str, float | list[float]]:
        return {"x": self.x_thresholds_.tolist(), "y": self.y_thresholds_.tolist()}

    def _load(self, params: dict[str, Any]) -> None:
        self.x_thresholds_ = np.asarray(params["x"], dtype=float)
        self.y_thresholds_ = np.asarray(params["y"], dtype=float)
        if self.x_thresholds_.shape != self.y_thresholds_.shape or self.x_thresholds_.size == 0:
            raise ValueError("x and y must be non-empty lists of equal length")


CALIBRATORS: dict[str, type[Calibrator]] = {
    "temperature": TemperatureScaling,
    "platt": PlattCalibrator,
    "isotonic": IsotonicCalibrator,
}


def make_calibrator(kind: str) -> Calibrator:
    """A new, unfitted calibrator by name (``temperature``, ``platt``, ``isotonic``)."""
    try:
        return CALIBRATORS[kind]()
    except KeyError:
        raise JudgelabError(
            f"Unknown calibrator {kind!r}; choose one of {', '.join(CALIBRATORS)}."
        ) from None


def load_calibrator(path: str | Path) -> Calibrator:
    """Read a calibrator saved with ``Calibrator.save`` (or ``judgelab calibrate``).

    Raises
    ------
    DataError
        If the file is missing, not JSON, or not a saved calibrator.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataError(f"Cannot read calibrator {str(path)!r}: {exc.strerror or exc}.", path=str(path)) from exc
    except json.JSONDecodeError as exc:
        raise DataError(f"{path} is not valid JSON ({exc.msg}).", path=str(path), line=exc.lineno) from exc
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        raise DataError(
            f"{path} is not a judgelab calibrator file (expected \"format\": \"{_FORMAT}\"). "
            "Write one with 'judgelab calibrate' or Calibrator.save().",
            path=str(path),
            field="format",
        )
    kind = data.get("kind")
    if kind not in CALIBRATORS:
        raise DataError(
            f"{path} names calibrator kind {kind!r}; known kinds: {', '.join(CALIBRATORS)}.",
            path=str(path),
            field="kind",
        )
    cal = CALIBRATORS[kind]()
    try:
        cal._load(data.get("params") or {})
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"{path} has malformed 'params' for a {kind} calibrator: {exc}.", path=str(path), field="params") from exc
    cal.n_fit_ = int(data.get("n_fit") or 0)
    return cal
