"""The rubric table of docs/criteria.md: a Flow-Judge preset on the embedded gemma-3-270m.

Run: python docs/examples/rubric.py
"""

from judgelab import load_model
from judgelab.evaluators import EvaluationRequest, RubricEvaluator

model = load_model("gemma-3-270m")
req = EvaluationRequest(
    "How tall is the Eiffel Tower?", ["The Eiffel Tower is 330 metres tall."], "It is 330 metres tall."
)
for mode in ("fast", "explained"):
    res = RubricEvaluator.preset(model, "faithfulness-5point", mode=mode, max_feedback_tokens=48).evaluate(req)
    probs = {k: round(v, 3) for k, v in res.metadata["probabilities"].items()}
    print(mode, res.passed, round(res.score, 3), probs, round(res.metadata["expected"], 2))
    print("  feedback:", repr(res.feedback))
    print("  model_feedback:", repr(res.metadata["model_feedback"]))
