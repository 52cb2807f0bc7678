"""The evaluation report (report.md, self-contained report.html, figures) from results.json dicts whose metric and
probe dicts come from the real metric functions, the runner's scoring functions and real probes on tiny models."""

import base64
import copy
import json
import math
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from probe_models import timm_cnn, transformers_vit

from hf_vitrobust.analysis.results import SCHEMA_VERSION, load_results, merge_results
from hf_vitrobust.analysis.scoring import (
    background_metrics,
    corruption_metrics,
    ood_metrics,
    sequence_metrics,
)
from hf_vitrobust.data import get_benchmark
from hf_vitrobust.metrics import (
    STANDARD_CORRUPTIONS,
    TEST_PERTURBATIONS,
    calibration_metrics,
    masked_accuracy,
)
from hf_vitrobust.probes import (
    DeepFoolResult,
    FeatureSimilarityResult,
    FeatureVarianceResult,
    FrequencyNoiseResult,
    GradCAMResult,
    HessianSpectrumResult,
    LesionResult,
    LossLandscapeResult,
    PGDLossResult,
    feature_fourier,
    fourier_heatmap,
    occlusion_sweep,
)
from hf_vitrobust.probes.occlusion import OcclusionResult
from hf_vitrobust.report.document import render_html, render_markdown, write_report
from hf_vitrobust.report.figure_set import write_figures
from hf_vitrobust.report.figures import FigureFile

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MODELS = {"tiny-vit": 0.7, "tiny-resnet18": 0.45}  # key -> how often the synthetic predictions are right
PER_CELL = 4
A_CLASSES = np.arange(0, 1000, 5)  # a 200-class subset standing in for ImageNet-A's


def noisy_predictions(labels: np.ndarray, accuracy: float, rng: np.random.Generator) -> np.ndarray:
    """Predictions right with probability `accuracy`, else a different class."""
    wrong = (labels + rng.integers(1, 999, size=labels.shape)) % 1000
    return np.where(rng.random(labels.shape) < accuracy, labels, wrong)


def clean_metrics(accuracy: float, rng: np.random.Generator) -> dict:
    labels = rng.integers(0, 1000, size=64)
    logits = rng.normal(size=(64, 1000))
    correct = rng.random(64) < accuracy
    logits[np.arange(64), labels] += np.where(correct, 8.0, -8.0)
    top5 = np.argsort(-logits, axis=1)[:, :5]
    return {
        "num_samples": 64,
        "top1": 100.0 * float(np.mean(logits.argmax(1) == labels)),
        "top5": 100.0 * float(np.mean((top5 == labels[:, None]).any(1))),
        "calibration": calibration_metrics(logits, labels, from_logits=True).to_dict(),
    }


def corruption_frame(accuracy: float, rng: np.random.Generator) -> pd.DataFrame:
    corruptions = [*STANDARD_CORRUPTIONS, "speckle_noise"]
    rows = [(c, s) for c in corruptions for s in range(1, 6) for _ in range(PER_CELL)]
    labels = rng.integers(0, 1000, size=len(rows))
    # Accuracy falls with severity, so the severity-5 numbers differ from the means.
    severity = np.array([s for _, s in rows])
    predictions = noisy_predictions(labels, 1.0, rng)
    keep = rng.random(len(rows)) < accuracy * (1.1 - severity / 10)
    predictions = np.where(keep, labels, (labels + 1) % 1000)
    return pd.DataFrame(
        {
            "label": labels,
            "prediction": predictions,
            "corruption": [c for c, _ in rows],
            "severity": severity,
        }
    )


def sequences_frame(accuracy: float, rng: np.random.Generator) -> pd.DataFrame:
    rows = []
    for perturbation in TEST_PERTURBATIONS:
        for _ in range(3):
            base = rng.choice(1000, size=5, replace=False)
            frames = [np.roll(base, 1) if rng.random() > accuracy else base for _ in range(6)]
            rows.append({"perturbation": perturbation, "difficulty": 1, "frame_top5": frames})
    return pd.DataFrame(rows)


def ood_frame(accuracy: float, rng: np.random.Generator) -> pd.DataFrame:
    is_ood = np.repeat([True, False], 40)
    score = rng.normal(size=80) + accuracy * 2.0 * is_ood
    return pd.DataFrame({"is_ood": is_ood, "ood_score": -1.0 / (1.0 + np.exp(score))})


