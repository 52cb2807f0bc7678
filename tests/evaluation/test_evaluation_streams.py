"""Stream plans ask the source itself: its limited view, its clean source, its expansion and its count."""

import pytest
from probe_models import save_tiny_vit

from hf_vitrobust.data import (
    BuiltinPhotosSource,
    CellLimitedSource,
    ImageNetOSource,
    LimitedSource,
    get_benchmark,
)
from hf_vitrobust.data.generated import GeneratedCorruptionSource, GeneratedPerturbationSource
from hf_vitrobust.data.samples import InMemorySource, RawSample, Source
from hf_vitrobust.evaluation.streams import limits_per_cell, plan_stream


class ShortcutSource(Source):
    """A source that applies a limit itself (as a Hub source stops reading a one-cell part)."""

    def __init__(self, n: int = 6) -> None:
        super().__init__()
        self.n = n
        self.calls: list[tuple[int, bool]] = []

    def validate(self) -> None:
        pass

    def raw_samples(self):
        for k in range(self.n):
            yield RawSample(b"", k, f"item-{k}", {"corruption": "fog", "severity": 1})

    def describe(self):
        return {"kind": "shortcut", "generated": False}

    def limited(self, limit, per_cell=False):
        self.calls.append((limit, per_cell))
        return ShortcutSource(limit)


def test_the_limit_is_the_sources_own():
    source = ShortcutSource()
    plan = plan_stream(get_benchmark("imagenet-c"), source, 2, 4, {})
    assert source.calls == [(2, True)] and isinstance(plan.raw, ShortcutSource) and plan.raw.n == 2
    assert plan.generated is None and plan.source is source and plan.chunk_size == 4
    plan = plan_stream(get_benchmark("imagenet-r"), source, 3, 4, {})
    assert source.calls[-1] == (3, False)
    assert plan_stream(get_benchmark("imagenet-r"), source, None, 4, {}).raw is source


def test_limits_per_cell_follows_the_benchmark():
    assert [
        limits_per_cell(get_benchmark(n)) for n in ("imagenet-c", "imagenet-p", "imagenet-9", "imagenet-o")
    ] == [True] * 4
    assert not limits_per_cell(get_benchmark("imagenet-val")) and not limits_per_cell(
        get_benchmark("imagenet-r")
    )
    plan = plan_stream(get_benchmark("imagenet-c"), InMemorySource([]), 2, 4, {})
    assert isinstance(plan.raw, CellLimitedSource) and plan.raw.limit == 2
    plan = plan_stream(get_benchmark("imagenet-val"), InMemorySource([]), 2, 4, {})
    assert isinstance(plan.raw, LimitedSource) and plan.raw.limit == 2


def test_a_generated_plan_chunks_the_limited_clean_images():
    photos = BuiltinPhotosSource()
    source = GeneratedCorruptionSource(photos, ["contrast", "fog"], [1, 3, 5])
    plan = plan_stream(get_benchmark("imagenet-c"), source, 5, 16, {})
    assert isinstance(plan.raw, LimitedSource) and plan.raw.inner is photos and plan.raw.limit == 5
    assert plan.generated is not None and plan.generated.expansion == 6 and plan.source is source
    assert plan.chunk_size == 16 // 6 and plan.positions_per_chunk == 2 * 6
    assert plan.expected_samples() == 5 * 6
    unlimited = plan_stream(get_benchmark("imagenet-c"), source, None, 4, {})
    assert unlimited.raw is photos and unlimited.generated is source and unlimited.chunk_size == 1
    assert unlimited.expected_samples() == photos.count_without_decoding() * 6
    sequences = GeneratedPerturbationSource(photos, ["rotate", "gaussian_noise"])
    plan = plan_stream(get_benchmark("imagenet-p"), sequences, 2, 8, {})
    assert plan.raw.limit == 2 and plan.chunk_size == 4 and plan.positions_per_chunk == 8


def test_imagenet_o_is_limited_per_half():
    halves = ImageNetOSource(ShortcutSource(5), ShortcutSource(7))
    plan = plan_stream(get_benchmark("imagenet-o"), halves, 2, 4, {})
    assert isinstance(plan.raw, ImageNetOSource) and plan.raw.ood.n == 2 and plan.raw.in_distribution.n == 2
    assert halves.ood.calls == [(2, False)] and halves.in_distribution.calls == [(2, False)]
    assert isinstance(
        halves.limited(3), LimitedSource
    )  # the first 3 samples of the stream, as load_benchmark's
    assert plan.expected_samples() is None  # neither half is countable
    counted = plan_stream(get_benchmark("imagenet-o"), ImageNetOSource(BuiltinPhotosSource()), 3, 4, {})
    assert counted.expected_samples() == 3


