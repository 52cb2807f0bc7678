"""`vitrobust reproduce park-kim --pair vit-ti/resnet-50-cifar100` (issue 33 points 2 and 3): Park & Kim's own
CIFAR-100 checkpoints, their loss-landscape protocol, and their ImageNet-C robustness measured as they did."""

from __future__ import annotations

import csv

from hf_vitrobust.analysis.published import published_numbers
from hf_vitrobust.constants import DEFAULT_MODEL
from hf_vitrobust.evaluation.config import EvaluationConfig
from hf_vitrobust.evaluation.plan import plan_evaluation
from hf_vitrobust.evaluation.reproduce import leg_suite, plan_reproduction
from hf_vitrobust.evaluation.suite import load_suite

RELEASE = "https://github.com/xxxnell/how-do-vits-work-storage/releases/download/v0.1/"
CHECKPOINTS = {
    "vit-ti-park-kim-cifar100": RELEASE + "vit_ti_cifar100_9857b21357.pth.tar",
    "resnet50-park-kim-cifar100": RELEASE + "resnet_50_cifar100_691cc9a9e4.pth.tar",
}


def test_the_cifar100_pair_runs_their_checkpoints_under_their_loss_landscape_protocol():
    """One leg per release checkpoint, serving every published row of its model; the loss landscape on
    cifar100-train with the protocol column's settings and as many images as each published point (4,992 random
    draws); the findings' probes read the CIFAR-100 counterpart of their ImageNet benchmark, never ImageNet."""
    plan = plan_reproduction("park-kim", "vit-ti/resnet-50-cifar100")
    assert plan.label_space == "cifar100"
    assert {m.role: (m.model_key, m.spec) for m in plan.members} == {
        "vit": ("vit-ti-park-kim-cifar100", CHECKPOINTS["vit-ti-park-kim-cifar100"]),
        "cnn": ("resnet50-park-kim-cifar100", CHECKPOINTS["resnet50-park-kim-cifar100"]),
    }
    assert len(plan.legs) == 2 and not any("no published number" in note for note in plan.notes)
    with open("hf_vitrobust/assets/published/published.csv", newline="", encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    for leg in plan.legs:
        (member,) = leg.members
        assert leg.spec == CHECKPOINTS[member.model_key]
        rows = {r["row_id"] for r in table if r["model_key"] == member.model_key}
        assert set(leg.rows) == rows and len(rows) in (454, 423)
        protocols = {r["protocol"] for r in table if r["model_key"] == member.model_key}
        (protocol,) = protocols
        wanted = dict(part.split("=") for part in protocol.split(";"))
        landscape = leg.probes["loss_landscape"]
        assert {k: str(v) if not isinstance(v, list) else ",".join(v) for k, v in landscape.items()} == wanted
        suite = leg_suite(plan, leg)
        entry = suite["probes"]["loss_landscape"]
        assert entry["benchmark"] == "cifar100-train" and entry["num_images"] == 4992
        assert entry["params"]["batch_size"] == 96 and entry["params"]["resolution"] == 21
        assert set(suite["benchmarks"]) == {"cifar100-train", "cifar100"}
        counterpart = {"imagenet-val": "cifar100", "imagenet-train": "cifar100-train"}
        for probe in set(suite["probes"]) - {"loss_landscape"}:
            own = plan.suite.probe(probe)
            assert suite["probes"][probe]["benchmark"] == counterpart[own.benchmark], probe
            if own.params.get("augmentation") == "park-kim-imagenet":  # their CIFAR-100 recipe and batch size
                assert suite["probes"][probe]["params"]["augmentation"] == "park-kim-cifar100"
                assert suite["probes"][probe]["params"]["batch_size"] == 96
    assert "4992 images" in plan.describe()
    assert [leg.name for leg in plan.legs] == [
        "vit-vit_ti_cifar100_9857b21357.pth.tar",
        "cnn-resnet_50_cifar100_691cc9a9e4.pth.tar",
    ]


def test_the_imagenet_default_pair_says_it_has_no_published_number():
    plan = plan_reproduction("park-kim")
    assert plan.pair == "deit-s/resnet-50" and plan.published_rows == 0
    assert any("no published number of Park & Kim" in note for note in plan.notes)
    assert "no published number of Park & Kim" in plan.describe()


def test_the_mechanisms_suite_measures_imagenet_c_as_park_and_kim_and_the_run_records_it(tmp_path):
    """The suite's ImageNet-C protocol is the one of the 300 published rows of their ImageNet AlexNet (their
    get_imagenetc: Resize(256) with PIL bilinear, CenterCrop(224) on the released 224-px images), and the run
    resolves it from the suite (what results.json records) as a 256 resize and a 224 crop."""
    rows = [r for r in published_numbers("park-kim") if r.model_key == "alexnet-park-kim-imagenet"]
    assert len(rows) == 300 and {r.protocol for r in rows} == {
        "interpolation=pil-bilinear;preprocessing=resize256-crop224"
    }
    assert load_suite("mechanisms").benchmark("imagenet-c").protocol == rows[0].protocol_parts
    config = EvaluationConfig(
        models=[DEFAULT_MODEL],
        suite="mechanisms",
        data={"imagenet-c": "generated:builtin", "imagenet-val": "builtin"},
        output=tmp_path / "run",
    )
    (model,) = plan_evaluation(config).models
    imagenet_c = next(bench for bench in model.benchmarks if bench.name == "imagenet-c")
    assert imagenet_c.protocol["preprocessing"] == "resize256-crop224"
    assert imagenet_c.origins["preprocessing"] == imagenet_c.origins["interpolation"] == "suite"
    assert (imagenet_c.preprocessing["resize_size"], imagenet_c.input_size) == (256, [224, 224])


def test_a_local_copy_of_a_release_file_runs_its_leg_and_its_numbers_match_it(tmp_path):
    """`--vit /data/vit_ti_cifar100_9857b21357.pth.tar` (the released file name) or `park-kim:vit-ti:<renamed>` is
    the release itself: its leg runs the local copy (not the URL, which offline would need the torch cache), and a
    run of that copy is identified as the published model, so its numbers are compared."""
    from hf_vitrobust.analysis.published_models import identify_models
    from hf_vitrobust.models import checkpoint_identity

    local = str(tmp_path / "vit_ti_cifar100_9857b21357.pth.tar")
    renamed = f"park-kim:resnet-50:{tmp_path / 'mine.pth'}"
    assert checkpoint_identity(local) == CHECKPOINTS["vit-ti-park-kim-cifar100"]
    assert checkpoint_identity(renamed) == CHECKPOINTS["resnet50-park-kim-cifar100"]
    assert checkpoint_identity("park-kim:vit-ti") == CHECKPOINTS["vit-ti-park-kim-cifar100"]
    assert checkpoint_identity("timm/resnet50.a1_in1k") == "timm/resnet50.a1_in1k"
    assert checkpoint_identity("park-kim:vit-s") == "park-kim:vit-s"  # names no release: itself
    plan = plan_reproduction("park-kim", "vit-ti/resnet-50-cifar100", vit=local, cnn=renamed)
    assert {leg.members[0].role: leg.spec for leg in plan.legs} == {"vit": local, "cnn": renamed}
    assert all("the pair's copy of https://github.com/xxxnell/" in leg.why for leg in plan.legs)
    run = {"models": [{"key": "m0", "spec": local}, {"key": "m1", "spec": "timm/vit_tiny_patch16_224"}]}
    assert [(found.model_key, found.candidates) for found in identify_models([run])] == [
        ("vit-ti-park-kim-cifar100", ((0, "m0"),))
    ]