def in9_frame(accuracy: float, rng: np.random.Generator) -> pd.DataFrame:
    from hf_vitrobust.metrics import IMAGENET_TO_IN9

    members = [np.flatnonzero(np.equal(IMAGENET_TO_IN9, k)) for k in range(9)]
    rows = []
    for variant, shift in (("original", 0.0), ("mixed_same", 0.05), ("mixed_rand", 0.25)):
        for label in rng.integers(0, 9, size=30):
            right = rng.random() < accuracy - shift
            cls = members[label if right else (label + 1) % 9][0]
            rows.append({"prediction": cls, "label": label, "variant": variant})
    return pd.DataFrame(rows)


def constructed_probes(offset: float, seed: int) -> dict:
    generator = torch.Generator().manual_seed(seed)
    steps = 5
    losses = torch.rand(6, steps + 1, generator=generator).cumsum(1) + offset
    energy = -40 + 10 * torch.rand(32, 32, generator=generator)
    x = torch.linspace(-1, 1, 7)
    grid = x[None, :] ** 2 + (x[:, None] * (1 + offset)) ** 2
    return {
        "deepfool": DeepFoolResult(
            perturbations=torch.zeros(2, 3, 32, 32),
            success=torch.tensor([True, True]),
            l2_norms=torch.tensor([0.3, 0.5]),
            iterations=torch.tensor([2, 3]),
            clean_correct=torch.tensor([True, True]),
            labels=torch.tensor([1, 2]),
            success_rate=1.0,
            mean_l2=0.4 + offset,
            energy_db=energy,
            steps=50,
            candidates=10,
            overshoot=0.02,
        ).to_dict(),
        "pgd": PGDLossResult(
            method="pgd",
            eps=0.002,
            step_size=0.0005,
            steps=steps,
            random_start=False,
            loss_mean=losses.mean(0),
            loss_std=losses.std(0, unbiased=False),
            losses=losses,
            image_indices=torch.arange(6),
            num_images=6,
            success_rate=0.5,
        ).to_dict(),
        "hessian": HessianSpectrumResult(
            eigenvalues=torch.tensor([[40.0 + 20 * offset, 10.0], [35.0, 9.0], [50.0, 12.0]]),
            bottom_eigenvalues=torch.tensor([[-3.0 - 3 * offset, -1.0], [-2.0, -0.5], [-4.5, -1.0]]),
            batch_sizes=[4, 4, 4],
            method="lanczos",
            iterations=10,
            weight_decay=0.0,
            density_nodes=torch.tensor([[-3.0, 0.0, 5.0, 40.0], [-2.0, 1.0, float("nan"), 35.0]]),
            density_weights=torch.tensor([[0.1, 0.6, 0.2, 0.1], [0.2, 0.7, 0.0, 0.1]]),
        ).to_dict(),
        "frequency_noise": FrequencyNoiseResult(
            frequencies=[0.1, 0.5, 0.9],
            clean_accuracy=0.8,
            accuracy=[0.78, 0.7 - offset / 10, 0.5],
            accuracy_drop=[0.02, 0.1 + offset / 10, 0.3],
            bandwidth=0.1,
            epsilon=0.1,
            equal_energy=False,
            num_samples=8,
            seed=0,
        ).to_dict(),
        "lesion": LesionResult(
            units=["blocks.0.msa", "blocks.0.mlp", "blocks.1.msa", "blocks.1.mlp"],
            kinds=["msa", "mlp", "msa", "mlp"],
            stages=[None] * 4,
            indices=[0, 0, 1, 1],
            baseline_accuracy=0.8,
            accuracy=[0.7, 0.78, 0.4, 0.79],
            accuracy_drop=[0.1, 0.02, 0.4, 0.01],
            num_images=8,
        ).to_dict(),
        "loss_landscape": LossLandscapeResult(
            x=x,
            y=x,
            loss=grid + 0.5,
            accuracy=1 - grid / grid.max(),
            center_loss=0.5,
            weight_decay=0.0,
            num_images=8,
        ).to_dict(),
    }


