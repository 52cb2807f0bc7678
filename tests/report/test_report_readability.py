"""What a reader of report.md / report.html meets (issue 38, point 11), checked on the written report of an analysed
run: the Data sources say what each benchmark's data is; the Summary and the Uncertainty section never print the
same number; every cell holds one notation (no interval with a "± std" beside it); the frequency-noise drop has one
sign in its table and its figure; every table of report.html scrolls sideways inside its own box."""

import math
import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
import torch
from probe_models import NUM_CLASSES, random_images, timm_cnn
from reproduction_runs import Model, accuracy_frame, cell_frame, write_run
from scipy import stats

from hf_vitrobust.analysis.analyze import analyze
from hf_vitrobust.analysis.kinds import benchmark_metrics
from hf_vitrobust.analysis.results import load_results, merge_results
from hf_vitrobust.data import get_benchmark
from hf_vitrobust.probes import PROBES
from hf_vitrobust.probes.base import predict_logits
from hf_vitrobust.report.document import write_report
from hf_vitrobust.report.figure_set import build_figures

VIT, CNN = "org/tiny-vit", "org/tiny-cnn"
KEYS = {VIT: "org_tiny-vit", CNN: "org_tiny-cnn"}
CLEAN_RIGHT = {VIT: 30, CNN: 20}  # of 40 clean images
IMAGES = 8
PROBE_SEED = 5
PHOTOS = {
    "kind": "builtin-photos",
    "location": "hf_vitrobust/assets/photos",
    "revision": "hf_vitrobust 0.1.0",
    "generated": False,
    "count": 29,
}
FOLDER = {
    "kind": "image_folder",
    "location": "/data/imagenet-c",
    "layout": "corruption_severity",
    "generated": False,
}


def clean_frame(right: int) -> pd.DataFrame:
    """Clean predictions of 40 validation files, the first `right` right, named as ImageNet-C's clean images."""
    frame = accuracy_frame([True] * right + [False] * (40 - right))
    frame["sample_id"] = [f"n01440764/ILSVRC2012_val_{i:08d}.JPEG" for i in range(40)]
    return frame


def corrupted_frame(seed: int) -> pd.DataFrame:
    """Two corruptions at severities 1 and 5 of the same 40 files, right more often at severity 1."""
    rng = np.random.default_rng(seed)
    cells = {
        (corruption, severity): list(rng.random(40) < (0.8 if severity == 1 else 0.4))
        for corruption in ("gaussian_noise", "contrast")
        for severity in (1, 5)
    }
    return cell_frame(cells)


