"""An Inspect AI task graded by judgelab (docs/harnesses.md).

Start the grader, then run the task with Inspect's CLI::

    judgelab serve --model gemma-3-270m --port 11434 --labels "GRADE: C,GRADE: I"
    JUDGELAB_BASE_URL=http://127.0.0.1:11434/v1 JUDGELAB_API_KEY=unused \\
        inspect eval docs/examples/inspect_grader.py --model mockllm/model \\
        --model-role grader=openai-api/judgelab/gemma-3-270m

The answers to grade are fixed by the solver (the ``mockllm`` model writes
nothing here); ``model_graded_fact`` sends each to the ``grader`` role,
which is judgelab, and reads ``GRADE: C`` or ``GRADE: I`` from its reply.
"""

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import model_graded_fact

from judgelab.harnesses import recorded_answer


@task
def capitals():
    return Task(
        dataset=[
            Sample(input="What is the capital of France?", target="Paris", metadata={"submission": "Paris"}),
            Sample(input="What is the capital of France?", target="Paris",
                   metadata={"submission": "Berlin is the capital of France."}),
            Sample(input="How many legs does a spider have?", target="Eight",
                   metadata={"submission": "A spider has eight legs."}),
        ],
        solver=recorded_answer(),
        scorer=model_graded_fact(),
    )