@pytest.fixture(scope="module")
def results() -> dict:
    """A results.json dict of two tiny models over every benchmark kind and ten probes."""
    images = torch.rand(6, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    labels = torch.tensor([0, 1, 2, 3, 4, 5])
    classifiers = {"tiny-vit": transformers_vit(0), "tiny-resnet18": timm_cnn(0)}
    metrics, probes = {}, {}
    for i, (key, accuracy) in enumerate(MODELS.items()):
        rng = np.random.default_rng(i)
        clean = clean_metrics(accuracy, rng)
        a_labels = rng.choice(A_CLASSES, size=50)
        a_logits = rng.normal(size=(50, 1000))
        a_logits[np.arange(50), a_labels] += np.where(rng.random(50) < accuracy - 0.3, 6.0, -6.0)
        masked = masked_accuracy(a_logits, a_labels, A_CLASSES)
        clean_frame = pd.DataFrame({"label": [0, 1, 2, 3], "prediction": [0, 1, 2, 9 if i else 3]})
        metrics[key] = {
            "imagenet-val": clean,
            "imagenet-c": corruption_metrics(
                get_benchmark("imagenet-c"), corruption_frame(accuracy, rng), clean_frame
            ),
            "imagenet-a": {  # as the runner stores it: percent
                "num_samples": 50,
                "top1": 100.0 * masked.top1,
                "top5": 100.0 * masked.top5,
                "protocol": "logits cut to the benchmark's class subset before the argmax",
            },
            "imagenet-o": ood_metrics(ood_frame(accuracy, rng)),
            "imagenet-p": sequence_metrics(sequences_frame(accuracy, rng)),
            "imagenet-9": background_metrics(in9_frame(accuracy, rng)),
        }
        classifier = classifiers[key]
        probes[key] = {
            "occlusion": occlusion_sweep(
                classifier, images, labels, seed=3, ratios=(0.0, 0.1, 0.5)
            ).to_dict(),
            "fourier_heatmap": fourier_heatmap(
                classifier, images[:3], labels[:3], window=5, eps=4.0
            ).to_dict(),
            "feature_fourier": feature_fourier(classifier, images[:2]).to_dict(),
            **constructed_probes(float(i), seed=i),
        }
        for probe in probes[key].values():
            probe.update(benchmark="imagenet-val", params={})
    photos = {
        "kind": "builtin-photos",
        "location": "hf_vitrobust/assets/photos",
        "revision": "hf_vitrobust 0.1.0",
        "generated": False,
        "count": 29,
    }
    generated = {**photos, "kind": "generated-corruptions", "generated": True, "clean": photos}
    released = {
        "kind": "hub",
        "location": "org/imagenet-val",
        "revision": "abc123",
        "parts": ["validation"],
        "generated": False,
    }
    benchmarks = {
        name: {
            "task": "classification",
            "source": generated if name in ("imagenet-c", "imagenet-p") else released,
            "generated": name in ("imagenet-c", "imagenet-p"),
            "num_samples": 100,
            "skipped": {
                "num_skipped": 2 if name == "imagenet-val" else 0,
                "skipped": {"undecodable": 2} if name == "imagenet-val" else {},
                "examples": [],
                "converted_to_rgb": {},
            },
            "options": {},
        }
        for name in metrics["tiny-vit"]
    }
    return {
        "schema": "hf_vitrobust.results",
        "schema_version": 1,
        "created": "2026-12-01T03:00:00Z",
        "hf_vitrobust_version": "0.1.0",
        "suite": {"name": "quick", "description": "A quick check."},
        "seed": 1234,
        "settings": {"limit": 100, "batch_size": 8, "precision": "fp32", "num_processes": 1, "device": "cpu"},
        "environment": {
            "python": "3.11",
            "cuda": None,
            "devices": [],
            "libraries": {"torch": torch.__version__},
        },
        "models": [
            {
                "key": key,
                "spec": f"test:{key}",
                "name": key,
                "kind": "test",
                "num_classes": 10,
                "input_size": [32, 32],
                "num_parameters": 12345,
            }
            for key in MODELS
        ],
        "benchmarks": benchmarks,
        "metrics": metrics,
        "probes": probes,
        "timing": {key: {"imagenet-val": 1.5, "probe:occlusion": 0.25} for key in MODELS},
    }


@pytest.fixture(scope="module")
def report(results, tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("report")
    return out, write_report(results, out)


def table_row(markdown: str, label: str) -> list[str]:
    """The cells after the label of the one Markdown table row whose first cell is `label`."""
    rows = [line for line in markdown.splitlines() if line.startswith(f"| {label} |")]
    assert len(rows) >= 1, f"no row {label!r}"
    return [cell.strip() for cell in rows[0].strip("|").split("|")][1:]


def section(markdown: str, heading: str) -> str:
    start = markdown.index(heading)
    following = markdown.find("\n## ", start + len(heading))
    return markdown[start : following if following >= 0 else None]


EXPECTED_FIGURES = {
    "imagenet-c_ce",
    "imagenet-c_severity",
    "imagenet-p_flip",
    "natural_adversarial_top1",
    "ood_aupr",
    "imagenet9_accuracy",
    "occlusion",
    "fourier_heatmap",
    "deepfool_spectrum",
    "pgd_loss",
    "hessian_spectrum",
    "hessian_density",
    "feature_fourier",
    "frequency_noise",
    "lesion",
    "loss_landscape",
}


def test_write_report_writes_every_figure_and_both_pages(report):
    out, written = report
    assert set(written["figures"]) == EXPECTED_FIGURES
    for name, relative in written["figures"].items():
        assert relative == f"figures/{name}.png"
        data = (out / relative).read_bytes()
        assert data.startswith(PNG_MAGIC)
        assert len(data) > 8000, name  # a drawn figure, not an empty canvas
    assert written["markdown"] == out / "report.md" and written["markdown"].is_file()
    assert written["html"] == out / "report.html" and written["html"].is_file()
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]


def test_markdown_puts_models_side_by_side_with_the_right_numbers(report, results):
    out, _ = report
    markdown = (out / "report.md").read_text()
    vit, cnn = results["metrics"]["tiny-vit"], results["metrics"]["tiny-resnet18"]
    # Summary first, then the data sources; every model table has one column per model.
    assert markdown.index("## Summary") < markdown.index("## Data sources") < markdown.index("## Benchmark:")
    assert f"| torch | {torch.__version__} |" in markdown and "| seed | 1234 |" in markdown
    assert "| headline | tiny-vit | tiny-resnet18 |" in markdown
    assert "| metric | tiny-vit | tiny-resnet18 |" in markdown

    imagenet_c = section(markdown, "## Benchmark: imagenet-c")
    assert table_row(imagenet_c, "mCE (%, AlexNet-normalised: alexnet-15)") == [
        f"{vit['imagenet-c']['mce']:.2f}",
        f"{cnn['imagenet-c']['mce']:.2f}",
    ]
    assert 40 < vit["imagenet-c"]["mce"] < cnn["imagenet-c"]["mce"]
    # Paul & Chen Fig. 2: the mean top-1 at severity 5 over every corruption present, recomputed here.
    for key, column in (("tiny-vit", 0), ("tiny-resnet18", 1)):
        cells = results["metrics"][key]["imagenet-c"]["top1_by_cell"]
        s5 = np.mean([v for cell, v in cells.items() if cell.endswith("/5")])
        assert len([c for c in cells if c.endswith("/5")]) == 16
        assert table_row(imagenet_c, "severity-5 mean top-1 (%) — Paul & Chen Fig. 2")[column] == f"{s5:.2f}"
        contrast = cells["contrast/5"]
        assert (
            table_row(imagenet_c, "contrast, severity 5, top-1 (%) — Paul & Chen Fig. 3")[column]
            == f"{contrast:.2f}"
        )
    assert table_row(imagenet_c, "gaussian_noise") == [
        f"{m['imagenet-c']['ce']['gaussian_noise']:.2f}" for m in (vit, cnn)
    ]
    assert "Partial ImageNet-C" not in imagenet_c
    assert (
        table_row(imagenet_c, "speckle_noise (extra)")[0]
        == f"{vit['imagenet-c']['extra_ce']['speckle_noise']:.2f}"
    )

    clean = section(markdown, "## Benchmark: imagenet-val")
    assert table_row(clean, "top-1 (%)") == [
        f"{vit['imagenet-val']['top1']:.2f}",
        f"{cnn['imagenet-val']['top1']:.2f}",
    ]
    ece = vit["imagenet-val"]["calibration"]["ece"]
    assert table_row(clean, "ECE (%)")[0] == f"{100 * ece:.2f}"
    # The runner stores ImageNet-A top-1 in percent, ImageNet-O AUPR and flip probabilities as fractions.
    assert table_row(section(markdown, "## Benchmark: imagenet-a"), "top-1 (%, within the set's classes)")[
        1
    ] == (f"{cnn['imagenet-a']['top1']:.2f}")
    assert table_row(markdown, "AUPR (%)")[0] == f"{100 * vit['imagenet-o']['aupr']:.2f}"
    perturbations = section(markdown, "## Benchmark: imagenet-p")
    mfr = vit["imagenet-p"]["mfr_unnormalized"]
    assert table_row(perturbations, "mFR, unnormalised (mean flip probability, %)")[0] == f"{100 * mfr:.2f}"
    assert (
        table_row(perturbations, "rotate")[1]
        == f"{100 * cnn['imagenet-p']['flip_probability']['rotate']:.2f}"
    )
    gap = cnn["imagenet-9"]["bg_gap"]
    assert table_row(markdown, "BG-gap = mixed_same − mixed_rand (pp)")[1] == f"{100 * gap:.2f}"
    assert gap > 0

    # Data sources: what the data is, in words: generated ImageNet-C is marked as such and names the photos it was
    # made from, a Hub dataset its id, split and revision; skips are counted with their reason.
    sources = section(markdown, "## Data sources")
    assert (
        "| imagenet-c | GENERATED on the fly (not the released files) from the sample photos bundled with "
        "hf_vitrobust (29 photos: hf_vitrobust/assets/photos @ hf_vitrobust 0.1.0) | 100 | 0 |" in sources
    )
    assert (
        "| imagenet-val | a Hub dataset: org/imagenet-val, split validation @ abc123 | 100 | 2 (undecodable: 2) |"
        in sources
    )
    assert "released |" not in sources

    probes = section(markdown, "## Probes")
    occlusion = results["probes"]["tiny-resnet18"]["occlusion"]
    assert table_row(probes, "top-1 (%) at 50 % masked")[1] == f"{100 * occlusion['accuracy'][2]:.2f}"
    assert table_row(probes, "most negative eigenvalue") == ["-4.5", "-6"]
    assert table_row(probes, "top eigenvalue (max over batches)") == ["50", "60"]
    assert table_row(probes, "biggest drop (pp)")[0] == "40.00 (blocks.1.msa)"
    heat = np.array(results["probes"]["tiny-vit"]["fourier_heatmap"]["error_map"], dtype=float)
    assert table_row(probes, "mean error over the map (%)")[0] == f"{100 * heat.mean():.2f}"
    delta = results["probes"]["tiny-vit"]["feature_fourier"]["delta_log_amplitude"]
    assert table_row(probes, "Δ log amplitude, last layer")[0] == f"{delta[-1]:.4g}"
    assert table_row(probes, "center loss") == ["0.5", "0.5"]
    # Each figure is linked once, under its section.
    for name in EXPECTED_FIGURES:
        assert markdown.count(f"(figures/{name}.png)") == 1, name
    assert markdown.index("figures/occlusion.png") > markdown.index("## Probes")


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.images, self.links, self.cells, self.tags = [], [], 0, []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if tag == "img":
            self.images.append(attrs["src"])
        if "href" in attrs or (tag != "img" and "src" in attrs):
            self.links.append(attrs.get("href") or attrs.get("src"))
        self.cells += tag == "td"


def test_html_is_self_contained(report):
    out, written = report
    page = (out / "report.html").read_text()
    parser = _Collector()
    parser.feed(page)
    parser.close()
    assert 'src="http' not in page and "url(" not in page and "@import" not in page
    assert parser.links == [] and "script" not in parser.tags and "link" not in parser.tags
    assert len(parser.images) == len(written["figures"])
    inlined = {base64.b64decode(src.split(",", 1)[1]) for src in parser.images}
    assert all(src.startswith("data:image/png;base64,") for src in parser.images)
    assert inlined == {(out / path).read_bytes() for path in written["figures"].values()}
    assert parser.cells > 100
    assert "<th>tiny-vit</th><th>tiny-resnet18</th>" in page


def test_merge_two_runs_disambiguates_a_shared_model_key(results, tmp_path):
    second = copy.deepcopy(results)
    second["models"] = [m for m in second["models"] if m["key"] == "tiny-vit"]
    second["metrics"] = {
        "tiny-vit": {"imagenet-val": {**results["metrics"]["tiny-vit"]["imagenet-val"], "top1": 12.5}}
    }
    second["probes"] = {}
    second["timing"] = {}
    for name, result in (("runA", results), ("runB", second)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps(result))
    loaded = load_results([tmp_path / "runA", tmp_path / "runB" / "results.json"])
    merged = merge_results(loaded)
    keys = [[m["key"] for m in run["models"]] for run in merged]
    assert keys == [["tiny-vit@runA", "tiny-resnet18"], ["tiny-vit@runB"]]
    assert merged[1]["metrics"]["tiny-vit@runB"]["imagenet-val"]["top1"] == 12.5
    assert set(merged[0]["probes"]) == {"tiny-vit@runA", "tiny-resnet18"}
    assert merge_results(merged) == merged  # merging again changes nothing
    assert loaded[0]["models"][0]["key"] == "tiny-vit"  # the inputs are not modified

    markdown = render_markdown(merged, {})
    assert "| metric | tiny-vit@runA | tiny-resnet18 | tiny-vit@runB |" in markdown
    assert table_row(section(markdown, "## Benchmark: imagenet-val"), "top-1 (%)")[2] == "12.50"
    # A benchmark only the first run has shows only that run's models.
    assert "| metric | tiny-vit@runA | tiny-resnet18 |\n" in section(markdown, "## Benchmark: imagenet-c")
    written = write_report(loaded, tmp_path / "both")
    assert "tiny-vit@runB" in written["markdown"].read_text()


def test_bad_results_are_refused_naming_the_file(results, tmp_path):
    newer = {**results, "schema_version": SCHEMA_VERSION + 1}
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "results.json").write_text(json.dumps(newer))
    with pytest.raises(ValueError, match=r"new/results\.json.*newer"):
        load_results([tmp_path / "new"])
    with pytest.raises(ValueError, match="newer"):
        merge_results([results, newer])
    with pytest.raises(ValueError, match="schema"):
        merge_results([{**results, "schema": "something.else"}])
    with pytest.raises(ValueError, match="schema"):
        write_report({**results, "schema": "something.else"}, tmp_path / "never")
    assert not (tmp_path / "never").exists()
    with pytest.raises(FileNotFoundError, match=r"holds no results\.json"):
        load_results([tmp_path])
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_results([tmp_path / "missing.json"])
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(ValueError, match=r"broken\.json: not valid JSON"):
        load_results([tmp_path / "broken.json"])


