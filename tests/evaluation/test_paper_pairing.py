# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The `paper` suite's pairing (`pairing: paul-chen`, `analysis.pairings`): each model is fed as Paul & Chen's
notebooks fed it, benchmark by benchmark, and `vitrobust evaluate --suite paper` plans the same preprocessing as
`vitrobust reproduce paul-chen` for the same number.

The notebooks: BiT-M (TF-Hub) squashed to 224 pixels everywhere (`tf.image.resize(image, (224, 224))` in the
ImageNet-A/R/O notebooks, CutOut_BiT, PGD_BiT, Disc_Regions); the vit_jax ViT-L/16 squashed to its 384 pixels on
ImageNet-A/R/O; timm's 224-pixel ViT-L/16 for the probes.
"""

import json

import pytest
import timm
import yaml
from probe_models import vit_l16_input_folder
from timm.data import resolve_data_config

from hf_vitrobust.analysis.pairings import model_pairing
from hf_vitrobust.data import get_benchmark
from hf_vitrobust.evaluation.config import EvaluationConfig, EvaluationError
from hf_vitrobust.evaluation.model_input import model_input
from hf_vitrobust.evaluation.reproduce import pair_names, plan_reproduction
from hf_vitrobust.evaluation.runner import evaluate
from hf_vitrobust.evaluation.suite import load_suite, suite_from_dict
from hf_vitrobust.models import Classifier, Preprocessing, load_classifier

VIT_224 = "google/vit-large-patch16-224"
VIT_384 = "google/vit-large-patch16-384"
BIT = "timm/resnetv2_101x3_bit.goog_in21k_ft_in1k"

#: benchmark -> (preprocessing, input side) per model, as the notebooks fed them (the module docstring).
EXPECTED = {
    BIT: {
        "imagenet-val": ("squash-224", 224),
        "imagenet-a": ("squash-224", 224),
        "imagenet-r": ("squash-224", 224),
        "imagenet-o": ("squash-224", 224),
        "imagenet-c": ("as-released", 224),
        "imagenet-9": ("as-released", 224),
    },
    VIT_384: {
        "imagenet-a": ("native-resize", 384),
        "imagenet-r": ("native-resize", 384),
        "imagenet-o": ("native-resize", 384),
    },
    VIT_224: {
        "imagenet-val": ("native-resize", 224),
        "imagenet-c": ("as-released", 224),
        "imagenet-9": ("as-released", 224),
    },
}


def _bit() -> Classifier:
    """A random-weights timm ResNetV2-BiT fed as timm feeds resnetv2_101x3_bit.goog_in21k_ft_in1k: its real
    pretrained config (448 pixels, crop_pct 1.0); the R50x1 body keeps the test fast."""
    cfg = timm.models.get_pretrained_cfg("resnetv2_101x3_bit.goog_in21k_ft_in1k")
    module = timm.create_model("resnetv2_50x1_bit", pretrained=False, pretrained_cfg=cfg).eval()
    data_config = resolve_data_config({}, model=module)
    assert data_config["input_size"] == (3, 448, 448) and data_config["crop_pct"] == 1.0
    return Classifier(module, Preprocessing.from_timm(data_config), name="resnetv2_101x3_bit")


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Classifier]:
    root = tmp_path_factory.mktemp("pairing")
    return {
        VIT_224: load_classifier(vit_l16_input_folder(root / "vit224", 224)),
        VIT_384: load_classifier(vit_l16_input_folder(root / "vit384", 384)),
        BIT: _bit(),
    }


def test_the_paper_suite_feeds_each_model_as_the_notebooks(models):
    resolved = EvaluationConfig(models=list(EXPECTED), suite="paper").resolve()
    for spec, benchmarks in EXPECTED.items():
        for name, (preprocessing, side) in benchmarks.items():
            chosen, pairing = resolved.model_preprocessing(spec, name)
            fed = model_input(resolved.benchmarks[name], chosen, models[spec], pairing=pairing)
            assert (fed.applied, tuple(fed.classifier.input_size)) == (preprocessing, (side, side)), (
                spec,
                name,
            )
            # A squash: the resize goes to the input size itself (no crop).
            if preprocessing != "as-released":
                assert tuple(fed.preprocessing["resize_size"]) == (side, side), (spec, name)
    # Without the pairing, BiT-M would read ImageNet-A at timm's 448 pixels: the pairing is what brings it to 224.
    native = model_input(get_benchmark("imagenet-a"), "model-native", models[BIT])
    assert tuple(native.classifier.input_size) == (448, 448)
    assert resolved.model_preprocessing(BIT, "imagenet-a")[1].why.startswith("paul-chen pairing: squash-224")


def test_the_command_line_and_the_suite_entry_override_the_pairing():
    config = EvaluationConfig(
        models=[BIT], suite="paper", protocols={"imagenet-a": {"class_mask": "hendrycks-200"}}
    )
    assert config.resolve().model_preprocessing(BIT, "imagenet-a")[0] == "squash-224"
    config = EvaluationConfig(
        models=[BIT], suite="paper", protocols={"imagenet-a": {"preprocessing": "model-native"}}
    )
    assert config.resolve().model_preprocessing(BIT, "imagenet-a") == ("model-native", None)
    data = load_suite("paper").to_dict()
    data["benchmarks"]["imagenet-r"]["protocol"] = {"preprocessing": "resize256-crop224"}
    assert suite_from_dict(json.loads(json.dumps(data))).pairing == "paul-chen"
    # A model the paper does not name gets the benchmark's protocol.
    resolved = EvaluationConfig(models=["builtin:efficientnet_lite0"], suite="paper").resolve()
    assert resolved.model_preprocessing("builtin:efficientnet_lite0", "imagenet-a") == ("model-native", None)


def test_an_unknown_pairing_fails_when_the_suite_is_read():
    with pytest.raises(ValueError, match=r"pairing 'paul-chn' is not a paper.*paul-chen"):
        suite_from_dict({"name": "x", "pairing": "paul-chn", "benchmarks": {"imagenet-a": {}}})
    with pytest.raises(ValueError, match="Unknown paper"):
        model_pairing("paul-chn", BIT, {})


@pytest.mark.parametrize("pair", pair_names("paul-chen"))
def test_evaluate_and_reproduce_plan_the_same_preprocessing(pair):
    plan = plan_reproduction("paul-chen", pair)
    specs = list(dict.fromkeys(leg.spec for leg in plan.legs))
    resolved = EvaluationConfig(models=specs, suite="paper").resolve()
    compared = 0
    for leg in plan.legs:
        for name, protocol in leg.benchmarks.items():
            if "preprocessing" in protocol:
                assert resolved.model_preprocessing(leg.spec, name)[0] == protocol["preprocessing"], (
                    leg.name,
                    name,
                )
                compared += 1
    assert compared >= 2  # every pair has published ImageNet-A and -R numbers of one model at least


def test_a_run_records_and_reports_the_pairing_per_model(tmp_path):
    from hf_vitrobust.report.document import render_markdown

    suite = {
        "name": "paired",
        "pairing": "paul-chen",
        "batch_size": 4,
        "chunk_size": 4,
        "benchmarks": {"imagenet-val": {"source": "builtin", "limit": 4}},
        # The builtin CNN stands for BiT-M R101x3 in this pair: it gets that model's squash to 224.
        "model_pairs": [
            {"name": "vit-l16/bit-m-r101x3", "vit": VIT_224, "cnn": "builtin:efficientnet_lite0"}
        ],
    }
    path = tmp_path / "paired.yaml"
    path.write_text(yaml.safe_dump(suite))
    config = EvaluationConfig(
        models=["builtin:efficientnet_lite0"],
        suite=str(path),
        output=tmp_path / "run",
        progress=False,
        report=False,
    )
    results = evaluate(config)
    key = results["models"][0]["key"]
    given = results["benchmarks"]["imagenet-val"]["protocol"]["models"][key]
    assert (given["requested"], given["applied"], given["input_size"]) == (
        "squash-224",
        "squash-224",
        [224, 224],
    )
    assert given["preprocessing"]["resize_size"] == [224, 224]
    assert given["pairing"].startswith(
        "paul-chen pairing: squash-224, as the published numbers of bit-m-r101x3"
    )
    # The model's own transform would have resized to 256 and cropped: the pairing changed what it read.
    assert load_classifier("builtin:efficientnet_lite0").preprocessing.resize_size != (224, 224)
    protocols = render_markdown([results], {}).split("## Protocols", 1)[1].split("\n## ", 1)[0]
    assert f"| imagenet-val | {key} | squash-224 | 224×224 |" in protocols
    assert "paul-chen pairing: squash-224" in protocols


def test_a_bad_option_still_fails_before_any_work():
    with pytest.raises(EvaluationError, match="unknown preprocessing protocol"):
        EvaluationConfig(
            models=[BIT], suite="paper", protocols={"imagenet-a": {"preprocessing": "squash"}}
        ).resolve()
