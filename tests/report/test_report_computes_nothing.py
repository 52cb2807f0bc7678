"""The report shows analysed runs: hf_vitrobust.report never opens a predictions file and never computes an
interval. Everything it shows of intervals, comparisons, published numbers and findings was computed by
`analysis.analyze` and stored in the results."""

import ast
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from reproduction_runs import Model, accuracy_frame, write_run

import hf_vitrobust.report
from hf_vitrobust.analysis.analyze import ANALYSIS_KEY, analyze
from hf_vitrobust.analysis.results import load_results, merge_results
from hf_vitrobust.report.document import write_report

SPEC = "google/vit-large-patch16-384"
CNN = "timm/resnetv2_101x3_bit.goog_in21k_ft_in1k"
#: What computes from predictions: the report imports none of it.
COMPUTING = {
    "analyze",
    "RunModel",
    "RunModels",
    "read_predictions",
    "PredictionsFile",
    "intervals_of",
    "compare_models",
    "headline_estimators",
    "paired_comparison",
    "published_comparisons",
    "findings_for",
    "check_findings",
}


def test_no_report_module_imports_what_computes():
    package = Path(hf_vitrobust.report.__file__).parent
    for path in sorted(package.glob("*.py")):
        imported = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                imported |= {alias.name for alias in node.names} | {node.module or ""}
            elif isinstance(node, ast.Import):
                imported |= {alias.name for alias in node.names}
        assert not imported & (COMPUTING | {"pyarrow", "pyarrow.parquet"}), path.name


@pytest.fixture
def analysed_pair(tmp_path):
    """A run of a pair of Paul & Chen's checkpoints on ImageNet-A, analysed and stored."""
    correct = [True] * 30 + [False] * 70
    suite = {"name": "paper", "model_pairs": [{"name": "vit-l16/bit-m-r101x3", "vit": SPEC, "cnn": CNN}]}
    folder = write_run(
        tmp_path / "pair",
        [
            Model(SPEC, {"imagenet-a": accuracy_frame(correct)}, applied={"imagenet-a": "native-resize"}),
            Model(
                CNN, {"imagenet-a": accuracy_frame(correct[::-1][:100])}, applied={"imagenet-a": "squash-224"}
            ),
        ],
        suite=suite,
    )
    merged = merge_results(load_results([folder]))
    analyze(merged).store(merged)
    return merged


def test_the_report_of_analysed_runs_reads_no_predictions_file(analysed_pair, tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the report read a predictions file")

    for module, name in ((pq, "read_table"), (pq, "read_schema"), (pq, "ParquetFile"), (pd, "read_parquet")):
        monkeypatch.setattr(module, name, refuse)
    markdown = write_report(analysed_pair, tmp_path / "report")["markdown"].read_text()
    stored = analysed_pair[0][ANALYSIS_KEY]
    assert stored["published"] and stored["findings"]
    assert "## Published vs ours" in markdown and "## Findings" in markdown
    [key, _] = analysed_pair[0]["predictions"]
    interval = analysed_pair[0]["intervals"][key]["imagenet-a top-1 % (hendrycks-200)"]
    assert f"[{interval['low']:.2f}, {interval['high']:.2f}]" in markdown


def test_runs_without_a_stored_analysis_get_no_published_or_findings_section(analysed_pair, tmp_path):
    """The report shows what the runs hold: without the stored analysis there is nothing to show, and nothing is
    computed in its place."""
    bare = [{k: v for k, v in result.items() if k != ANALYSIS_KEY} for result in analysed_pair]
    markdown = write_report(bare, tmp_path / "bare")["markdown"].read_text()
    assert "## Published vs ours" not in markdown and "## Findings" not in markdown