def probe_dicts(seed: int) -> dict:
    """PGD and band-passed noise, run on a tiny CNN and merged as the runner merges them (with their intervals)."""
    model = timm_cnn(seed)
    pixels = random_images(IMAGES, seed=3)
    labels = predict_logits(model, pixels).argmax(dim=1)
    labels[1::2] = (labels[1::2] + 1) % NUM_CLASSES  # every other image wrong: a clean accuracy of 50 %
    ids = torch.arange(IMAGES, dtype=torch.int64) * 7919 + 101
    out = {}
    for name, params in (
        ("pgd", {"method": "sign", "eps": 0.03, "steps": 2, "batch_size": 4}),
        ("frequency_noise", {"frequencies": [0.1, 0.9], "epsilon": 1.0, "batch_size": 4}),
    ):
        spec = PROBES.get(name)
        merged = spec.merge([spec.run(model, pixels, labels, ids, PROBE_SEED, spec.check_params(params))])
        out[name] = {**merged, "benchmark": "imagenet-val", "params": params}
    return out


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Two models on the bundled photos (imagenet-val) and a local ImageNet-C folder, with the metrics the runner
    stores, two probes, analysed and stored as `vitrobust evaluate` does; and its written report."""
    root = tmp_path_factory.mktemp("readable")
    models = [
        Model(
            spec,
            {"imagenet-val": clean_frame(CLEAN_RIGHT[spec]), "imagenet-c": corrupted_frame(seed)},
            probes=probe_dicts(seed),
            applied={"imagenet-c": "as-released"},
        )
        for seed, spec in enumerate((VIT, CNN))
    ]
    info = {"imagenet-val": {"source": PHOTOS}, "imagenet-c": {"source": FOLDER}}
    folder = write_run(root / "run", models, benchmark_info=info)
    merged = merge_results(load_results([folder]))
    for model in models:
        key = KEYS[model.spec]
        clean = model.frames["imagenet-val"]
        merged[0]["metrics"][key] = {
            "imagenet-val": benchmark_metrics(get_benchmark("imagenet-val"), clean),
            "imagenet-c": benchmark_metrics(get_benchmark("imagenet-c"), model.frames["imagenet-c"], clean),
        }
    analyze(merged).store(merged)
    written = write_report(merged, root / "report")
    return merged, written["markdown"].read_text(), written["html"].read_text()


def section(markdown: str, heading: str) -> str:
    start = markdown.index(heading)
    following = markdown.find("\n## ", start + len(heading))
    return markdown[start : following if following >= 0 else None]


def table_rows(text: str) -> dict[str, list[str]]:
    """First cell -> the other cells, of every Markdown table row in `text` (header rows included)."""
    rows = {}
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("|---"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            rows[cells[0]] = cells[1:]
    return rows


def wilson(right: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval, from its formula."""
    z = stats.norm.ppf(0.5 + level / 2)
    p = right / n
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    return 100 * (centre - half), 100 * (centre + half)


# --------------------------------------------------------------------------------------------- data sources
def test_the_data_sources_say_what_the_data_is(run):
    _, markdown, _ = run
    rows = table_rows(section(markdown, "## Data sources"))
    assert rows["benchmark"] == ["data", "samples", "skipped (reasons)"]
    assert rows["imagenet-val"][0] == (
        "the sample photos bundled with hf_vitrobust (29 photos: hf_vitrobust/assets/photos @ hf_vitrobust 0.1.0)"
    )
    assert rows["imagenet-c"][0] == "a local image folder: /data/imagenet-c"
    assert "released" not in section(markdown, "## Data sources")


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            {"kind": "hub", "location": "axiong/imagenet-r", "revision": "abc123", "parts": ["test"]},
            "a Hub dataset: axiong/imagenet-r, split test @ abc123",
        ),
        (
            {"kind": "hub", "location": "/mnt/copies/axiong/imagenet-r", "parts": ["test"]},
            "a local copy of a Hub dataset: /mnt/copies/axiong/imagenet-r, split test",
        ),
        (
            {"kind": "parquet", "location": "/data/in9", "split": "validation"},
            "local parquet files: /data/in9, split validation",
        ),
        (
            {**PHOTOS, "kind": "generated-corruptions", "generated": True, "clean": PHOTOS},
            "GENERATED on the fly (not the released files) from the sample photos bundled with hf_vitrobust "
            "(29 photos: hf_vitrobust/assets/photos @ hf_vitrobust 0.1.0)",
        ),
        (
            {
                "kind": "imagenet-o",
                "location": "org/imagenet-o",
                "ood": {"kind": "hub", "location": "org/imagenet-o", "parts": ["test"]},
                "in_distribution": {"kind": "image_folder", "location": "/data/val"},
            },
            "OOD: a Hub dataset: org/imagenet-o, split test; in-distribution: a local image folder: /data/val",
        ),
    ],
)
def test_each_kind_of_source_is_named_in_words(run, tmp_path, source, expected):
    merged, _, _ = run
    result = {**merged[0], "benchmarks": {"imagenet-r": {"source": source, "num_samples": 7}}}
    markdown = write_report(result, tmp_path)["markdown"].read_text()
    assert table_rows(section(markdown, "## Data sources"))["imagenet-r"] == [expected, "7", "0"]


