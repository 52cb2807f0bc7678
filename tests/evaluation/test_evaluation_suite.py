"""Evaluation suites: the shipped YAML files load and validate, round-trip through JSON, carry the papers' protocol
numbers, and every mistake in a user's file fails at load time naming the file, the entry and the closest names."""

import csv
import json
import re
import types
from pathlib import Path

import pytest
import yaml

from hf_vitrobust.corruptions import CORRUPTIONS, EXTRA_CORRUPTIONS, STANDARD_CORRUPTIONS
from hf_vitrobust.corruptions.perturbations import TEST_PERTURBATIONS
from hf_vitrobust.data import BENCHMARKS
from hf_vitrobust.evaluation import suite as suite_module
from hf_vitrobust.evaluation.suite import (
    SUITE_NAMES,
    SUITES_DIR,
    BenchmarkSpec,
    Suite,
    SuiteProbe,
    load_suite,
    suite_from_dict,
    suite_path,
)
from hf_vitrobust.probes.spec import PROBES, get_probe


def write_suite(tmp_path, data, name="mine.yaml"):
    path = tmp_path / name
    if name.endswith(".json"):
        path.write_text(json.dumps(data), encoding="utf-8")
    else:
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def minimal(**changes):
    data = {
        "name": "mine",
        "benchmarks": {"imagenet-val": {"source": "builtin"}, "imagenet-c": {"corruptions": ["fog"]}},
        "probes": {"occlusion": {"num_images": 8, "params": {"ratios": [0.0, 0.5]}}},
    }
    data.update(changes)
    return data


@pytest.mark.parametrize("name", SUITE_NAMES)
def test_shipped_suite_loads_and_validates(name):
    suite = load_suite(name)
    assert suite.name == name
    assert suite.path == str(suite_path(name))
    assert suite.description and suite.citations
    assert suite.batch_size > 0 and suite.chunk_size > 0 and suite.seed == 0
    assert all(spec.name in BENCHMARKS for spec in suite.benchmarks)
    listed = set(suite.benchmark_names)
    for spec in suite.probes:
        assert spec.name in PROBES
        assert spec.benchmark in listed
        assert set(spec.params) <= set(PROBES[spec.name].accepted_params), spec.name


def test_shipped_files_are_the_suite_names():
    assert sorted(path.stem for path in SUITES_DIR.glob("*.yaml")) == sorted(SUITE_NAMES)


@pytest.mark.parametrize("name", SUITE_NAMES)
@pytest.mark.parametrize("extension", [".json", ".yml"])
def test_round_trip_through_a_file(tmp_path, name, extension):
    suite = load_suite(name)
    path = write_suite(tmp_path, suite.to_dict(), name=f"copy{extension}")
    again = load_suite(str(path))
    assert again == suite
    assert again.path == str(path) != suite.path
    assert {k: v for k, v in again.to_dict().items() if k != "path"} == {
        k: v for k, v in suite.to_dict().items() if k != "path"
    }
    json.dumps(suite.to_dict(), allow_nan=False)  # JSON-safe for results.json


def test_python_tuples_become_json_lists():
    suite = suite_from_dict(
        minimal(probes={"occlusion": {"num_images": 4, "params": {"ratios": (0.0, 0.2)}}})
    )
    assert suite.probe("occlusion").params == {"ratios": [0.0, 0.2]}
    assert suite_from_dict(suite.to_dict()) == suite


def test_defaults_of_a_minimal_user_file(tmp_path):
    suite = load_suite(write_suite(tmp_path, {"benchmarks": {"cifar10": None}}, name="tiny_suite.yaml"))
    assert suite.name == "tiny_suite"
    assert suite.benchmarks == (BenchmarkSpec(name="cifar10"),)
    assert suite.probes == () and suite.models == ()
    assert (suite.batch_size, suite.seed, suite.chunk_size) == (64, 0, 256)


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _notebook_text(notebook: str) -> str:
    """The stored stdout of a robustness-vit notebook (tests/fixtures/robustness_vit, commit b90ba6b)."""
    data = json.loads((FIXTURES / "robustness_vit" / "notebook_outputs.json").read_text(encoding="utf-8"))
    cells = data["notebooks"][notebook]["cells"]
    return "".join(
        "".join(output.get("text") or "")
        if isinstance(output.get("text"), list)
        else output.get("text") or ""
        for cell in cells
        for output in cell["outputs"]
    )


