"""The is_grounded example of docs/criteria.md, on the embedded gemma-3-270m judge.

Run: python docs/examples/is_grounded.py
"""

from judgelab import load_model
from judgelab.evaluators import CriteriaJudge
from judgelab.questions import Choice, Noul, Score

model = load_model("gemma-3-270m")

judge = (
    CriteriaJudge.builder(model)
    .noul(
        "is_grounded",
        Noul(
            "Is every claim in `assistant_answer` supported by `supporting_context`?",
            when_false="Introduces facts the context does not support",
        ),
        0.7,
    )
    .choice(
        "tone",
        Choice("What is the tone of `assistant_answer`?", {"formal": "polite", "casual": "relaxed", "rude": "insulting"}),
        "formal", "casual",
    )
    .score(
        "completeness",
        Score("How completely does `assistant_answer` answer `user_question`?", ["not at all", "partly", "fully"]),
        1.5,
    )
    .check("not_empty", lambda s: bool(s["assistant_answer"].strip()), "The answer is empty")
    .min_confidence(0.6)
    .build()
)

verdict = judge.judge(
    question="When was the Eiffel Tower completed?",
    answer="It was completed in 1889 and painted gold in 1990.",
    context=["The Eiffel Tower was completed in 1889."],
)
print("passed:", verdict.passed)
for f in verdict.findings:
    print(f"  {f.outcome.value:<15} {f.detail}")
print("feedback:")
print(verdict.feedback)

