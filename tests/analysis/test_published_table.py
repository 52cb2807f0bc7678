# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The shipped table of published numbers (hf_vitrobust/assets/published): it parses, every row has a source, no two
rows contradict each other, it covers what the papers published, and its rows are re-read here from the committed
copies of the sources: the robustness-vit notebooks' output cells (tests/fixtures/robustness_vit, MIT) and the
how-do-vits-work results CSVs (tests/fixtures/how_do_vits_work, Apache-2.0)."""

from __future__ import annotations

import base64
import csv
import dataclasses
import hashlib
import io
import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from scipy import ndimage

from hf_vitrobust.analysis.published import (
    NO_PUBLIC_EQUIVALENT,
    check_published,
    contradictions,
    published_numbers,
    published_path,
    read_published,
)
from hf_vitrobust.evaluation.suite import load_suite

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
NOTEBOOKS = json.loads((FIXTURES / "robustness_vit" / "notebook_outputs.json").read_text())
PARK_KIM = FIXTURES / "how_do_vits_work"
ROWS = published_numbers()
BY_ID = {row.row_id: row for row in ROWS}


def test_the_table_parses_and_every_row_has_a_source():
    assert read_published(published_path()) == ROWS
    assert len(ROWS) > 1900
    for row in ROWS:
        if row.read_from.startswith("paper"):
            assert row.source_url.startswith("https://"), row.row_id
        else:
            assert row.source_repo in ("sayakpaul/robustness-vit", "xxxnell/how-do-vits-work"), row.row_id
            assert re.fullmatch(r"[0-9a-f]{40}", row.source_commit) and row.source_file, row.row_id
        assert row.location and row.where, row.row_id
        assert (row.model_id == NO_PUBLIC_EQUIVALENT) == (row.model_match == "none"), row.row_id
    assert contradictions(ROWS) == []
    # The commits are the ones read (docs/protocols.md and the table's README name them).
    assert {row.source_commit for row in ROWS if row.source_repo} == {
        "b90ba6b7a365ee9a30b583211f6681d33e9fddf0",
        "9571ff1370f31af2f433558fbfa7bc87a97b0bab",
    }


def test_the_check_refuses_what_a_table_must_not_hold():
    row = BY_ID["paul-chen/imagenet-a/top1/vit-l16"]
    problems = {
        "no source": dataclasses.replace(row, source_repo="", source_file="", source_commit=""),
        "short commit": dataclasses.replace(row, source_commit="b90ba6b"),
        "unknown paper": dataclasses.replace(row, paper="other"),
        "condition order": dataclasses.replace(row, condition="severity=5;corruption=contrast"),
        "model_match none": dataclasses.replace(row, model_match="none"),
    }
    for name, bad in problems.items():
        with pytest.raises(ValueError, match="problem"):
            check_published([bad])
        assert name
    with pytest.raises(ValueError, match="row_id repeated"):
        check_published([row, row])
    # The same number stated twice beyond the two reading precisions is a contradiction; within them it is not.
    close = dataclasses.replace(row, row_id="x/close", value=row.value + 0.004, reading_precision=0.005)
    far = dataclasses.replace(row, row_id="x/far", value=row.value + 0.01, reading_precision=0.005)
    assert contradictions([row, close]) == []
    assert contradictions([row, far]) == [(row, far)]
    with pytest.raises(ValueError, match="state the same number differently"):
        check_published([row, far])


def test_the_table_covers_what_the_papers_published():
    def keys(benchmark, metric):
        return {r.model_key for r in ROWS if r.benchmark == benchmark and r.metric == metric}

    vits = {"vit-b16", "vit-b32", "vit-l16", "vit-l32"}
    bit_m = {f"bit-m-{size}" for size in ("r50x1", "r50x3", "r101x1", "r101x3", "r152x4")}
    bit_s = {key.replace("bit-m", "bit-s") for key in bit_m}
    for benchmark in ("imagenet-a", "imagenet-r"):
        for metric in ("top-1 %", "top-5 %"):
            assert vits | bit_m <= keys(benchmark, metric), (benchmark, metric)
    assert bit_s <= keys("imagenet-a", "top-1 %") and bit_s <= keys("imagenet-a", "top-5 %")
    pretraining = {
        "vit-b16-in21k-pretraining-study",
        "vit-b16-augreg-in1k",
    }  # the paper's text (its own test)
    assert keys("imagenet-o", "AUPR %") == vits | bit_m | pretraining
    notebook_o = [r for r in ROWS if r.benchmark == "imagenet-o" and r.model_key not in pretraining]
    assert all(r.read_from == "plot" and r.reading_precision > 0 for r in notebook_o)
    assert (
        keys("imagenet-9", "top-1 %") == keys("imagenet-9", "BG-gap (points)") == {"vit-l16", "bit-m-r101x3"}
    )
    occlusion = {(r.model_key, r.conditions["ratio"]) for r in ROWS if r.benchmark == "occlusion"}
    assert occlusion == {
        (m, r) for m in ("vit-l16", "bit-m-r101x3") for r in ("0", "0.05", "0.1", "0.2", "0.5")
    }
    assert keys("pgd", "fooled (count)") == keys("pgd", "attacked (count)") == {"vit-l16", "bit-m-r101x3"}
    park_kim = {r.benchmark for r in ROWS if r.paper == "park-kim"}
    assert park_kim == {"imagenet-c", "cifar10-c", "cifar100-c", "loss_landscape"}
    # Every named pair of the paper suite with published numbers uses the table's model keys.
    table_keys = {r.model_key for r in ROWS}
    for pair in load_suite("paper").model_pairs:
        vit, cnn = pair["name"].split("/")
        if vit in vits:
            assert {vit, cnn} <= table_keys, pair["name"]


# ------------------------------------------------------------------------------------------- notebook re-reads
def _outputs(notebook: str, cell: int) -> list[dict]:
    cells = NOTEBOOKS["notebooks"][notebook]["cells"]
    return next(c["outputs"] for c in cells if c["index"] == cell)


def _text(notebook: str, cell: int) -> str:
    parts = []
    for output in _outputs(notebook, cell):
        text = output.get("text") or (output.get("data") or {}).get("text/plain") or ""
        parts.append("".join(text) if isinstance(text, list) else text)
    return "".join(parts)


def _cell(row) -> int:
    return int(re.match(r"cell (\d+)", row.location).group(1))


@pytest.mark.parametrize(
    "row_id",
    [
        "paul-chen/imagenet-a/top1/vit-l16",
        "paul-chen/imagenet-a/top5/vit-b32",
        "paul-chen/imagenet-r/top1/vit-l32",
        "paul-chen/imagenet-a/top1/bit-m-r101x3",
        "paul-chen/imagenet-r/top5/bit-m-r152x4",
        "paul-chen/imagenet-a/top1/bit-s-r50x1",
    ],
)
def test_printed_accuracies_are_re_read_from_the_notebook_outputs(row_id):
    """ "Evaluating <model>" then "Top-1 accuracy: x%" / "Top-5 accuracy: y%": the row's model is the one evaluated
    just before the number, and the value is the printed one to its last digit."""
    row = BY_ID[row_id]
    text = _text(row.source_file, _cell(row))
    kind = "Top-1" if row.metric == "top-1 %" else "Top-5"
    found = {}
    for block in re.split(r"Evaluating ", text)[1:]:
        name = re.match(r"\S+", block).group(0)
        value = re.search(rf"{kind} accuracy: ([0-9.]+)%", block)
        if value:
            found[name] = value.group(1)
    names = {
        "vit-l16": "ViT-L_16", "vit-b32": "ViT-B_32", "vit-l32": "ViT-L_32",
        "bit-m-r101x3": "m-r101x3", "bit-m-r152x4": "m-r152x4", "bit-s-r50x1": "s-r50x1",
    }  # fmt: skip
    assert row.value == float(found[names[row.model_key]])
    assert row.reading_precision <= 1e-6


def test_occlusion_counts_are_re_read_from_the_notebook_outputs():
    for model, notebook in (("vit-l16", "CutOut_ViT"), ("bit-m-r101x3", "CutOut_BiT")):
        rows = [r for r in ROWS if r.benchmark == "occlusion" and r.model_key == model]
        text = "".join(_text(rows[0].source_file, cell) for cell in sorted({_cell(r) for r in rows}))
        counts = [int(k) for k in re.findall(r"Total corrects: (\d+) out of 1000", text)]
        assert len(counts) == 5, notebook
        ratios = sorted(rows, key=lambda r: float(r.conditions["ratio"]))
        assert [r.value for r in ratios] == [count / 10 for count in counts]
        assert all(r.images == 1000 and r.image_set == "published-list" for r in rows)


def test_pgd_counts_are_re_counted_from_the_per_image_lines():
    """Each image prints its label and its predictions before and after the attack: attacked = right before,
    fooled = attacked and changed."""
    for model in ("vit-l16", "bit-m-r101x3"):
        attacked_row = BY_ID[f"paul-chen/pgd/attacked/{'vit-l16-224' if model == 'vit-l16' else model}"]
        fooled_row = BY_ID[f"paul-chen/pgd/fooled/{'vit-l16-224' if model == 'vit-l16' else model}"]
        text = _text(attacked_row.source_file, _cell(attacked_row))
        triples = re.findall(
            r"Original label: (.+)\nPrediction before adv\.: (.+)\nPrediction after adv\.: (.+)\n", text
        )
        attacked = [(before, after) for label, before, after in triples if label == before]
        assert attacked_row.value == len(attacked)
        assert fooled_row.value == sum(before != after for before, after in attacked)


def test_imagenet_9_accuracies_and_gaps_are_re_read():
    rows = [r for r in ROWS if r.benchmark == "imagenet-9" and r.metric == "top-1 %"]
    printed = {}
    for notebook in {r.source_file for r in rows}:
        for cell in {_cell(r) for r in rows}:
            for variant, value in re.findall(r"Accuracy on (\w+) is ([0-9.]+)%", _text(notebook, cell)):
                printed.setdefault(cell, {})[variant] = float(value)
    for row in rows:
        assert printed[_cell(row)][row.conditions["variant"]] == row.value, row.row_id
    for model in ("vit-l16", "bit-m-r101x3"):
        accuracy = {r.conditions["variant"]: r.value for r in rows if r.model_key == model}
        [gap] = [
            r
            for r in ROWS
            if r.benchmark == "imagenet-9" and r.metric == "BG-gap (points)" and r.model_key == model
        ]
        assert gap.value == pytest.approx(accuracy["mixed_same"] - accuracy["mixed_rand"], abs=1e-9)


def _marker_values(png: bytes, ticks: list[float]) -> list[float]:
    """The y value of each marker of a matplotlib line plot (independently of the table's extraction script): the
    left spine is the column with the longest dark run, the tick marks the dark rows just left of it, fitted
    linearly to the tick labels; the markers are the blobs of the line colour whose 5 x 5 neighbourhood is all that
    colour, read at their centroids."""
    rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(float)
    dark = rgb.sum(axis=2) < 200
    runs = [max((len(list(g)) for v, g in itertools.groupby(col) if v), default=0) for col in dark.T]
    spine = int(np.argmax(runs))
    rows_with_ticks = np.flatnonzero(dark[:, spine - 3 : spine].all(axis=1))
    groups = np.split(rows_with_ticks, np.flatnonzero(np.diff(rows_with_ticks) > 1) + 1)
    tick_rows = sorted((g.mean() for g in groups), reverse=True)  # bottom (lowest value) first
    assert len(tick_rows) == len(ticks)
    slope, intercept = np.polyfit(tick_rows, ticks, 1)
    colour = np.linalg.norm(rgb - np.array([31, 119, 180]), axis=2) < 60
    cores = ndimage.binary_erosion(colour, np.ones((5, 5)))
    labels, count = ndimage.label(cores)
    centres = ndimage.center_of_mass(cores, labels, range(1, count + 1))
    return [slope * row + intercept for row, _ in sorted(centres, key=lambda c: c[1])]


@pytest.mark.parametrize(
    "notebook, ticks, order",
    [
        ("ViT_ImageNet_O_AUPR", np.arange(0.55, 0.7251, 0.025), ["vit-b16", "vit-b32", "vit-l16", "vit-l32"]),
        (
            "BiT_ImageNet_O_AUPR",
            np.arange(0.25, 0.4501, 0.05),
            ["bit-m-r50x1", "bit-m-r50x3", "bit-m-r101x1", "bit-m-r101x3", "bit-m-r152x4"],
        ),
    ],
)
def test_imagenet_o_values_are_re_read_off_the_plot(notebook, ticks, order):
    rows = {r.model_key: r for r in ROWS if r.benchmark == "imagenet-o" and notebook in r.source_file}
    path = next(iter(rows.values())).source_file
    [png] = [
        base64.b64decode(o["data"]["image/png"])
        for cell in NOTEBOOKS["notebooks"][path]["cells"]
        for o in cell["outputs"]
        if "image/png" in (o.get("data") or {})
    ]
    values = _marker_values(png, list(ticks))
    assert len(values) == len(order)
    for key, value in zip(order, values, strict=True):
        # Marker centres are snapped to whole pixels (about 0.05 points here): within two reading precisions.
        assert 100 * value == pytest.approx(rows[key].value, abs=2 * rows[key].reading_precision), key


# ------------------------------------------------------------------------------------------ Park & Kim re-reads
def test_park_kim_fixtures_are_the_repositorys_files():
    readme = (PARK_KIM / "README.md").read_text()
    for path in PARK_KIM.glob("*.csv"):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert digest in readme, path.name


@pytest.mark.parametrize("sample", range(40))
def test_park_kim_rows_are_re_read_from_the_results_csvs(sample):
    """A seeded sample of the corruption rows: the CSV's row and column named in `location`, as a percentage."""
    rows = [r for r in ROWS if r.paper == "park-kim" and "corrupted" in r.source_file and r.unit == "%"]
    row = rows[np.random.default_rng(sample).integers(len(rows))]
    line, column = map(int, re.match(r"CSV row (\d+), column (\d+)", row.location).groups())
    with (PARK_KIM / Path(row.source_file).name).open(newline="") as handle:
        record = list(csv.reader(handle))[line - 1]
    assert record[1] == row.conditions["corruption"] and int(record[0]) == int(row.conditions["severity"])
    assert row.value == pytest.approx(100 * float(record[column - 1]), abs=1e-9)