def _park_kim_cells(name: str) -> set[tuple[str, int]]:
    """(corruption, severity) of each row of one of Park & Kim's results CSVs (tests/fixtures/how_do_vits_work)."""
    with (FIXTURES / "how_do_vits_work" / name).open(newline="", encoding="utf-8") as handle:
        return {(row[1], int(row[0])) for row in csv.reader(handle)}


def _published_protocol(row_id: str) -> dict[str, str]:
    """The protocol parts of one row of the shipped published-numbers table (read with the csv module)."""
    text = (SUITES_DIR.parent.parent / "assets" / "published" / "published.csv").read_text(encoding="utf-8")
    row = next(r for r in csv.DictReader(text.splitlines()) if r["row_id"] == row_id)
    return dict(part.split("=", 1) for part in row["protocol"].split(";"))


def test_paper_suite_holds_the_protocol_numbers():
    """The paper suite runs Paul & Chen's protocol, as their notebooks' outputs and the results files show it."""
    suite = load_suite("paper")
    imagenet_c = suite.benchmark("imagenet-c").options
    # All 19 corruptions at 5 severities, in ImageNet-C's spelling: the cells of Park & Kim's CIFAR-100 file,
    # written by the same ImageNet-C corruption list with its 4 extras (how-do-vits-work README, 28691e5).
    cells = _park_kim_cells("cifar100_alexnet_dnn_corrupted.csv")
    assert (
        sorted(imagenet_c["corruptions"]) == sorted({c for c, _ in cells})
        and len(imagenet_c["corruptions"]) == 19
    )
    assert imagenet_c["severities"] == sorted({s for _, s in cells})
    # Occlusion (CutOut_ViT.ipynb): 1,000 images, unmasked, then the printed ratios.
    cutout = _notebook_text("analysis/masking/CutOut_ViT.ipynb")
    ratios = [float(r) for r in re.findall(r"^(0\.\d+): ", cutout, flags=re.M)]
    assert set(re.findall(r"out of (\d+)", cutout)) == {"1000"}
    occlusion = suite.probe("occlusion")
    assert occlusion.num_images == 1000 and occlusion.params["ratios"] == [0.0, *ratios] == [
        0.0,
        0.05,
        0.1,
        0.2,
        0.5,
    ]
    assert (
        occlusion.params["hole"]
        == _published_protocol("paul-chen/occlusion/top1/vit-l16-224/ratio-0")["hole"]
    )
    # PGD (PGD_ViT.ipynb): 100 images attacked, one "Original label" line each; the attack as the published row.
    pgd = suite.probe("pgd")
    assert (
        pgd.num_images == _notebook_text("analysis/pgd_attacks/PGD_ViT.ipynb").count("Original label:") == 100
    )
    published_pgd = _published_protocol("paul-chen/pgd/attacked/vit-l16-224")
    # The row also names the images' resize kernel (torchvision's on PIL images), a protocol part, not a parameter.
    assert published_pgd.pop("interpolation") == "pil-bilinear"
    assert {k: str(v) for k, v in pgd.params.items()} == published_pgd
    assert get_probe("pgd").selection_for(pgd.params) == "random"
    # ImageNet-9 (ImageNet_9.ipynb): every variant the notebook scored.
    scored = set(
        re.findall(r"Accuracy on (\w+) is", _notebook_text("imagenet_results/imagenet_9/ImageNet_9.ipynb"))
    )
    assert (
        scored
        == {"original", "mixed_same", "mixed_rand"}
        <= set(suite.benchmark("imagenet-9").options["variant"])
    )
    # ImageNet-A/R: the notebooks' top-1 over all 1000 classes is the headline, as the published rows state it.
    for name in ("imagenet-a", "imagenet-r"):
        published_mask = _published_protocol(f"paul-chen/{name}/top1/vit-b16")["class_mask"]
        assert (
            suite.benchmark(name).protocol
            == {"class_mask": published_mask}
            == {"class_mask": "paul-chen-1000"}
        )
    # ImageNet-P at difficulty 1 on the 10 test perturbations (ImageNet-P/test.py's default).
    assert suite.benchmark("imagenet-p").options == {"variant": list(TEST_PERTURBATIONS), "difficulty": 1}
    assert set(suite.benchmark_names) == {
        "imagenet-val", "imagenet-c", "imagenet-p", "imagenet-a", "imagenet-r", "imagenet-o", "imagenet-9",
    }  # fmt: skip