@pytest.mark.parametrize("limit", [None, 3])
def test_a_stream_that_is_not_countable_expects_its_limit_or_nothing(limit):
    plan = plan_stream(get_benchmark("imagenet-val"), InMemorySource([]), limit, 4, {})
    assert plan.expected_samples() == (None if limit is None else 3)


def test_sequences_of_different_lengths_share_a_chunk(tmp_path):
    """Generated ImageNet-P with translate (41 frames) and rotate (31) in one chunk: each sequence keeps its own
    length, and its frame predictions and flip rate equal those of a run of that perturbation alone."""
    import json

    import pandas as pd
    import yaml

    from hf_vitrobust.evaluation import evaluate

    model = save_tiny_vit(tmp_path / "model")

    def run(variants: list[str]) -> tuple[pd.DataFrame, dict]:
        name = "-".join(variants)
        suite = {
            "name": name,
            "models": [model],
            "batch_size": 16,
            "chunk_size": 8,
            "benchmarks": {"imagenet-p": {"source": "generated:builtin", "variant": variants, "limit": 2}},
        }
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(suite))
        evaluate(suite=str(tmp_path / f"{name}.yaml"), output=tmp_path / name, progress=False)
        results = json.loads((tmp_path / name / "results.json").read_text())
        [key] = results["metrics"]
        frame = pd.read_parquet(tmp_path / name / "predictions" / key / "imagenet-p.parquet")
        return frame, results["metrics"][key]["imagenet-p"]

    both, metrics = run(["translate", "rotate"])
    assert both.groupby("perturbation")["frame_predictions"].apply(
        lambda s: {len(f) for f in s}
    ).to_dict() == {
        "rotate": {31},
        "translate": {41},
    }
    for name in ("translate", "rotate"):
        alone, alone_metrics = run([name])
        rows = both[both["perturbation"] == name].reset_index(drop=True)
        assert rows["sample_id"].tolist() == alone["sample_id"].tolist()
        assert [list(f) for f in rows["frame_predictions"]] == [list(f) for f in alone["frame_predictions"]]
        assert metrics["flip_probability"][name] == alone_metrics["flip_probability"][name]


def test_interleaving_warns_only_where_it_costs_bytes():
    """Fewer shards than processes (or than one process's workers) means every reader reads them all: the warning
    says so, with the factor; a source whose raw samples name local files costs nothing and gets none."""
    from hf_vitrobust.evaluation.streams import interleaving_cost

    class Files(ShortcutSource):
        def shards(self):
            return tuple(f"file-{k}" for k in range(self.n))

    benchmark = get_benchmark("imagenet-val")
    one_file = plan_stream(benchmark, ShortcutSource(), None, 2, {})
    assert interleaving_cost("b", one_file, 1, 0) is None
    warning = interleaving_cost("b", one_file, 4, 2)
    assert "1 shard(s) for 4 processes" in warning and "read 8 times" in warning
    six_files = plan_stream(benchmark, Files(6), None, 2, {})
    assert interleaving_cost("b", six_files, 2, 3) is None  # 3 files per process, one per worker
    assert "3 shard(s) per process for 4 DataLoader workers" in interleaving_cost("b", six_files, 2, 4)
    assert interleaving_cost("b", plan_stream(benchmark, BuiltinPhotosSource(), None, 2, {}), 8, 4) is None


def test_corruption_on_the_device_gives_the_workers_predictions(tmp_path):
    """Generated ImageNet-C corrupted in the main process on the model's device (here the CPU) or in the DataLoader
    workers: the same predictions, bit for bit, and the setting is recorded."""
    import pandas as pd
    import yaml

    from hf_vitrobust.evaluation.config import EvaluationConfig
    from hf_vitrobust.evaluation.runner import evaluate

    suite = tmp_path / "suite.yaml"
    suite.write_text(
        yaml.safe_dump(
            {
                "name": "device-corruption",
                "batch_size": 4,
                "seed": 2,
                "chunk_size": 4,
                "models": [save_tiny_vit(tmp_path / "vit")],
                "benchmarks": {
                    "imagenet-c": {
                        "source": "generated:builtin",
                        "limit": 3,
                        "corruptions": ["gaussian_noise", "glass_blur"],
                        "severities": [2],
                    }
                },
            }
        )
    )
    frames = {}
    for where in ("workers", "device"):
        results = evaluate(
            EvaluationConfig(
                suite=str(suite),
                output=tmp_path / where,
                corruption_device=where,
                num_workers=1,
                progress=False,
                report=False,
            )
        )
        assert results["settings"]["corruption_device"] == where
        (model,) = results["predictions"]
        frames[where] = pd.read_parquet(tmp_path / where / results["predictions"][model]["imagenet-c"])
    assert len(frames["device"]) == 6
    pd.testing.assert_frame_equal(frames["workers"], frames["device"])
