"""Labelled data: rows and sets (``LabelledRow``), importers of public sets, set resolution, hard-negative
generators (``GENERATORS``: ``d2c:``, ``num:``, ``swap:``, ``partial:``), and the score records of a
run (``ScoreRecord``, ``read_scores``) and its typed, versioned ``metrics.json``
(``MetricsFile``: ``RunMeta`` and per task a ``TaskMetrics``; ``read_metrics``, ``write_metrics``), and
label corrections kept beside a set (``Correction``, ``read_corrections``, ``apply_corrections``).

The first step of the flow: nothing here scores or analyses; every other sub-package reads rows
and records from here.
"""

from judgelab.calibration.data._contamination import Exclusion, OverlapPair, OverlapReport, overlap_groups, overlap_report
from judgelab.calibration.data._corrections import (
    CORRECTIONS_FILE,
    AppliedCorrections,
    Correction,
    append_correction,
    apply_corrections,
    corrections_beside,
    read_corrections,
)
from judgelab.calibration.data._deletion_negatives import deletion_pairs
from judgelab.calibration.data._generated import generated_from
from judgelab.calibration.data._importers import (
    IMPORTERS,
    import_faithbench,
    import_halueval_general,
    import_halueval_qa,
    import_halueval_qa_relevancy,
    import_llm_aggrefact,
    import_set,
    import_snli,
    import_summedits,
    import_wice,
)
from judgelab.calibration.data._importers_squad import SQUAD_RELEVANCY_KINDS, import_squad_relevancy, import_squad_same_paragraph
from judgelab.calibration.data._importers_tuning import import_begin, import_docnli, import_factcg, import_fever_nli, import_fib, import_mnli
from judgelab.calibration.data._limit import SPREAD_UNITS, spread_limit
from judgelab.calibration.data._number_negatives import number_pairs
from judgelab.calibration.data._overlap import OVERLAP_KINDS, OverlapIndex, OverlapKind, OverlapMatch, OverlapOptions, normalise_text
from judgelab.calibration.data._partial_negatives import partial_pairs
from judgelab.calibration.data._records import ScoreRecord, judge_values, read_scores, row_hash
from judgelab.calibration.data._renamed import renamed_keyword, warn_renamed
from judgelab.calibration.data._row_changes import PARTS, RowChanges, content_hashes, row_changes
from judgelab.calibration.data._rows import TASKS, LabelledRow, LabelledSet, Task, load_rows, write_rows
from judgelab.calibration.data._runfiles import METRICS_VERSION, MetricsFile, RunMeta, read_metrics, write_metrics
from judgelab.calibration.data._sentence_rows import EDIT_FIELDS, sentence_rows
from judgelab.calibration.data._sets import GENERATORS, default_set_path, resolve_set, rows_by_task
from judgelab.calibration.data._swap_negatives import swap_pairs
from judgelab.calibration.data._task_metrics import (
    AbstainBandRecord,
    AbstainBands,
    AgreementRecord,
    CalibrationRecord,
    CalibratorChoiceRecord,
    CalibratorRecord,
    CriterionMinimum,
    GeneratorStatsRecord,
    IntervalRecord,
    LengthBiasRecord,
    RowCounts,
    SelfPreferenceRecord,
    TaskMetrics,
    TaskThreshold,
)

__all__ = [
    "AppliedCorrections",
    "CORRECTIONS_FILE",
    "Correction",
    "append_correction",
    "apply_corrections",
    "corrections_beside",
    "read_corrections",
    "AbstainBandRecord",
    "AbstainBands",
    "AgreementRecord",
    "CalibrationRecord",
    "CalibratorChoiceRecord",
    "CalibratorRecord",
    "CriterionMinimum",
    "Exclusion",
    "GeneratorStatsRecord",
    "IMPORTERS",
    "IntervalRecord",
    "LabelledRow",
    "LabelledSet",
    "LengthBiasRecord",
    "METRICS_VERSION",
    "MetricsFile",
    "OVERLAP_KINDS",
    "OverlapIndex",
    "OverlapKind",
    "OverlapMatch",
    "OverlapOptions",
    "OverlapPair",
    "OverlapReport",
    "PARTS",
    "RowChanges",
    "RowCounts",
    "RunMeta",
    "ScoreRecord",
    "SelfPreferenceRecord",
    "TASKS",
    "Task",
    "TaskMetrics",
    "TaskThreshold",
    "content_hashes",
    "default_set_path",
    "deletion_pairs",
    "GENERATORS",
    "generated_from",
    "number_pairs",
    "partial_pairs",
    "swap_pairs",
    "EDIT_FIELDS",
    "sentence_rows",
    "import_begin",
    "import_squad_relevancy",
    "import_squad_same_paragraph",
    "SQUAD_RELEVANCY_KINDS",
    "import_docnli",
    "import_factcg",
    "import_faithbench",
    "import_fever_nli",
    "import_fib",
    "import_halueval_general",
    "import_halueval_qa",
    "import_halueval_qa_relevancy",
    "import_llm_aggrefact",
    "import_mnli",
    "import_set",
    "import_snli",
    "import_summedits",
    "import_wice",
    "judge_values",
    "load_rows",
    "normalise_text",
    "overlap_groups",
    "overlap_report",
    "read_metrics",
    "read_scores",
    "renamed_keyword",
    "resolve_set",
    "row_changes",
    "row_hash",
    "rows_by_task",
    "SPREAD_UNITS",
    "spread_limit",
    "warn_renamed",
    "write_metrics",
    "write_rows",
]