def test_mechanisms_suite_covers_park_and_kim():
    """The mechanisms suite runs Park & Kim's protocol, as their results files show it."""
    suite = load_suite("mechanisms")
    noise = suite.probe("frequency_noise").params
    assert (noise["band"], noise["epsilon"], noise["epsilon_units"]) == ("park-kim", 0.7, "imagenet-std")
    # ImageNet-C: the 15 corruptions x 5 severities of their ImageNet results file.
    cells = _park_kim_cells("imagenet_alexnet_dnn_corrupted.csv")
    imagenet_c = suite.benchmark("imagenet-c").options
    assert sorted(imagenet_c["corruptions"]) == sorted({c for c, _ in cells}) and len(cells) == 75
    assert imagenet_c["severities"] == sorted({s for _, s in cells})
    assert suite.benchmark("cifar100-c").options["severities"] == [1, 2, 3, 4, 5]
    # The loss landscape: the grid's range and the published row's settings (the ImageNet run keeps its own
    # augmentation, batch size and a coarser grid, which the published row's CIFAR-100 values are not).
    with (FIXTURES / "how_do_vits_work" / "cifar100_vit_ti_losslandscape.csv").open(newline="") as handle:
        grid = [(float(row[0]), float(row[1])) for row in csv.reader(handle)]
    landscape = suite.probe("loss_landscape").params
    assert landscape["x_range"] == [min(x for x, _ in grid), max(x for x, _ in grid)] == [-1.0, 1.0]
    assert landscape["y_range"] == [min(y for _, y in grid), max(y for _, y in grid)]
    published = _published_protocol("park-kim/loss_landscape/loss/resnet50-park-kim-cifar100/x=-0.7/y=-1.0")
    for part in ("normalization", "l2_term", "loss_average", "augmentation_draw"):
        assert landscape[part] == published[part], part
    assert landscape["weight_decay"] == float(published["weight_decay"])
    assert ",".join(landscape["exclude"]) == published["exclude"]
    # Park & Kim's Hessian and loss landscapes are measured on training mini-batches (how-do-vits-work
    # losslandscape.ipynb passes `dataset_train`).
    assert {"imagenet-val", "imagenet-train", "cifar100", "cifar100-train"} <= set(suite.benchmark_names)
    assert set(suite.probe_names) == {
        "hessian", "feature_fourier", "feature_variance", "cka", "frequency_noise", "lesion", "loss_landscape",
    }  # fmt: skip


def test_quick_suite_covers_everything_on_few_samples():
    suite = load_suite("quick")
    assert set(suite.benchmark_names) == set(BENCHMARKS)
    assert set(suite.probe_names) == set(PROBES)
    assert all(spec.num_images <= 64 for spec in suite.probes)
    assert all(spec.limit is None or spec.limit <= 500 for spec in suite.benchmarks)


def test_demo_suite_is_offline():
    suite = load_suite("demo")
    assert suite.models == ("builtin:efficientnet_lite0",)
    assert {spec.name: spec.source for spec in suite.benchmarks} == {
        "imagenet-val": "builtin",
        "imagenet-c": "generated:builtin",
        "imagenet-p": "generated:builtin",
    }
    assert suite.benchmark("imagenet-c").options["corruptions"] == list(STANDARD_CORRUPTIONS)
    assert all(spec.benchmark == "imagenet-val" and spec.num_images <= 16 for spec in suite.probes)
    # Every other suite leaves the model to the user.
    assert all(load_suite(name).models == () for name in SUITE_NAMES if name != "demo")


def test_demo_suite_opens_with_load_benchmark():
    """The demo's options are what load_benchmark takes: every source opens and validates (nothing is generated)."""
    from hf_vitrobust.data import load_benchmark

    suite = load_suite("demo")
    sources = {
        spec.name: load_benchmark(spec.name, spec.source, limit=spec.limit, seed=suite.seed, **spec.options)
        for spec in suite.benchmarks
    }
    for source in sources.values():
        source.validate()
    photos = sum(1 for _ in sources["imagenet-val"].raw_samples())
    assert 16 <= photos <= 64  # every probe's num_images fits; the budget comment assumes about 30
    assert sources["imagenet-c"].corruptions == STANDARD_CORRUPTIONS
    assert sources["imagenet-c"].severities == (1, 2, 3, 4, 5)


