"""The Space app (spaces_app/app.py) through its HTTP API with gradio_client: predictions of the builtin model on a
real photo, clean and perturbed; friendly messages for bad uploads and unreachable models; the leaderboard."""

import importlib.util
import json
import socket
import sys
from pathlib import Path

import numpy as np
import pytest
import timm
import torch
from gradio_client import Client, handle_file
from PIL import Image
from timm.models import save_for_hf

ROOT = Path(__file__).resolve().parents[2]
APP_DIR = ROOT / "spaces_app"
COFFEE = APP_DIR / "examples" / "coffee.jpg"
BUILTIN = "builtin:efficientnet_lite0"
# Defaults of the other perturbations' controls, in the /analyze argument order after `kind`.
CORRUPTION_ARGS = ("corruption", "brightness", 1, 0.2, 0, 20, 15.7, 0)


def load_app():
    """spaces_app/app.py as a module (it is a script folder, not a package)."""
    if "vitrobust_space_app" in sys.modules:
        return sys.modules["vitrobust_space_app"]
    spec = importlib.util.spec_from_file_location("vitrobust_space_app", APP_DIR / "app.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def results_json(models, summary, *, schema_version=1):
    """A results.json as `vitrobust evaluate` writes it (the parts the leaderboard reads)."""
    return {
        "schema": "hf_vitrobust.results",
        "schema_version": schema_version,
        "complete": True,
        "models": [{"key": key, "spec": spec, "name": spec} for key, spec in models],
        "summary": summary,
        "metrics": {},
    }


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("results")
    runs = {
        "demo": results_json(
            [("builtin_efficientnet_lite0", BUILTIN)],
            {
                "builtin_efficientnet_lite0": {
                    "imagenet-c mean top-1 %": 6.25,
                    "imagenet-val top-1 %": 87.5,
                    "imagenet-c mCE %": 94.358755163346,
                }
            },
        ),
        "vit": results_json(
            [("org_vit", "org/vit")],
            {
                "org_vit": {
                    "imagenet-o AUPR": 0.2468,
                    "imagenet-a top-1 %": 12.5,
                    "imagenet-val top-1 %": 81.0,
                }
            },
        ),
        "future": results_json([("x", "x")], {"x": {"imagenet-val top-1 %": 1.0}}, schema_version=99),
    }
    for run, content in runs.items():
        (root / run).mkdir()
        (root / run / "results.json").write_text(json.dumps(content))
    (root / "other").mkdir()
    (root / "other" / "results.json").write_text(json.dumps({"something": "else"}))
    return root


@pytest.fixture(scope="module")
def server(results_dir):
    app = load_app()
    demo = app.build_demo(results_dir=results_dir)
    port = free_port()
    demo.launch(
        server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, ssr_mode=False, quiet=True
    )
    try:
        yield demo, Client(f"http://127.0.0.1:{port}/", verbose=False)
    finally:
        demo.close()


def analyze(client, upload, *args, model=BUILTIN):
    return client.predict(model, upload, *(args or CORRUPTION_ARGS), api_name="/analyze")


def top_label(label):
    return label["label"], [entry["label"] for entry in label["confidences"]]


def test_every_event_has_an_api_name(server):
    demo, client = server
    names = [dependency.get("api_name") for dependency in demo.config["dependencies"]]
    assert all(names), names
    assert {"analyze", "leaderboard", "show_controls", "load_example"} <= set(names)
    endpoints = client.view_api(return_format="dict", print_info=False)["named_endpoints"]
    assert {"/analyze", "/leaderboard", "/show_controls"} <= set(endpoints)


def test_coffee_is_espresso_clean_and_under_brightness(server):
    _, client = server
    clean, perturbed, clean_label, perturbed_label, clean_overlay, perturbed_overlay, status = analyze(
        client, handle_file(COFFEE)
    )
    # The builtin EfficientNet-Lite0 calls scikit-image's coffee photo "espresso" (ImageNet class 967).
    for label in (clean_label, perturbed_label):
        best, names = top_label(label)
        assert best == "espresso"
        assert len(names) == 5
        confidences = [entry["confidence"] for entry in label["confidences"]]
        assert confidences == sorted(confidences, reverse=True)
        assert 0.5 < confidences[0] <= 1.0 and sum(confidences) <= 1.0 + 1e-6
    images = {
        name: Image.open(path) for name, path in zip(("clean", "perturbed"), (clean, perturbed), strict=True)
    }
    assert all(image.size == (224, 224) for image in images.values())
    # Brightness raises every pixel's lightness: the perturbed image is brighter, not the same.
    clean_pixels = torch.from_numpy(np.array(images["clean"].convert("L"), dtype=np.float32))
    bright_pixels = torch.from_numpy(np.array(images["perturbed"].convert("L"), dtype=np.float32))
    assert bright_pixels.mean() > clean_pixels.mean() + 5
    for path in (clean_overlay, perturbed_overlay):
        heat = Image.open(path).convert("RGB")
        assert heat.size == (224, 224)
        assert heat.tobytes() != images["clean"].convert("RGB").tobytes()
    assert "Grad-CAM" in status and "brightness, severity 1" in status


def test_cutout_masks_the_asked_fraction(server):
    _, client = server
    outputs = analyze(client, handle_file(COFFEE), "cutout", "brightness", 1, 0.25, 0, 20, 15.7, 3)
    perturbed = torch.from_numpy(np.array(Image.open(outputs[1]).convert("L")))
    # A quarter of 224x224 is a 112x112 hole of black pixels (PNG output: lossless).
    assert int((perturbed == 0).sum()) >= 112 * 112
    assert "Cutout of 25%" in outputs[-1]


@pytest.mark.parametrize("case", ["text", "too_large", "too_many_pixels"])
def test_bad_uploads_get_a_friendly_message(server, tmp_path, case):
    _, client = server
    if case == "text":
        path = tmp_path / "notes.txt"
        path.write_text("this is not an image\n")
        expected = "'notes.txt' is not an image this demo can read"
    elif case == "too_large":
        path = tmp_path / "huge.jpg"
        with open(path, "wb") as handle:
            handle.truncate(21 * 1000 * 1000)
        expected = "That file is 21.0 MB; this demo takes images up to 20 MB"
    else:
        path = tmp_path / "wide.png"
        Image.new("1", (8000, 7000)).save(path)  # 56 megapixels in a few kB
        expected = "That image is 8000x7000 (56 megapixels)"
    outputs = analyze(client, handle_file(path))
    assert outputs[-1].startswith("**Cannot analyse this:**")
    assert expected in outputs[-1]
    assert outputs[0] is None and outputs[4] is None and outputs[5] is None


def test_models_that_cannot_load_get_a_friendly_message(server):
    _, client = server
    offline = analyze(client, handle_file(COFFEE), model="google/vit-base-patch16-224")[-1]
    assert "Could not load model 'google/vit-base-patch16-224'" in offline
    assert "offline" in offline and BUILTIN in offline
    local = analyze(client, handle_file(COFFEE), model="../../etc")[-1]
    assert "is not a model id" in local
    missing = analyze(client, None)[-1]
    assert "Upload an image" in missing


def test_leaderboard_reads_results_files(server):
    _, client = server
    table = client.predict(api_name="/leaderboard")
    assert table["headers"] == [
        "model",
        "run",
        "source",
        "suite",
        "commit",
        "imagenet-val top-1 %",
        "imagenet-c mCE %",
        "imagenet-c mean top-1 %",
        "imagenet-a top-1 %",
        "imagenet-o AUPR",
    ]
    rows = {row[0]: row[1:] for row in table["data"]}
    # The schema-99 file and the non-results file are skipped.
    assert set(rows) == {BUILTIN, "org/vit"}
    assert rows[BUILTIN][:7] == ["demo", "space", None, "unknown", 87.5, 94.36, 6.25]
    assert rows["org/vit"][0] == "vit" and rows["org/vit"][4] == 81.0
    assert rows["org/vit"][7:] == [12.5, 0.2468]


def test_leaderboard_reads_pushed_results(tmp_path, monkeypatch):
    """The results a model-repo push stages (`results/<run>/results.json`) are read from the staged folder or, for
    a repo id, from what `snapshot_download` brings (a stand-in here: no network); an unreachable repo is skipped."""
    from hf_vitrobust.hub.staging import stage_model

    app = load_app()
    pushed = results_json([("org_vit", "org/vit")], {"org_vit": {"imagenet-val top-1 %": 81.0}})
    pushed["suite"] = {"name": "paper"}
    pushed["provenance"] = {
        "hf_vitrobust_version": "0.1.0",
        "git_commit": "0123456789abcdef0123",
        "git_dirty": False,
    }
    run = tmp_path / "paper-run"
    run.mkdir()
    (run / "results.json").write_text(json.dumps(pushed))
    stage = tmp_path / "stage"
    stage_model(stage, results=[run], repo_id="me/vit-robustness")
    assert (stage / "results" / "paper-run" / "results.json").is_file()

    asked = []

    def snapshot_download(repo_id, allow_patterns=None, **kwargs):
        asked.append((repo_id, allow_patterns))
        if repo_id != "me/vit-robustness":
            raise OSError("offline")
        return str(stage)

    monkeypatch.setattr("huggingface_hub.snapshot_download", snapshot_download)
    monkeypatch.setenv(app.RESULTS_REPOS_ENV, "me/vit-robustness, me/unreachable")
    table = app.leaderboard(None)
    assert asked == [(repo, ["results/*/results.json"]) for repo in ("me/vit-robustness", "me/unreachable")]
    assert list(table.columns) == [*app.LEADERBOARD_COLUMNS, "imagenet-val top-1 %"]
    assert table.to_dict("records") == [
        {
            "model": "org/vit",
            "run": "paper-run",
            "source": "me/vit-robustness",
            "suite": "paper",
            "commit": "0123456789ab",
            "imagenet-val top-1 %": 81.0,
        }
    ]
    # A staged folder is read as it is, beside the Space's own results.
    local = app.leaderboard(tmp_path / "none", repos=[str(stage)])
    assert local["source"].tolist() == [str(stage)] and local["run"].tolist() == ["paper-run"]
    assert app.leaderboard(None, repos=[]).empty


def test_perturbations_and_attention_overlay_in_process():
    """The app's perturbations are the package's, with the same seeds; a model with attention gets a rollout."""
    from probe_models import timm_vit

    from hf_vitrobust.corruptions import corrupt, cutout, fourier_noise

    app = load_app()
    pixels = torch.rand(1, 3, 32, 32, generator=torch.Generator().manual_seed(0))
    common = {
        "corruption": "gaussian_noise",
        "severity": 2,
        "ratio": 0.3,
        "frequency": (2, -3),
        "eps": 4.0,
        "seed": 5,
    }
    expected = {
        "corruption": corrupt(pixels, "gaussian_noise", 2, seed=5),
        "cutout": cutout(pixels, 0.3, seed=5),
        "fourier": fourier_noise(pixels, (2, -3), 4.0, seed=5),
    }
    for kind, reference in expected.items():
        perturbed, _ = app.perturb(pixels, kind, **common)
        assert torch.equal(perturbed, reference), kind
        assert not torch.equal(perturbed, pixels), kind
    with pytest.raises(app.UserError, match="go up to 15"):
        app.perturb(pixels, "fourier", **{**common, "frequency": (16, 0)})

    maps, method = app.explain(timm_vit(), pixels.repeat(2, 1, 1, 1))
    assert method == "attention rollout"
    assert maps.shape == (2, 32, 32) and float(maps.max()) == pytest.approx(1.0)
    assert app.overlay(pixels[0], maps[0]).size == (32, 32)


# ---------------------------------------------------------------------- local model folders (issue 38, point 4)
# Listed in VITROBUST_MODELS they are choices; typed as a path or timm/local-dir:<path> they load only where the app
# was started with VITROBUST_LOCAL_MODELS=1, so a public Space never reads its server's disk for a visitor.


@pytest.fixture(scope="module")
def own_timm_folder(tmp_path_factory):
    torch.manual_seed(0)
    model = timm.create_model("resnet10t", pretrained=False, num_classes=4).eval()
    folder = tmp_path_factory.mktemp("own") / "my-resnet"
    save_for_hf(model, folder, data_config={"input_size": (3, 48, 48), "interpolation": "bilinear"})
    return model, folder


def test_typed_local_folders_need_the_local_switch(own_timm_folder):
    app = load_app()
    _, folder = own_timm_folder
    for spec in (str(folder), f"timm/local-dir:{folder}"):
        with pytest.raises(app.UserError, match="VITROBUST_LOCAL_MODELS=1"):
            app.check_model_spec(spec, [app.DEFAULT_MODEL])
        assert app.check_model_spec(spec, [app.DEFAULT_MODEL], allow_local=True) == spec
    # Listed by whoever started the app: a choice, with or without the switch.
    assert app.check_model_spec(str(folder), [app.DEFAULT_MODEL, str(folder)]) == str(folder)
    with pytest.raises(app.UserError, match="no such model folder"):
        app.check_model_spec(str(folder.parent / "absent"), [], allow_local=True)
    with pytest.raises(app.UserError, match="not a model id"):
        app.check_model_spec("../../etc", [])
    # Hub routes stay open to everyone.
    assert app.check_model_spec("timm/hf-hub:org/name", []) == "timm/hf-hub:org/name"
    assert app.check_model_spec("org/name", []) == "org/name"
    with pytest.raises(app.UserError, match="not a model id"):
        app.check_model_spec("timm/hf-hub:no-org", [])


def test_a_local_timm_folder_loads_in_the_app_with_its_weights(own_timm_folder):
    app = load_app()
    model, folder = own_timm_folder
    classifier = app.ModelCache().get(str(folder))
    assert classifier.preprocessing.interpolation == "bilinear" and classifier.input_size == (48, 48)
    pixels = torch.rand(1, 3, 48, 48, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        torch.testing.assert_close(classifier(pixels), model(classifier.preprocessing.normalize(pixels)))


def test_a_missing_local_folder_is_not_blamed_on_the_hub_cache(tmp_path, monkeypatch):
    app = load_app()
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(app.UserError) as raised:
        app.ModelCache().get(f"timm/local-dir:{tmp_path / 'absent'}")
    assert "is not a folder" in str(raised.value) and "cache" not in str(raised.value)


def test_model_choices_and_the_local_switch_come_from_the_environment(monkeypatch, own_timm_folder):
    app = load_app()
    _, folder = own_timm_folder
    monkeypatch.setenv("VITROBUST_MODELS", f"{folder}, timm/hf-hub:org/name")
    assert app.models_from_env() == [app.DEFAULT_MODEL, str(folder), "timm/hf-hub:org/name"]
    monkeypatch.delenv("VITROBUST_MODELS")
    assert app.models_from_env() == [app.DEFAULT_MODEL]
    for value, expected in (("1", True), ("true", True), ("0", False), ("", False)):
        monkeypatch.setenv("VITROBUST_LOCAL_MODELS", value)
        assert app.local_models_from_env() is expected
