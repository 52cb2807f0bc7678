"""`evaluate.load(<staged metric folder>)` works whatever the folder is named (issue 38, point 11).

evaluate loads a local folder by reading `<folder>/<folder name>.py`, while the Hub needs the script named after the
repo (`evaluate.load("user/repo")` fetches `repo.py`). A stage named otherwise gets `<folder name>.py` as a link to
the script: a local alias, left out of the staged file list and of the upload."""

import huggingface_hub
import numpy as np
import pytest
from hub_fakes import FakeApi

from hf_vitrobust.hub import push, stage_metric, staged_files

REPO = "someone/vitrobust-ood"
SCRIPT = "vitrobust-ood.py"
UPLOADED = {"README.md", "app.py", "requirements.txt", SCRIPT, "vitrobust_core.py"}


def _aupr_by_hand(scores, is_ood):
    """Average precision with OOD as the positive class (no tied scores): the mean, over the OOD samples ranked by
    score, of the precision among the samples ranked at or above each."""
    order = np.argsort(-np.asarray(scores))
    hits = np.asarray(is_ood, dtype=bool)[order]
    precision_at = np.cumsum(hits) / np.arange(1, len(hits) + 1)
    return float(precision_at[hits].mean())


def test_a_stage_named_otherwise_loads_with_evaluate_by_its_folder(tmp_path):
    import evaluate

    stage = tmp_path / "my-ood-stage"
    files = stage_metric(stage, "ood_aupr", repo_id=REPO)
    assert {p.relative_to(stage).as_posix() for p in files} == UPLOADED  # the alias is not part of the upload
    alias = stage / "my-ood-stage.py"
    assert alias.is_symlink() and alias.read_text() == (stage / SCRIPT).read_text()

    rng = np.random.default_rng(0)
    is_ood = [bool(i % 3 == 0) for i in range(40)]
    scores = (rng.normal(size=40) + np.asarray(is_ood) * 1.2).tolist()
    metric = evaluate.load(str(stage))
    computed = metric.compute(scores=scores, is_ood=is_ood)
    assert computed["aupr"] == pytest.approx(_aupr_by_hand(scores, is_ood), abs=1e-12)


def test_a_stage_named_like_the_script_needs_no_alias(tmp_path):
    stage = tmp_path / "vitrobust-ood"
    stage_metric(stage, "ood_aupr", repo_id=REPO)
    assert not any(path.is_symlink() for path in stage.iterdir())


def test_a_stage_whose_alias_would_replace_a_staged_file_is_refused(tmp_path):
    for name in ("app", "vitrobust_core"):
        with pytest.raises(ValueError, match="stage into a folder named otherwise"):
            stage_metric(tmp_path / name, "ood_aupr", repo_id=REPO)
        assert not (tmp_path / name).exists()


def test_the_alias_is_never_uploaded(tmp_path, monkeypatch):
    FakeApi.instances, FakeApi.fail_with = [], None
    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    stage = tmp_path / "stage"  # what `vitrobust push --metric` stages into
    stage_metric(stage, "ood_aupr", repo_id=REPO)
    assert (stage / "stage.py").is_symlink()
    dry = push(stage, REPO, repo_type="space", dry_run=True)
    assert set(dry.files) == UPLOADED
    result = push(stage, REPO, repo_type="space", token="hf_test_token_value")
    assert set(result.files) == UPLOADED
    (upload,) = [call for call in FakeApi.instances[-1].calls if call[0] == "upload_folder"]
    assert upload[2]["ignore_patterns"] == ["stage.py"]
    assert {p.name for p in staged_files(stage)} == UPLOADED