def test_model_pairs_name_existing_timm_checkpoints():
    import timm

    registry = set(timm.list_models(pretrained=True))
    pairs = load_suite("paper").model_pairs + load_suite("mechanisms").model_pairs
    assert len(load_suite("paper").model_pairs) >= 8
    timm_specs = [spec for pair in pairs for spec in (pair["vit"], pair["cnn"]) if spec.startswith("timm/")]
    assert len(timm_specs) >= 10
    missing = [spec for spec in timm_specs if spec.removeprefix("timm/") not in registry]
    assert missing == []
    assert all(pair["note"] for pair in pairs)


def test_shorthands_expand():
    suite = suite_from_dict(
        minimal(
            benchmarks={
                "imagenet-c": {"corruptions": "standard", "severities": 3},
                "cifar10-c": {"source": "generated:uoft-cs/cifar10", "corruptions": "all"},
                "imagenet-p": {"variant": "all", "difficulty": None},
                "ImageNet_9": {"variant": "mixed_rand"},
                "imagenet-val": None,
            }
        )
    )
    assert suite.benchmark("imagenet-c").options == {
        "corruptions": list(STANDARD_CORRUPTIONS),
        "severities": [3],
    }
    assert suite.benchmark("cifar10-c").options == {"corruptions": list(CORRUPTIONS)}
    assert len(suite.benchmark("imagenet-p").options["variant"]) == 14
    assert suite.benchmark("imagenet-9").options == {"variant": ["mixed_rand"]}


def test_options_nested_or_flat_are_the_same():
    flat = suite_from_dict(
        minimal(benchmarks={"imagenet-c": {"corruptions": ["fog"], "limit": 3}, "imagenet-val": {}})
    )
    nested = suite_from_dict(
        minimal(
            benchmarks={"imagenet-c": {"options": {"corruptions": ["fog"]}, "limit": 3}, "imagenet-val": {}}
        )
    )
    assert flat == nested
    assert flat.benchmark("imagenet-c") == BenchmarkSpec("imagenet-c", None, 3, {"corruptions": ["fog"]}, {})


