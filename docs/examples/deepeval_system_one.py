"""DeepEval metrics judged by judgelab through DeepEval's System One mode (docs/harnesses.md).

Start the server under the model name DeepEval's TypeSafe model uses by default, then run this file::

    judgelab serve --model gemma-3-270m --port 11434 --alias jev-latest
    python docs/examples/deepeval_system_one.py http://127.0.0.1:11434

``TypeSafeModel`` posts typed questions to judgelab's ``/v1/systemone``; each
answer is a probability read from one forward pass, not parsed text.
"""

import sys

from deepeval.metrics import AnswerRelevancyMetric
from deepeval.models import TypeSafeModel
from deepeval.test_case import LLMTestCase

url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:11434"
judge = TypeSafeModel(model="jev-latest", api_key="unused", base_url=url)
metric = AnswerRelevancyMetric(eval_mode="system_one", system_one_model=judge, threshold=0.5, async_mode=False)
for output in ("Click 'Forgot password' on the login page and follow the email link.",
               "Our offices are closed on public holidays."):
    case = LLMTestCase(input="How do I reset my password?", actual_output=output)
    metric.measure(case)
    print(f"{metric.score:.3f} {metric.success} {output!r}")
