"""A probe the run recorded as not run (issue 38, point 1) says so, with its reason, in the report's probe table
and in the published-vs-ours comparison, instead of looking absent."""

from reproduction_runs import Model, accuracy_frame, published_row, write_run

from hf_vitrobust.analysis.published import PublishedNumber
from hf_vitrobust.analysis.published_vs_ours import compare_published
from hf_vitrobust.analysis.results import load_results, merge_results
from hf_vitrobust.analysis.run_models import RunModel
from hf_vitrobust.analysis.uncertainty import UncertaintySettings
from hf_vitrobust.probes import get_probe

REASON = "PGD: the model classifies none of the selected images correctly: nothing was attacked."
SPEC = "timm/vit_large_patch16_224"


def _row() -> PublishedNumber:
    """Paul & Chen's occlusion accuracy of ViT-L/16 at half the image masked, as the table states one."""
    return published_row(
        row_id="paul-chen/occlusion/top1/vit-l16/0.5",
        model_id=SPEC,
        benchmark="occlusion",
        condition="ratio=0.5",
        protocol="hole=albumentations-1;image_list=paul-chen-occlusion-1k",
        value=60.4,
        images=1000,
        image_set="published-list",
        reading_precision=0.05,
    )


def test_a_probe_not_run_is_named_with_its_reason_in_published_vs_ours(tmp_path):
    skipped = {"skipped": REASON, "benchmark": "imagenet-val"}
    folder = write_run(
        tmp_path / "run",
        [Model(SPEC, {"imagenet-val": accuracy_frame([True, False])}, probes={"occlusion": skipped})],
    )
    (result,) = merge_results(load_results([folder]))
    model = RunModel(result, result["models"][0]["key"])
    assert model.probe("occlusion") is None and model.probe_not_run("occlusion") == REASON
    comparison = compare_published(_row(), model, UncertaintySettings(num_resamples=50))
    assert comparison.verdict == "not comparable"
    assert f"the occlusion probe did not run: {REASON}" in comparison.reason_text()
    absent = write_run(tmp_path / "absent", [Model(SPEC, {"imagenet-val": accuracy_frame([True, False])})])
    (other,) = merge_results(load_results([absent]))
    missing = compare_published(_row(), RunModel(other, other["models"][0]["key"]), UncertaintySettings())
    assert "no occlusion probe in this run" in missing.reason_text()


def test_the_report_table_of_a_probe_not_run_says_not_run_and_why():
    assert get_probe("pgd").table({"skipped": REASON, "benchmark": "imagenet-val"}) == {"not run": REASON}