def test_unknown_suite_name_suggests_a_shipped_one():
    with pytest.raises(
        ValueError, match=r"Unknown suite 'papr'\. Did you mean 'paper'\?.*mechanisms, quick, demo"
    ):
        load_suite("papr")
    with pytest.raises(ValueError, match="Did you mean 'paper'"):
        suite_path("papr")
    with pytest.raises(ValueError, match="does not exist"):
        load_suite("no/such/suite.yaml")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"benchmarks": {"imagenet-cc": {}}},
            r"benchmarks: unknown benchmark 'imagenet-cc'\. Did you mean 'imagenet-c'",
        ),
        (
            {"probes": {"oclusion": {"num_images": 4}}},
            r"probes: unknown probe 'oclusion'\. Did you mean 'occlusion'",
        ),
        (
            {"probes": {"occlusion": {"num_images": 4, "params": {"ratio": [0.1]}}}},
            r"probes\.occlusion: params: unknown parameter 'ratio' of occlusion_sweep\. Did you mean 'ratios'",
        ),
        (
            {"probes": {"pgd": {"num_images": 4, "params": {"lr": 0.1}}}},
            r"probes\.pgd: params: unknown parameter 'lr'.*Accepted: .*step_size",
        ),
        (
            {"probes": {"occlusion": {"num_images": 4, "params": {"num_images": 10}}}},
            r"'num_images' cannot be set here \(set num_images on the probe entry",
        ),
        (
            {"probes": {"pgd": {"num_images": 4, "params": {"num_images": 10}}}},
            r"probes\.pgd: params: 'num_images' cannot be set here \(.*'correct' selection",
        ),
        ({"probes": {"occlusion": {"num_images": 4, "params": {"seed": 8}}}}, r"'seed' cannot be set here"),
        (
            {"probes": {"hessian": {"num_images": 4, "params": {"max_batches": 2}}}},
            r"probes\.hessian: params: 'max_batches' cannot be set here \(the probe spec's num_images",
        ),
        ({"probes": {"occlusion": {}}}, r"probes\.occlusion: 'num_images' is missing"),
        ({"probes": {"occlusion": {"num_images": 0}}}, r"num_images must be a positive integer, got 0"),
        (
            {"probes": {"occlusion": {"num_images": 4, "benchmark": "cifar10"}}},
            r"reads benchmark 'cifar10', which the suite does not list",
        ),
        (
            {"probes": {"occlusion": {"num_images": 4, "benchmark": "imagenet-c"}}},
            r"imagenet-c is not a clean classification benchmark",
        ),
        (
            {"benchmarks": {"imagenet-c": {"corruptions": ["gausian_noise"]}}},
            r"benchmarks\.imagenet-c: corruptions: unknown corruption 'gausian_noise'\. Did you mean 'gaussian_noise'",
        ),
        ({"benchmarks": {"imagenet-c": {"severities": [1, 6]}}}, r"severities must be integers in 1\.\.5"),
        ({"benchmarks": {"imagenet-c": {"difficulty": 1}}}, r"option 'difficulty' is for imagenet-p only"),
        ({"benchmarks": {"imagenet-p": {"corruptions": ["snow"]}}}, r"perturbations are its 'variant'"),
        (
            {"benchmarks": {"imagenet-c": {"corruption": "all"}}},
            r"unknown setting 'corruption'\. Did you mean 'corruptions'",
        ),
        (
            {"benchmarks": {"imagenet-p": {"variant": ["rotation"]}}},
            r"unknown ImageNet-P perturbation 'rotation'\. Did you mean 'rotate'",
        ),
        (
            {"benchmarks": {"imagenet-9": {"variant": "mixed-same"}}},
            r"unknown variant 'mixed-same'\. Did you mean 'mixed_same'",
        ),
        ({"benchmarks": {"imagenet-p": {"difficulty": 4}}}, r"difficulty must be 1, 2 or 3"),
        (
            {
                "benchmarks": {
                    "imagenet-p": {"source": "generated:builtin", "variant": ["rotate"], "difficulty": 2}
                }
            },
            r"generated ImageNet-P has difficulty 2 only for the noise types .* not rotate",
        ),
        ({"benchmarks": {"imagenet-a": {"source": "generated:builtin"}}}, r"imagenet-a cannot be generated"),
        ({"benchmarks": {"imagenet-c": {"source": "builtin"}}}, r"for imagenet-c use 'generated:builtin'"),
        (
            {"benchmarks": {"cifar10-c": {"source": "generated:builtin"}}},
            r"cifar10-c is generated from cifar10 \(e\.g\. generated:uoft-cs/cifar10\)",
        ),
        (
            {"benchmarks": {"imagenet-a": {"in_distribution": "default"}}},
            r"'in_distribution' is for imagenet-o only",
        ),
        ({"benchmarks": {"imagenet-val": {"limit": -1}}}, r"limit must be a positive integer"),
        ({"benchmarks": {"imagenet-val": {"schema": "nope"}}}, r"unknown Hub schema 'nope'"),
        ({"benchmark": {}}, r"unknown suite key 'benchmark'\. Did you mean 'benchmarks'"),
        ({"seed": -1}, r"seed must be an integer >= 0"),
        ({"model_pairs": [{"vit": 1}]}, r"model_pairs"),
    ],
)
def test_mistakes_fail_at_load_time_naming_file_entry_and_close_matches(tmp_path, changes, message):
    data = minimal()
    for key, value in changes.items():
        if key == "benchmarks":
            data["benchmarks"] = {**data["benchmarks"], **value}
        else:
            data[key] = value
    path = write_suite(tmp_path, data)
    with pytest.raises(ValueError, match=message) as error:
        load_suite(path)
    assert str(path) in str(error.value)