def test_a_single_benchmark_renders_alone(results, tmp_path):
    only = {key: value for key, value in results.items() if key not in ("probes", "timing", "benchmarks")}
    only["metrics"] = {key: {"imagenet-a": m["imagenet-a"]} for key, m in results["metrics"].items()}
    written = write_report(only, tmp_path)
    assert set(written["figures"]) == {"natural_adversarial_top1"}
    markdown = written["markdown"].read_text()
    assert "## Probes" not in markdown and "## Data sources" not in markdown
    top1 = results["metrics"]["tiny-vit"]["imagenet-a"]["top1"]
    assert table_row(markdown, "imagenet-a top-1 (%)")[0] == f"{top1:.2f}"
    page = written["html"].read_text()
    assert page.count("data:image/png;base64,") == 1


def test_partial_imagenet_c_is_flagged(results):
    """A quick run's ImageNet-C (one corruption at one severity) reports its cells and says the mCE is partial."""
    frame = pd.DataFrame(
        {"label": [1, 2, 3, 4], "prediction": [1, 2, 0, 0], "corruption": "contrast", "severity": 5}
    )
    run = {
        **results,
        "metrics": {"tiny-vit": {"imagenet-c": corruption_metrics(get_benchmark("imagenet-c"), frame, None)}},
    }
    run = {key: value for key, value in run.items() if key not in ("probes", "timing")}
    markdown = render_markdown([run], {})
    assert "Partial ImageNet-C for tiny-vit" in markdown
    assert table_row(markdown, "contrast, severity 5, top-1 (%) — Paul & Chen Fig. 3") == ["50.00"]
    assert table_row(markdown, "missing cells") == ["74"]
    assert "tiny-resnet18 |" not in section(markdown, "## Benchmark: imagenet-c")