# ------------------------------------------------------------------------------------- summary vs uncertainty
def test_the_summary_shows_each_interval_and_the_uncertainty_section_only_the_others(run):
    merged, markdown, _ = run
    summary = table_rows(section(markdown, "## Summary"))
    uncertainty_text = section(markdown, "## Uncertainty")
    vit, cnn = KEYS[VIT], KEYS[CNN]
    assert summary["headline"] == [vit, cnn]
    # The clean top-1 of 30 and 20 right of 40, with their Wilson intervals, re-derived here.
    for column, spec in enumerate((VIT, CNN)):
        low, high = wilson(CLEAN_RIGHT[spec], 40)
        expected = f"{100 * CLEAN_RIGHT[spec] / 40:.2f} [{low:.2f}, {high:.2f}]"
        assert summary["imagenet-val top-1 (%)"][column] == expected
        assert expected not in uncertainty_text
    # Every interval of the run is printed once, in the Summary or (for the headlines it has no row of: ImageNet-C's
    # relative mCE) in the Uncertainty section, never in both.
    intervals = merged[0]["intervals"]
    in_uncertainty = set()
    for key in (vit, cnn):
        assert "imagenet-c relative mCE %" in intervals[key]
        for name, record in intervals[key].items():
            bounds = f"[{record['low']:.2f}, {record['high']:.2f}]"
            assert markdown.count(bounds) == 1, (key, name, bounds)
            if bounds in uncertainty_text:
                in_uncertainty.add(name)
    assert in_uncertainty == {"imagenet-c relative mCE %"}
    title = "**Headlines not in the Summary, with their 95 % intervals**"
    others, needed_text = uncertainty_text.split(title)[1].split("**Samples needed")
    others = table_rows(others)
    assert list(others) == ["headline", "imagenet-c relative mCE %"]
    for column, key in enumerate((vit, cnn)):
        relative = intervals[key]["imagenet-c relative mCE %"]
        expected = f"{relative['estimate']:.2f} [{relative['low']:.2f}, {relative['high']:.2f}]"
        assert others["imagenet-c relative mCE %"][column] == expected
    # What the Uncertainty section adds: how the intervals were computed, and the samples a half-width needs.
    assert (
        "wilson over samples" in uncertainty_text
        and "percentile bootstrap over clean images" in uncertainty_text
    )
    needed = table_rows(needed_text)
    p = CLEAN_RIGHT[VIT] / 40
    assert needed["imagenet-val top-1 %"][0] == (
        f"{math.ceil((stats.norm.ppf(0.975) * 100 * math.sqrt(p * (1 - p))) ** 2):,} samples (now 40)"
    )


# ------------------------------------------------------------------------------------------ one notation per cell
def test_no_cell_mixes_an_interval_with_a_standard_deviation(run):
    merged, markdown, _ = run
    cells = [cell for line in markdown.splitlines() if line.startswith("| ") for cell in line.split("|")]
    assert cells and not [cell for cell in cells if "±" in cell]
    pgd = table_rows(section(markdown, "### Probe: pgd"))
    for column, key in enumerate((KEYS[VIT], KEYS[CNN])):
        probe = merged[0]["probes"][key]["pgd"]
        final = np.asarray(probe["losses"], dtype=np.float64)[:, -1]
        n = final.size
        mean = final.mean()
        half = stats.t.ppf(0.975, n - 1) * final.std(ddof=1) / math.sqrt(n)
        shown = pgd["final loss (mean)"][column]
        value, low, high = (float(x) for x in re.fullmatch(r"(\S+) \[(\S+), (\S+)\]", shown).groups())
        assert value == pytest.approx(mean, rel=1e-3)
        assert (low, high) == (pytest.approx(mean - half, rel=1e-3), pytest.approx(mean + half, rel=1e-3))
        # The images' spread: the population std the probe records, in a row of its own.
        assert float(pgd["final loss, std over the images"][column]) == pytest.approx(final.std(), rel=1e-3)
    summary = table_rows(section(markdown, "## Summary"))
    assert summary["pgd: final loss (mean)"] == pgd["final loss (mean)"]


