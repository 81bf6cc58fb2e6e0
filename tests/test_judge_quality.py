"""Tests that fail on a wrong judge: the shipped default judge (gemma-3-270m-judge) on real labelled rows.

Other tests check shapes and ranges; these check that the judge judges. The figures below were measured
on this machine (2-core shared CPU, llama.cpp, 2 threads) and each floor leaves a margin under them. The
base model (gemma-3-270m, "at chance" in the README) orders 11 of the 16 pairs with a mean gap of 0.02,
under both of the pairs' floors, so a lost adapter fails the first test; a judge at chance or with its score direction inverted fails both.
"""

from __future__ import annotations

import json
from pathlib import Path

from judgelab.calibration import CalibrationOptions, calibrate
from judgelab.evaluators import EvaluationRequest, FactCheckingEvaluator, evaluate_many

#: The starter's hand-written rows: the relevancy floor below is theirs (the SQuAD rows are harder).
HANDWRITTEN = Path(__file__).resolve().parents[1] / "calibration" / "starter_handwritten.jsonl"

#: (premise, entailed hypothesis, contradicted hypothesis): the first 16 premises of e-SNLI's *test* split
#: (../shared/data/snli/esnli_test.jsonl) with both; the adapter was trained on the dev split only.
SNLI_TEST_PAIRS = [
    ('This church choir sings to the masses as they sing joyous songs from the book at a church .',
     'The church is filled with song .',
     'A choir singing at a baseball game .'),
    ('A woman with a green headscarf , blue shirt and a very big grin .',
     'The woman is very happy .',
     'The woman has been shot .'),
    ('An old man with a package poses in front of an advertisement .',
     'A man poses in front of an ad .',
     'A man walks by an ad .'),
    ('A statue at a museum that no seems to be looking at .',
     'There is a statue that not many people seem to be interested in .',
     'Tons of people are gathered around the statue .'),
    ('A land rover is being driven across a river .',
     'A Land Rover is splashing water as it crosses a river .',
     'A sedan is stuck in the middle of a river .'),
    ('A man playing an electric guitar on stage .',
     'A man playing guitar on stage .',
     'A man playing banjo on the floor .'),
    ('A blond-haired doctor and her African american assistant looking threw new medical manuals .',
     'A doctor is looking at a book',
     'A man is eating pb and j'),
    ('One tan girl with a wool hat is running and leaning over an object , while another person in a wool hat is sitting on the ground .',
     'A tan girl runs leans over an object',
     'A boy runs into a wall'),
    ('A young family enjoys feeling ocean waves lap at their feet .',
     'A family is at the beach .',
     'A family is out at a restaurant .'),
    ('A couple walk hand in hand down a street .',
     'A couple is walking together .',
     'A couple is sitting on a bench .'),
    ('3 young man in hoods standing in the middle of a quiet street facing the camera .',
     'Three hood wearing people pose for a picture .',
     'Three people sit by a busy street bareheaded .'),
    ('A man reads the paper in a bar with green lighting .',
     'The man is inside .',
     'The man is climbing a mountain .'),
    ('Three firefighter come out of subway station .',
     'Three firefighters coming up from a subway station .',
     'Three firefighters playing cards inside a fire station .'),
    ('A person wearing a straw hat , standing outside working a steel apparatus with a pile of coconuts on the ground .',
     'A person is near a pile of coconuts .',
     'A person is burning a straw hat .'),
    ('Male in a blue jacket decides to lay in the grass .',
     'The guy wearing a blue jacket is laying on the green grass',
     'The guy in yellow is rolling on the grass'),
    ('A little boy in a gray and white striped sweater and tan pants is playing on a piece of playground equipment .',
     'A boy is on a playground .',
     'The boy is sitting on the school bus on his way home .'),
]

#: Pairs ordered supported > unsupported: the shipped judge 14 of 16 (mean gap 0.46), the adapter shipped
#: before it 16 (0.28), the base 11 (0.02); chance is 8.
MIN_ORDERED_PAIRS = 12

#: Relevancy AUROC on the starter set's 60 hand-written relevancy rows through ``calibrate``: the shipped judge 0.77
#: (the base 0.66); a judge at chance is 0.5, an inverted one 0.3.
MIN_STARTER_RELEVANCY_AUROC = 0.60


def test_supported_claims_score_above_unsupported_ones(default_judge):
    evaluator = FactCheckingEvaluator(default_judge)
    requests = [EvaluationRequest("", [premise], claim) for premise, yes, no in SNLI_TEST_PAIRS for claim in (yes, no)]
    scores = [r.score for r in evaluate_many(evaluator, requests)]
    pairs = list(zip(scores[0::2], scores[1::2]))
    ordered = sum(yes > no for yes, no in pairs)
    assert ordered >= MIN_ORDERED_PAIRS, pairs
    assert sum(yes - no for yes, no in pairs) / len(pairs) > 0.2, pairs


def test_calibrate_on_the_starter_relevancy_rows_ranks_above_the_floor(default_judge, tmp_path):
    calibrate(default_judge, HANDWRITTEN, out=tmp_path, task="relevancy",
              options=CalibrationOptions(n_resamples=100, figures=False, progress=False))
    task = json.loads((tmp_path / "metrics.json").read_text(encoding="utf-8"))["tasks"]["relevancy"]
    auroc = task["in_sample_at_threshold"]["auroc"]
    assert task["rows"]["scored"] == 60
    assert auroc >= MIN_STARTER_RELEVANCY_AUROC