def test_figures_only_for_present_data_and_raw_metric_dicts(tmp_path):
    """Bare `to_dict()`s (fractions for masked accuracy), a probe under its function name, the map probes, a probe not
    run and an empty benchmark all render; a figure is drawn only from data that is there."""
    masked = masked_accuracy(np.eye(10)[[0, 1, 2, 3]] * 5, [0, 1, 2, 4], np.arange(10)).to_dict()
    occlusion = OcclusionResult([0.0, 0.5], [1.0, 0.25], [0.9, 0.5], [0.9, 0.4], 4, 0).to_dict()
    cam = torch.linspace(0, 1, 32 * 32).reshape(1, 32, 32)
    gradcam_dict = GradCAMResult(
        cams=cam,
        method="GradCAM",
        layer="layer4",
        module_name="layer4",
        layer_reason="last conv stage",
        target_classes=torch.tensor([3]),
        target_source="labels",
        model="m",
        image=torch.rand(3, 32, 32),
    ).to_dict()
    probes = {
        "my-occlusion": occlusion,
        "gradcam": gradcam_dict,
        "attention": {
            "maps": cam.tolist(),
            "mean_map": cam[0].tolist(),
            "method": "rollout",
            "num_images": 4,
        },
        "cka": FeatureSimilarityResult(["a", "b"], ["a", "b"], [[1.0, 0.5], [0.5, 1.0]], 4, 1, 4).to_dict(),
        "feature_variance": FeatureVarianceResult(
            ["a", "b", "c"], [[4, 8, 8]] * 3, [1.0, 2.0, 0.5], 4
        ).to_dict(),
        "hessian": {"skipped": "not applicable to this model", "benchmark": "imagenet-val"},
    }
    run = {
        "schema": "hf_vitrobust.results",
        "schema_version": 1,
        "models": [{"key": "m"}],
        "metrics": {
            "m": {"imagenet-r": masked, "empty": {"num_samples": 0, "note": "no samples were evaluated"}}
        },
        "probes": {"m": probes},
    }
    figures = write_figures(run, tmp_path)
    assert set(figures) == {
        "natural_adversarial_top1",
        "occlusion",
        "gradcam",
        "attention",
        "cka",
        "feature_variance",
    }
    markdown = render_markdown([run], figures)
    assert table_row(markdown, "top-1 (%, within the set's classes)") == ["75.00"]
    assert table_row(markdown, "note") == ["no samples were evaluated"]
    assert table_row(markdown, "top-1 (%) at 50 % masked") == ["25.00"]
    assert table_row(markdown, "not run") == ["not applicable to this model"]
    assert table_row(markdown, "mean CKA between different layers") == ["0.5"]
    assert table_row(markdown, "variance, last layer") == ["0.5"]
    page = render_html([run], figures, tmp_path)
    assert page.count("data:image/png;base64,") == len(figures)
    with pytest.raises(FileNotFoundError, match="occlusion"):
        render_html([run], {**figures, "occlusion": FigureFile("figures/absent.png")}, tmp_path)
    assert math.isclose(masked["top1"], 0.75)


def test_parts_the_default_source_does_not_publish_are_named_in_data_sources(results):
    """The paper suite's 4 extra ImageNet-C corruptions are not published by its default source (WNJXYK): the run
    leaves them out and the report says so beside the source."""
    edited = copy.deepcopy(results)
    cells = [
        f"{c}/{s}" for c in ("speckle_noise", "gaussian_blur", "spatter", "saturate") for s in range(1, 6)
    ]
    edited["benchmarks"]["imagenet-c"].update(
        generated=False,
        source={
            "kind": "hub",
            "location": "WNJXYK/TTA-ImageNet-C",
            "generated": False,
            "unavailable": {"cells": cells, "reason": "not published"},
        },
    )
    sources = section(render_markdown([edited], {}), "## Data sources")
    assert (
        "| imagenet-c | a Hub dataset: WNJXYK/TTA-ImageNet-C; not published by the source, left out: 20 parts "
        "(speckle_noise, gaussian_blur, spatter, saturate) |" in sources
    )