# ---------------------------------------------------------------------------------- the frequency-noise sign
def test_the_frequency_noise_drop_has_one_sign_in_the_table_and_the_figure(run):
    merged, markdown, _ = run
    rows = table_rows(section(markdown, "### Probe: frequency_noise"))
    figure = build_figures(merged)["frequency_noise"]
    lines = {
        line.get_label(): line for line in figure.axes[0].get_lines() if not line.get_label().startswith("_")
    }
    assert set(lines) == {KEYS[VIT], KEYS[CNN]}
    hurt = 0
    for column, key in enumerate((KEYS[VIT], KEYS[CNN])):
        probe = merged[0]["probes"][key]["frequency_noise"]
        n = probe["num_samples"]
        x, y = lines[key].get_data()
        assert list(x) == probe["frequencies"] == [0.1, 0.9]
        for i, frequency in enumerate(probe["frequencies"]):
            # The drop by its definition, clean minus noisy accuracy, from the counts of right images.
            drop = 100 * (probe["num_clean_correct"] - probe["num_correct"][i]) / n
            shown = rows[f"accuracy drop (pp) at {frequency:.4g}π"][column]
            assert float(shown.split(" [")[0]) == pytest.approx(drop, abs=0.005)
            assert y[i] == pytest.approx(drop, abs=1e-9)
            hurt += drop > 0
    assert hurt >= 1  # the noise hurts somewhere, so a flipped sign could not pass
    assert "clean − noisy" in figure.axes[0].get_ylabel()


# ---------------------------------------------------------------------------------------- wide tables scroll
class _Tables(HTMLParser):
    """Each <table> with the classes of the <div>s open around it, each numeric table's cells (class, text), and
    the page's CSS."""

    def __init__(self):
        super().__init__()
        self.open_divs, self.tables, self.cells, self.css = [], [], [], ""
        self.in_style = self.in_numeric_table = self.in_cell = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "div":
            self.open_divs.append((attrs.get("class") or "").split())
        elif tag == "table":
            self.tables.append([name for classes in self.open_divs for name in classes])
            self.in_numeric_table = "text" not in (attrs.get("class") or "")
        elif tag == "td" and self.in_numeric_table:
            self.cells.append([attrs.get("class"), ""])
        self.in_style = tag == "style"
        self.in_cell = tag == "td" and self.in_numeric_table

    def handle_endtag(self, tag):
        if tag == "div":
            self.open_divs.pop()
        self.in_style = self.in_cell = False

    def handle_data(self, data):
        if self.in_style:
            self.css += data
        elif self.in_cell:
            self.cells[-1][1] += data


def test_every_table_of_the_page_scrolls_sideways_in_its_own_box(run):
    _, markdown, page = run
    parser = _Tables()
    parser.feed(page)
    parser.close()
    assert len(parser.tables) == sum(1 for line in markdown.splitlines() if line.startswith("|---"))
    boxes = {name for classes in parser.tables for name in classes}
    assert all(classes for classes in parser.tables), "a table outside any box"
    rules = [(selector.strip(), body) for selector, body in re.findall(r"([^{}]+)\{([^}]*)\}", parser.css)]
    scrolling = {
        selector.lstrip(".") for selector, body in rules if re.search(r"overflow-x\s*:\s*auto", body)
    }
    assert boxes and boxes <= scrolling
    assert parser.open_divs == []
    # In a numeric table a number with its interval stays on one line; a long cell (a list of names) wraps.
    assert any(selector == "td" and re.search(r"white-space\s*:\s*nowrap", body) for selector, body in rules)
    wrapping = [selector for selector, body in rules if re.search(r"white-space\s*:\s*normal", body)]
    assert any("td.long" in selector for selector in wrapping)
    long_cells = [text for kind, text in parser.cells if kind == "long"]
    assert any(text.startswith("shot_noise, impulse_noise") for text in long_cells)  # the absent corruptions
    assert all(len(text) > 40 for text in long_cells)
    assert all(len(text) <= 40 for kind, text in parser.cells if kind != "long")
    assert "75.00 [59.81, 85.81]" in [text for _, text in parser.cells]
