"""Tests of the `vitrobust` command line (`hf_vitrobust.cli.main` and `python -m hf_vitrobust`)."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from hf_vitrobust.cli import main
from hf_vitrobust.models.builtin import bundled_photos

ROW = re.compile(r"^\s+(\d+)\s+(\d+)\s+(0\.\d{4}|1\.0000)\s+(\S.*)$")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_VITROBUST_CACHE", str(tmp_path_factory.getbasetemp() / "vitrobust_cache"))


def _tables(output: str) -> dict[str, list[tuple[int, int, float, str]]]:
    """Parse the printed tables into {image: [(rank, class, probability, label), ...]}."""
    tables: dict[str, list[tuple[int, int, float, str]]] = {}
    current = None
    for line in output.splitlines():
        match = ROW.match(line)
        if match:
            rank, index, prob, label = match.groups()
            tables[current].append((int(rank), int(index), float(prob), label))
        elif line.strip() and not line.startswith((" ", "model:")):
            current = line.strip()
            tables[current] = []
    return tables


def test_classify_prints_top5_table(capsys):
    chelsea, coffee = (str(p) for p in bundled_photos())
    assert main(["classify", chelsea, coffee]) == 0
    output = capsys.readouterr().out
    assert output.startswith("model: builtin:efficientnet_lite0")
    tables = _tables(output)
    assert list(tables) == [chelsea, coffee]
    for rows in tables.values():
        assert [rank for rank, *_ in rows] == [1, 2, 3, 4, 5]
        probs = [prob for _, _, prob, _ in rows]
        assert probs == sorted(probs, reverse=True) and 0.0 < sum(probs) <= 1.0001
    assert (285, "Egyptian cat") in [(index, label) for _, index, _, label in tables[chelsea]]
    _, index, prob, label = tables[coffee][0]
    assert (index, label) == (967, "espresso") and prob > 0.9


def test_classify_top_k_and_batches(capsys, tmp_path):
    gray = tmp_path / "gray.png"
    Image.fromarray(np.full((40, 60), 128, dtype=np.uint8)).save(gray)
    chelsea = str(bundled_photos()[0])
    assert main(["classify", chelsea, str(gray), "--top-k", "2", "--batch-size", "1", "--device", "cpu"]) == 0
    tables = _tables(capsys.readouterr().out)
    assert list(tables) == [chelsea, str(gray)] and all(len(rows) == 2 for rows in tables.values())


def test_classify_missing_file_exits_with_message(capsys, tmp_path):
    missing = tmp_path / "no_such_photo.jpg"
    with pytest.raises(SystemExit) as exit_info:
        main(["classify", str(missing)])
    assert exit_info.value.code != 0
    assert f"image not found: {missing}" in capsys.readouterr().err


def test_classify_unreadable_image_and_bad_options(capsys, tmp_path):
    not_an_image = tmp_path / "notes.jpg"
    not_an_image.write_text("hello")
    with pytest.raises(SystemExit) as exit_info:
        main(["classify", str(not_an_image)])
    assert exit_info.value.code != 0 and "not a readable image" in capsys.readouterr().err
    chelsea = str(bundled_photos()[0])
    for args, message in [
        (["--top-k", "0"], "--top-k"),
        (["--device", "tpu:x"], "--device"),
        (["--model", "no-such-model"], "could not load model"),
    ]:
        with pytest.raises(SystemExit) as exit_info:
            main(["classify", chelsea, *args])
        assert exit_info.value.code != 0 and message in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code != 0


@pytest.mark.slow
def test_python_dash_m_runs_classify(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_VITROBUST_CACHE": str(tmp_path / "cache")}
    coffee = str(bundled_photos()[1])
    done = subprocess.run(
        [sys.executable, "-m", "hf_vitrobust", "classify", coffee, "--top-k", "3"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = _tables(done.stdout)[coffee]
    assert len(rows) == 3 and rows[0][3] == "espresso"
    failed = subprocess.run(
        [sys.executable, "-m", "hf_vitrobust", "classify", str(tmp_path / "missing.png")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert failed.returncode == 2 and "image not found" in failed.stderr
