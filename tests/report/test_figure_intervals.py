# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""Figures draw a headline number's interval (results.json "intervals") as an error bar from its low to its high:
the ImageNet-A/R top-1 bars (named by class mask), the ImageNet-O AUPR bars and the severity-5 point of the
accuracy-by-severity curve; their captions say so. Without intervals the figures are drawn as before: no error bar,
the same artists, the same PNG."""

import io

import numpy as np
import pytest
from matplotlib.container import BarContainer, ErrorbarContainer

from hf_vitrobust.metrics.intervals import Interval
from hf_vitrobust.report.displays import get_display
from hf_vitrobust.report.document import write_report
from hf_vitrobust.report.figure_set import build_figures, caption
from hf_vitrobust.report.figures import BACKGROUND_FIGURE, MASKED_FIGURE, OOD_FIGURE, interval_levels

SEVERITY_FIGURE = "imagenet-c_severity"
CORRUPTION_CELLS = {
    "gaussian_noise/1": 60.0,
    "gaussian_noise/5": 20.0,
    "contrast/1": 70.0,
    "contrast/5": 30.0,
}


def _interval(estimate: float, low: float, high: float, method: str = "wilson") -> dict:
    return Interval(estimate, low, high, 0.95, method, 40, num_units=40).to_dict()


def _metrics(shift: float) -> dict:
    return {
        "imagenet-a": {"num_samples": 40, "top1": 42.5 + shift, "top5": 70.0, "class_mask": "hendrycks-200"},
        "imagenet-r": {"num_samples": 40, "top1": 55.0 + shift, "top5": 80.0, "class_mask": "paul-chen-1000"},
        "imagenet-o": {"aupr": 0.8125 - shift / 100, "auroc": 0.75, "fpr_at_95_tpr": 0.5},
        "imagenet-c": {
            "top1_by_cell": {cell: value + shift for cell, value in CORRUPTION_CELLS.items()},
            "severity5_top1": 25.0 + shift,
            "mean_top1": 45.0 + shift,
            "num_samples": 16,
        },
        "imagenet-9": {
            "accuracy": {"original": 0.9, "mixed_same": 0.8 - shift / 100, "mixed_rand": 0.6},
            "bg_gap": 0.2 - shift / 100,
        },
    }


def _results() -> dict:
    """Two models; the first has every interval, the second only ImageNet-O's (and one whose estimate is not the
    drawn number, which is left out)."""
    return {
        "schema": "hf_vitrobust.results",
        "models": [{"key": "vit"}, {"key": "resnet"}],
        "benchmarks": {
            name: {} for name in ("imagenet-a", "imagenet-r", "imagenet-o", "imagenet-c", "imagenet-9")
        },
        "metrics": {"vit": _metrics(0.0), "resnet": _metrics(10.0)},
        "intervals": {
            "vit": {
                "imagenet-a top-1 % (hendrycks-200)": _interval(42.5, 28.5, 57.75),
                "imagenet-r top-1 % (paul-chen-1000)": _interval(55.0, 39.75, 69.25),
                # A top-1 under the other class mask is not the bar's number.
                "imagenet-r top-1 % (hendrycks-200)": _interval(50.0, 35.0, 65.0),
                "imagenet-o AUPR %": _interval(81.25, 70.5, 90.0, "percentile bootstrap"),
                "imagenet-c severity-5 mean top-1 %": _interval(25.0, 18.0, 33.5, "percentile bootstrap"),
                "imagenet-9 BG-gap (points)": _interval(20.0, 5.0, 35.0, "percentile bootstrap"),
            },
            "resnet": {
                # A bootstrap interval that leaves its estimate out still spans low to high.
                "imagenet-o AUPR %": _interval(71.25, 72.0, 84.5, "percentile bootstrap"),
                "imagenet-a top-1 % (hendrycks-200)": _interval(40.0, 30.0, 50.0),
            },
        },
        "uncertainty": {"confidence_level": 0.95},
    }


def _without_intervals() -> dict:
    result = _results()
    del result["intervals"]
    return result


def _error_bars(figure) -> list[tuple[float, float, float]]:
    """(x, low, high) of every error bar on the figure's axes, from the LineCollection segments."""
    found = []
    for ax in figure.axes:
        for container in ax.containers:
            if isinstance(container, ErrorbarContainer):
                _, _, (collection,) = container.lines
                for segment in collection.get_segments():
                    (x0, y0), (x1, y1) = segment
                    assert x0 == x1
                    found.append((float(x0), float(min(y0, y1)), float(max(y0, y1))))
    return sorted(found)


def _bar_centres(figure) -> dict[str, list[tuple[float, float]]]:
    """Series label -> (x centre, height) of each of its bars."""
    ax = figure.axes[0]
    return {
        container.get_label(): [(p.get_x() + p.get_width() / 2, p.get_height()) for p in container.patches]
        for container in ax.containers
        if isinstance(container, BarContainer)
    }


@pytest.fixture(scope="module")
def figures():
    return build_figures([_results()])


