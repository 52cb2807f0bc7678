# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""`vitrobust reproduce` (`evaluation.reproduce`): the plan of a pair (one run per checkpoint and protocol the
published numbers need), and the offline default end to end: the builtin model stands in for both members, every
published number is "not comparable" with its reasons, and the report, the leg results and reproduction.json hold
the "Published vs ours" and "Findings" sections."""

from __future__ import annotations

import json

import pytest

from hf_vitrobust.analysis.analyze import analyze
from hf_vitrobust.analysis.published import published_numbers
from hf_vitrobust.analysis.published_vs_ours import published_comparisons
from hf_vitrobust.analysis.results import load_results, merge_results
from hf_vitrobust.cli import main as cli_main
from hf_vitrobust.evaluation.reproduce import leg_suite, pair_names, plan_reproduction
from hf_vitrobust.evaluation.suite import load_suite, suite_from_dict


def _legs(plan):
    return {leg.spec: leg for leg in plan.legs}


def test_the_plan_runs_each_number_with_its_checkpoint_and_protocol(tmp_path):
    plan = plan_reproduction("paul-chen", "vit-l16/bit-m-r101x3", data={"imagenet-val": str(tmp_path)})
    vit384, vit224, vit224_holed, bit, bit_holed = plan.legs
    assert set(_legs(plan)) == {
        "google/vit-large-patch16-384",
        "google/vit-large-patch16-224",
        "timm/resnetv2_101x3_bit.goog_in21k_ft_in1k",
    }
    assert (vit224_holed.spec, bit_holed.spec) == (vit224.spec, bit.spec)
    # ImageNet-A/R/O of the vit_jax 384-pixel checkpoint, squashed to its size; the BiT-M at 224 (TF-Hub).
    # Both with TensorFlow's bilinear resize (vit_jax's input pipeline, tf.image.resize).
    squash = {"preprocessing": "native-resize", "interpolation": "tf-bilinear"}
    assert vit384.benchmarks == {name: squash for name in ("imagenet-a", "imagenet-r", "imagenet-o")}
    for name in ("imagenet-a", "imagenet-r", "imagenet-o"):
        assert bit.benchmarks[name] == {"preprocessing": "squash-224", "interpolation": "tf-bilinear"}
    # ImageNet-9 as released, the occlusion notebooks' Cutout rule and image list (a local folder is given).
    assert vit224.benchmarks["imagenet-9"] == {"preprocessing": "as-released"}
    assert vit224.probes["occlusion"] == {"hole": "albumentations-1", "image_list": "paul-chen-occlusion-1k"}
    assert vit224.probes["pgd"]["record"] == "paul-chen-notebook" and vit224.probes["pgd"]["eps"] == 0.001
    # The holed occlusion images were resized to 8 bits before the hole, each notebook its own way (CutOut_ViT cell 6:
    # albumentations' Resize, OpenCV; CutOut_BiT cell 4: tf.image.resize cast to uint8): a leg each, occlusion only.
    for holed, kernel, preprocessing in (
        (vit224_holed, "cv2-bilinear-uint8", "native-resize"),
        (bit_holed, "tf-bilinear-uint8", "squash-224"),
    ):
        assert holed.benchmarks == {"imagenet-val": {"preprocessing": preprocessing, "interpolation": kernel}}
        assert holed.probes == {
            "occlusion": {"hole": "albumentations-1", "image_list": "paul-chen-occlusion-1k"}
        }
        assert sorted(holed.rows) == sorted(
            r.row_id
            for r in published_numbers("paul-chen")
            if r.benchmark == "occlusion"
            and r.model_key == holed.members[0].model_key
            and r.protocol_parts["interpolation"] == kernel
        )
        assert len(holed.rows) == 4
    # The BiT notebook's unprojected attack, with its own lr (1e-3 on [0, 1] pixels), for the BiT rows.
    assert bit.probes["pgd"]["record"] == "paul-chen-bit-notebook" and bit.probes["pgd"]["step_size"] == 0.001
    # Every published number of both models is served by exactly one leg.
    served = [row_id for leg in plan.legs for row_id in leg.rows]
    wanted = [r.row_id for r in published_numbers("paul-chen") if r.model_key in ("vit-l16", "bit-m-r101x3")]
    assert sorted(served) == sorted(wanted)
    # The findings' data is added where no published number asked for it (ImageNet-C for both members).
    assert "imagenet-c" in vit224.benchmarks and "imagenet-c" in bit.benchmarks
    # Each leg's suite is the paper suite restricted, and reads back as a valid suite.
    suite = suite_from_dict(leg_suite(plan, vit384))
    assert suite.benchmark_names == ("imagenet-a", "imagenet-r", "imagenet-o")
    assert suite.benchmark("imagenet-a").protocol["preprocessing"] == "native-resize"
    assert suite.benchmark("imagenet-a").protocol["class_mask"] == "paul-chen-1000"


def test_the_image_list_needs_a_local_validation_folder_and_the_plan_says_so():
    plan = plan_reproduction("paul-chen", "vit-l16/bit-m-r101x3")
    assert all("image_list" not in leg.probes.get("occlusion", {}) for leg in plan.legs)
    assert any("local ImageNet validation folder" in note for note in plan.notes)


def test_pairs_are_named_checked_and_custom_pairs_need_both_specs():
    assert "vit-l16/bit-m-r101x3" in pair_names("paul-chen") and "deit-s/resnet-50" in pair_names("park-kim")
    with pytest.raises(ValueError, match=r"not a pair of the paper suite.*vit-l16/bit-m-r101x3"):
        plan_reproduction("paul-chen", "vit-l16/bit-m-r101x4")
    with pytest.raises(ValueError, match="Unknown paper"):
        plan_reproduction("paul-chan")
    custom = plan_reproduction(
        "park-kim",
        "vit-ti-park-kim-cifar100/resnet50-park-kim-cifar100",
        vit="timm/vit_tiny_patch16_224.augreg_in21k_ft_in1k",
        cnn="timm/resnet50.a1_in1k",
    )
    # Their CIFAR-100 checkpoints are public (the published rows name their release files as same-weights): those
    # files run, not the pair's specs, the loss landscape on CIFAR-100's train set.
    release = "https://github.com/xxxnell/how-do-vits-work-storage/releases/download/v0.1/"
    assert {leg.spec for leg in custom.legs} == {
        release + "vit_ti_cifar100_9857b21357.pth.tar",
        release + "resnet_50_cifar100_691cc9a9e4.pth.tar",
    }
    assert all(leg.probe_data["loss_landscape"] == "cifar100-train" for leg in custom.legs)
    assert all(leg.probes["loss_landscape"]["normalization"] == "park-kim" for leg in custom.legs)
    # Every pair of the suites has a name made of two keys.
    for suite in ("paper", "mechanisms"):
        assert all(len(p["name"].split("/")) == 2 for p in load_suite(suite).model_pairs)
    with pytest.raises(ValueError, match="given more than once"):
        suite_from_dict({"name": "x", "model_pairs": [{"name": "a/b", "vit": "v", "cnn": "c"}] * 2})
    with pytest.raises(ValueError, match="VIT_KEY/CNN_KEY"):
        suite_from_dict({"name": "x", "model_pairs": [{"name": "a-b", "vit": "v", "cnn": "c"}]})


def test_the_offline_default_marks_every_number_not_comparable_and_writes_the_sections(tmp_path, capsys):
    output = tmp_path / "reproduction"
    assert (
        cli_main(["reproduce", "paul-chen", "--offline", "--limit", "3", "--output", str(output), "--quiet"])
        == 0
    )
    record = json.loads((output / "reproduction.json").read_text())
    # The builtin model stands in for both members: one leg for both, and one for the BiT-M's other preprocessing
    # (its notebooks squash the occlusion and PGD images to 224 with tf.image.resize; CutOut_ViT and PGD_ViT resized
    # with torchvision, PIL's antialiased bilinear); and one per member for the holed occlusion images, which the
    # Cutout notebooks resized to 8 bits (CutOut_ViT with OpenCV, CutOut_BiT with tf.image.resize truncated).
    leg, vit_holed, bit_leg, bit_holed = record["plan"]["legs"]
    assert leg["spec"] == bit_leg["spec"] == "builtin:efficientnet_lite0"
    assert [m["role"] for m in leg["members"]] == ["vit", "cnn"]
    assert leg["benchmarks"]["imagenet-val"] == {
        "preprocessing": "native-resize",
        "interpolation": "pil-bilinear",
    }
    assert [m["role"] for m in bit_leg["members"]] == ["cnn"]
    assert bit_leg["benchmarks"] == {
        "imagenet-val": {"preprocessing": "squash-224", "interpolation": "tf-bilinear"}
    }
    # (The BiT-M's ImageNet-A/R/O rows, squashed where the ViT's are not, fit the first leg without a conflict: the
    # ViT's holed one. Offline they are left out.)
    for holed, roles, kernel, preprocessing in (
        (vit_holed, ["vit", "cnn"], "cv2-bilinear-uint8", "native-resize"),
        (bit_holed, ["cnn"], "tf-bilinear-uint8", "squash-224"),
    ):
        assert [m["role"] for m in holed["members"]] == roles
        assert holed["benchmarks"] == {
            "imagenet-val": {"preprocessing": preprocessing, "interpolation": kernel}
        }
        assert set(holed["probes"]) == {"occlusion"}
        holed_rows = [row for row in holed["rows"] if "/occlusion/" in row]
        assert len(holed_rows) == 4 and not any(row.endswith("ratio-0") for row in holed_rows)
    assert set(record["plan"]["left_out"]) >= {"imagenet-a", "imagenet-r", "imagenet-o"}
    wanted = {r.row_id for r in published_numbers("paul-chen") if r.model_key in ("vit-l16", "bit-m-r101x3")}
    assert {e["row_id"] for e in record["published"]} == wanted
    for entry in record["published"]:
        kinds = [reason["kind"] for reason in entry["reasons"]]
        assert entry["verdict"] == "not comparable", entry["row_id"]
        assert kinds[0] in ("not in this run", "other checkpoint"), entry["row_id"]
        assert "other checkpoint" in kinds, entry["row_id"]
        if entry["benchmark"] in ("imagenet-a", "imagenet-r", "imagenet-o", "imagenet-9"):
            assert kinds[0] == "not in this run", entry["row_id"]
    occlusion = [e for e in record["published"] if e["benchmark"] == "occlusion"]
    assert occlusion and all(e["ours"] is not None for e in occlusion)
    for entry in occlusion:  # the photos are no ImageNet images, and the image list could not be matched
        details = " ".join(r["detail"] for r in entry["reasons"])
        assert "bundled demo photos" in details and "image_list paul-chen-occlusion-1k published" in details
        # each read from the leg that ran its preprocessing and kernel (the holed images' 8-bit resize included)
        assert "preprocessing" not in details and "interpolation" not in details
    # The findings were checked with the stand-in on both sides: every difference is 0, none resolved.
    [group] = record["findings"]
    checks = {c["finding"]: c for c in group["checks"]}
    for name in ("contrast-severity-5", "occlusion", "imagenet-c-severity-5"):
        assert checks[name]["verdict"] == "not resolved" and checks[name]["difference"]["estimate"] == 0.0
    assert checks["imagenet-a"]["verdict"] == "not checked"
    report = (output / "report.md").read_text()
    assert "## Published vs ours" in report and "## Findings" in report
    assert "builtin:efficientnet_lite0 stands in for" in report
    # The leg's results.json records what its model stands for, so `vitrobust report` shows the same sections.
    folders = [output / "legs" / each["name"] for each in record["plan"]["legs"]]
    results = load_results(folders)
    assert {r["reproduction"]["pair"] for r in results} == {"vit-l16/bit-m-r101x3"}
    again = published_comparisons(merge_results(results))
    assert {c.row.row_id for c in again} == wanted
    assert [c.to_dict() for c in again] == record["published"]
    summary = analyze(merge_results(results)).reproduction()
    assert summary["published"] == record["published"] and summary["findings"] == record["findings"]
    assert cli_main(["report", *map(str, folders), "--output", str(tmp_path / "again")]) == 0
    assert "## Published vs ours" in (tmp_path / "again" / "report.md").read_text()


def test_plan_and_list_pairs_print_and_stop(capsys, tmp_path):
    assert cli_main(["reproduce", "paul-chen", "--list-pairs"]) == 0
    assert "vit-l16/bit-m-r101x3" in capsys.readouterr().out.split()
    assert (
        cli_main(
            [
                "reproduce",
                "paul-chen",
                "--pair",
                "vit-b16/bit-m-r101x1",
                "--plan",
                "--output",
                str(tmp_path / "x"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "leg vit-google_vit-base-patch16-384: --model google/vit-base-patch16-384" in out
    assert not (tmp_path / "x").exists()
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["reproduce", "paul-chen", "--pair", "nonsense"])
    assert exit_info.value.code == 2