def test_bad_files(tmp_path):
    (tmp_path / "suite.txt").write_text("name: x\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"ends in \.yaml, \.yml or \.json"):
        load_suite(tmp_path / "suite.txt")
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken\.json: not valid JSON"):
        load_suite(tmp_path / "broken.json")
    (tmp_path / "list.yaml").write_text("- a\n- b\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"list\.yaml: a suite is a mapping"):
        load_suite(tmp_path / "list.yaml")


def test_probe_tasks_check_params_runs_at_load_time(tmp_path, monkeypatch):
    """The probe task's own check (values, not only names) runs when the file is read, with file and entry."""
    seen = []

    def occlusion_sweep(*, ratios=(0.0,)):
        pass

    class Task:
        probe = occlusion_sweep
        accepted_params = ("ratios",)
        excluded_params = types.MappingProxyType({})

        def check_params(self, params):
            seen.append(params)
            if params["ratios"][0] < 0:
                raise ValueError("ratios must be in [0, 1).")

    monkeypatch.setattr(suite_module, "_probe_registry", lambda: {"occlusion": Task()})
    assert load_suite(write_suite(tmp_path, minimal())).probe("occlusion") == SuiteProbe(
        "occlusion", "imagenet-val", 8, {"ratios": [0.0, 0.5]}
    )
    assert seen == [{"ratios": [0.0, 0.5]}]
    bad = minimal(probes={"occlusion": {"num_images": 8, "params": {"ratios": [-0.1]}}})
    path = write_suite(tmp_path, bad, name="bad.yaml")
    with pytest.raises(ValueError, match=r"bad\.yaml: probes\.occlusion: params: ratios must be in \[0, 1\)"):
        load_suite(path)
    # Names come from the probe registry: a probe it does not hold is unknown.
    other = minimal(probes={"pgd": {"num_images": 8}})
    with pytest.raises(ValueError, match=r"unknown probe 'pgd'"):
        load_suite(write_suite(tmp_path, other, name="other.yaml"))


def test_suite_equality_ignores_the_path():
    suite = load_suite("demo")
    copy = Suite(**{**suite.__dict__, "path": None})
    assert copy == suite
    assert copy.to_dict()["path"] is None


def _hub_parts(source) -> list:
    """(HubSource, part) for every Hub part a source would load, through the wrappers a suite's sources are made of:
    ImageNet-O's two halves and a generated benchmark's clean source."""
    from hf_vitrobust.data import BuiltinPhotosSource, HubSource, ImageNetOSource
    from hf_vitrobust.data.generated import GeneratedSource

    if isinstance(source, HubSource):
        return [(source, part) for part in source.parts]
    if isinstance(source, ImageNetOSource):
        return _hub_parts(source.ood) + (_hub_parts(source.in_distribution) if source.in_distribution else [])
    if isinstance(source, GeneratedSource):  # ImageNet-C, -P and -C-bar made on the fly
        return _hub_parts(source.clean)
    assert isinstance(source, BuiltinPhotosSource), type(source)
    return []


@pytest.mark.parametrize("name", SUITE_NAMES)
def test_every_hub_part_a_shipped_suite_requests_is_known_to_exist(name):
    """Resolved as the runner resolves them on their own defaults (offline: nothing is loaded), every Hub part a
    shipped suite would read is a repository, config and split that a registered schema knows the Hub publishes;
    a part the default does not publish (the paper suite's 4 extra ImageNet-C corruptions) is left out and
    recorded, never requested."""
    from hf_vitrobust.data import UNSTREAMABLE_REPOS, match_schema
    from hf_vitrobust.evaluation.streams import open_benchmark

    suite = load_suite(name)
    checked = 0
    for spec in suite.benchmarks:
        benchmark = BENCHMARKS[spec.name]
        if spec.source is None and benchmark.default_source is None:
            assert spec.optional, f"{name}: {spec.name} has no default source and is not optional"
            continue
        source = open_benchmark(spec, spec.source, suite.seed)
        for hub, part in _hub_parts(source):
            schema = hub.schema
            assert schema is not None and match_schema(hub.path) is not None, hub.path
            assert hub.path.lower() not in UNSTREAMABLE_REPOS
            kwargs = part.load_kwargs
            if schema.splits_by_corruption:
                cell = (part.metadata["corruption"], part.metadata["severity"])
                assert schema.cells is None or cell in schema.cells, (name, spec.name, hub.path, cell)
                if schema.repo_template:
                    assert kwargs["path"] == schema.repo_template.format(corruption=cell[0], severity=cell[1])
                if schema.config_template:
                    assert kwargs["name"] == schema.config_template.format(corruption=cell[0])
                if schema.split_template:
                    assert kwargs["split"] == schema.split_template.format(severity=cell[1])
            else:
                assert kwargs["path"] == schema.repo and kwargs["split"] in schema.splits, (name, kwargs)
                assert kwargs.get("name") == schema.config
            checked += 1
        if spec.name == "imagenet-c" and spec.source is None and len(spec.options["corruptions"]) == 19:
            assert source.describe()["unavailable"]["cells"] == [
                f"{c}/{s}" for c in EXTRA_CORRUPTIONS for s in spec.options["severities"]
            ]
            # Named by the user, the same source must hold every part asked of it.
            from hf_vitrobust.data import SchemaError

            with pytest.raises(SchemaError, match="not known to publish speckle_noise/1"):
                open_benchmark(spec, "WNJXYK/TTA-ImageNet-C", suite.seed)
    assert checked or name == "demo"