def test_masked_bars_carry_the_class_masks_intervals(figures):
    bars = _bar_centres(figures[MASKED_FIGURE])
    (a_vit, r_vit), (a_resnet, r_resnet) = bars["vit"], bars["resnet"]
    assert [a_vit[1], r_vit[1], a_resnet[1], r_resnet[1]] == [42.5, 55.0, 52.5, 65.0]
    # resnet's imagenet-a interval has estimate 40, not its bar's 52.5: no error bar there.
    assert _error_bars(figures[MASKED_FIGURE]) == sorted([(a_vit[0], 28.5, 57.75), (r_vit[0], 39.75, 69.25)])
    assert interval_levels(figures[MASKED_FIGURE]) == (0.95,)
    ax = figures[MASKED_FIGURE].axes[0]
    (container,) = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert container.has_yerr and not container.has_xerr
    assert [text.get_text() for text in ax.get_legend().get_texts()] == ["vit", "resnet"]


def test_ood_bars_span_low_to_high_even_where_the_interval_leaves_the_value_out(figures):
    (vit,), (resnet,) = _bar_centres(figures[OOD_FIGURE]).values()
    assert vit[1] == pytest.approx(81.25) and resnet[1] == pytest.approx(71.25)
    # vit's bar: 81.25 - 70.5 below its value, 90 - 81.25 above; resnet's interval [72, 84.5] leaves its 71.25 out.
    bars = _error_bars(figures[OOD_FIGURE])
    np.testing.assert_allclose(bars, sorted([(vit[0], 70.5, 90.0), (resnet[0], 72.0, 84.5)]))
    ax = figures[OOD_FIGURE].axes[0]
    assert sum(isinstance(c, ErrorbarContainer) for c in ax.containers) == 2


def test_the_severity_5_point_carries_its_interval(figures):
    figure = figures[SEVERITY_FIGURE]
    vit_line = next(line for line in figure.axes[0].get_lines() if line.get_label() == "vit")
    assert vit_line.get_xdata().tolist() == [1, 5] and vit_line.get_ydata().tolist() == [65.0, 25.0]
    assert _error_bars(figure) == [(5.0, 18.0, 33.5)]


def test_captions_say_error_bars_only_where_they_are_drawn(figures):
    CAPTIONS = {**get_display("masked").captions, **get_display("background").captions}
    note = "error bars: 95 % intervals (see Uncertainty)"
    for name in (MASKED_FIGURE, OOD_FIGURE, SEVERITY_FIGURE):
        assert caption(name, interval_levels(figures[name])).endswith(f"; {note}.")
    masked = caption(MASKED_FIGURE, interval_levels(figures[MASKED_FIGURE]))
    assert masked == f"{CAPTIONS[MASKED_FIGURE].rstrip('.')}; {note}."
    # ImageNet-9's bars are per-variant accuracies, none of them a headline: no error bars, nothing said.
    assert _error_bars(figures[BACKGROUND_FIGURE]) == []
    assert (
        caption(BACKGROUND_FIGURE, interval_levels(figures[BACKGROUND_FIGURE])) == CAPTIONS[BACKGROUND_FIGURE]
    )
    assert caption(MASKED_FIGURE, levels=[0.9, 0.95]).endswith(
        "error bars: 90 / 95 % intervals (see Uncertainty)."
    )
    plain = build_figures([_without_intervals()])
    assert caption(MASKED_FIGURE, interval_levels(plain[MASKED_FIGURE])) == CAPTIONS[MASKED_FIGURE]
    assert (
        caption(MASKED_FIGURE) == CAPTIONS[MASKED_FIGURE]
    )  # no levels: nothing said, whatever was drawn before


@pytest.mark.parametrize("draw_first", [None, "with", "without"])
def test_two_reports_in_one_process_are_identical_in_either_order(tmp_path, draw_first):
    """Captions come from the figures they caption, not from what was drawn last: two reports built in one process,
    in either order, with or without figures drawn first, are each the report built alone."""
    runs = {
        name: {**run, "schema_version": 2}
        for name, run in {"with": _results(), "without": _without_intervals()}.items()
    }
    if draw_first is not None:
        build_figures([runs[draw_first]])
    first = {
        name: write_report(run, tmp_path / f"a-{name}")["markdown"].read_text() for name, run in runs.items()
    }
    second = {
        name: write_report(runs[name], tmp_path / f"b-{name}")["markdown"].read_text()
        for name in reversed(list(runs))
    }
    assert first == second
    assert first["with"] != first["without"]
    assert "error bars: 95 % intervals" in first["with"] and "error bars" not in first["without"]


def _png(figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=60)
    return buffer.getvalue()


def test_without_intervals_the_figures_are_drawn_as_before(figures):
    plain = build_figures([_without_intervals()])
    assert set(plain) == set(figures)
    unmatched = _results()
    unmatched["intervals"] = {"vit": {"imagenet-val top-1 %": _interval(75.0, 60.0, 85.0)}}
    for other in (build_figures([{**_without_intervals(), "intervals": {}}]), build_figures([unmatched])):
        for name, figure in plain.items():
            assert _png(figure) == _png(other[name]), name
    # Error bars per figure (one errorbar call per model that has any): each adds a LineCollection and two cap lines.
    calls = {MASKED_FIGURE: 1, OOD_FIGURE: 2, SEVERITY_FIGURE: 1}
    for name, figure in plain.items():
        assert _error_bars(figure) == [] and interval_levels(figure) == ()
        assert not any(isinstance(c, ErrorbarContainer) for ax in figure.axes for c in ax.containers)
        drawn = figures[name]
        assert len(drawn.axes) == len(figure.axes) == 1
        added = len(drawn.axes[0].get_children()) - len(figure.axes[0].get_children())
        assert added == 3 * calls.get(name, 0), name
