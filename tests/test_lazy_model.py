"""The one lazy loader (``judgelab.calibration.LazyModel``): by id, by loader, or around a loaded model."""

from __future__ import annotations

from judgelab.calibration import LazyModel
from judgelab.specs import load_spec


def test_by_id_the_spec_is_read_without_loading_and_the_weights_load_on_first_use():
    lazy = LazyModel("gemma-3-270m", {"n_threads": 1})
    spec = load_spec("gemma-3-270m")
    assert lazy.spec_before_loading.spec_hash == spec.spec_hash and lazy.model_id == "gemma-3-270m"
    assert not lazy.loaded and not lazy.used
    try:
        model = lazy()
        assert lazy.loaded and lazy.used and lazy.load() is model  # loaded once
        assert lazy.spec_hash_before_loading == model.spec.spec_hash
        assert lazy.judge_many(["Is the sky blue? Answer:"], ["Yes", "No"])[0].probabilities
    finally:
        lazy.close()


def test_a_loaded_model_is_used_as_is_and_never_closed_here(judge_model):
    lazy = LazyModel(judge_model)
    assert lazy.loaded and lazy.load() is judge_model and lazy.model_id == judge_model.spec.id
    lazy.close()
    assert judge_model.judge_many(["Is the sky blue? Answer:"], ["Yes", "No"])  # still open


def test_a_loader_is_called_only_when_asked_and_its_model_closed_with_it(judge_model):
    calls = []

    class Closing:  # the loaded model as a loader returns it, recording close()
        spec = judge_model.spec

        def __init__(self):
            self.closed = False

        def close(self):
            self.closed = True

    class Loader:
        spec = judge_model.spec

        def __call__(self):
            calls.append(1)
            return Closing()

    lazy = LazyModel(Loader())
    assert lazy.spec_before_loading is judge_model.spec and calls == []  # the spec came from the loader
    inner = LazyModel(lazy)  # a LazyModel is a loader too: calibrate wraps the CLI's
    assert inner.spec_before_loading is judge_model.spec and calls == []
    model = inner.load()
    assert calls == [1] and lazy.load() is model
    inner.close()
    assert model.closed
