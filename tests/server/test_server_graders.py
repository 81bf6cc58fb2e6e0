"""Grading requests in the harness's format (issue 40): Inspect's GRADE pattern warning, /api/ps, /tokenize.

promptfoo's ``llm-rubric`` through the real CLI is in test_server_promptfoo.py.
"""

from __future__ import annotations

from judgelab.harnesses import INSPECT_GRADE_LABELS

# Inspect AI's model_graded_fact instructions end so (inspect_ai.scorer._model, DEFAULT_MODEL_GRADED_FACT_TEMPLATE)
INSPECT_PROMPT = ("You are comparing a submitted answer to an expert answer on a given question.\n"
                  "[Question]: What is the capital of France?\n[Expert]: Paris\n[Submission]: Paris\n"
                  "After assessing the submitted answer, reply with 'GRADE: $LETTER' (without quotes) where LETTER "
                  "is one of CI.  Please choose ONE option for the grade.")


def _grade(http, labels=None) -> dict:
    body = {"model": "gemma-3-270m", "messages": [{"role": "user", "content": INSPECT_PROMPT}], "max_tokens": 4}
    if labels is not None:
        body["labels"] = list(labels)
    response = http.post("/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_an_inspect_grader_with_labels_its_pattern_cannot_read_gets_a_warning(http):
    answer = _grade(http, ["Yes", "No"])
    warnings = answer["judgelab"].get("warnings", [])
    assert len(warnings) == 1 and "Inspect AI grader" in warnings[0], answer["judgelab"]
    assert "['GRADE: C', 'GRADE: I']" in warnings[0] and "nan" in warnings[0]
    assert answer["choices"][0]["message"]["content"] in ("Yes", "No")  # answered as asked
    graded = _grade(http, INSPECT_GRADE_LABELS["default"])
    assert "warnings" not in graded["judgelab"]
    assert graded["choices"][0]["message"]["content"] in INSPECT_GRADE_LABELS["default"]


def test_a_promptfoo_rubric_request_gets_the_json_promptfoo_parses(http):
    """promptfoo's default llm-rubric prompt (system, then <Output>/<Rubric>): pass, score = P(pass), reason."""
    import json

    body = {"model": "gemma-3-270m", "messages": [
        {"role": "system", "content": "You are grading output according to a user-specified rubric. If the statement "
         "in the rubric is true, then the output passes the test. You respond with a JSON object with this "
         "structure: {reason: string, pass: boolean, score: number}"},
        {"role": "user", "content": "<Output>\nThe Eiffel Tower is in Paris, France.\n</Output>\n<Rubric>\n"
         "The output says the Eiffel Tower is in Paris.\n</Rubric>"}]}
    answer = http.post("/v1/chat/completions", json=body).json()
    graded = json.loads(answer["choices"][0]["message"]["content"])
    assert set(graded) == {"pass", "score", "reason"}
    p = graded["score"]
    assert 0.0 < p < 1.0 and p == answer["judgelab"]["probability"]
    assert graded["pass"] is (p >= 0.5) and answer["judgelab"]["threshold"] == 0.5
    assert f"P(pass) = {p:.4f}" in graded["reason"] and "threshold 0.5" in graded["reason"]
