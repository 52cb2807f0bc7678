"""The Space app (spaces_app/app.py) through its HTTP API with gradio_client and its MCP server with the `mcp` client:
predictions of the builtin model on a real photo, clean, perturbed and under a painted occlusion; friendly messages
for bad uploads and unreachable models; the leaderboard; ZeroGPU's decorator where `spaces` is installed."""

import asyncio
import functools
import importlib.util
import inspect
import json
import socket
import sys
import types
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


def load_sibling(name: str):
    """A fresh copy of a sibling module of app.py (spaces_app/<name>.py), executed now."""
    spec = importlib.util.spec_from_file_location(f"vitrobust_space_{name}", APP_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def mcp_tools(url: str):
    """The tools the app's MCP server lists (streamable HTTP transport at /gradio_api/mcp/)."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def listing():
        async with (
            streamable_http_client(f"{url}gradio_api/mcp/") as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return (await session.list_tools()).tools

    return asyncio.run(listing())


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


def launch_local(demo) -> str:
    """Launch `demo` on a free local port as `python app.py` launches it (MCP server on); its URL."""
    port = free_port()
    demo.launch(
        server_name="127.0.0.1",
        server_port=port,
        prevent_thread_lock=True,
        ssr_mode=False,
        quiet=True,
        mcp_server=True,
    )
    return f"http://127.0.0.1:{port}/"


@pytest.fixture(scope="module")
def server(results_dir):
    demo = load_app().build_demo(results_dir=results_dir)
    url = launch_local(demo)
    try:
        yield demo, Client(url, verbose=False)
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
    assert {"analyze", "predict_painted_occlusion", "leaderboard", "show_controls", "load_example"} <= set(
        names
    )
    endpoints = client.view_api(return_format="dict", print_info=False)["named_endpoints"]
    assert {"/analyze", "/predict_painted_occlusion", "/leaderboard"} <= set(endpoints)
    # UI-only events stay out of the documented API, and so out of the MCP tools.
    assert not {"/show_controls", "/load_example", "/load_paint_example"} & set(endpoints)


def test_mcp_tools_are_the_documented_events_with_agent_descriptions(server):
    demo, _ = server
    tools = {tool.name: tool for tool in mcp_tools(demo.local_url)}
    assert {"analyze", "predict_painted_occlusion", "robustness_leaderboard"} <= set(tools)
    board_tool = tools["robustness_leaderboard"]
    assert board_tool.description.startswith("List the robustness numbers this Space knows")
    assert "protocol" in board_tool.description and not board_tool.inputSchema.get("properties")
    assert not {"show_controls", "load_example"} & set(tools)
    analyze_tool, paint_tool = tools["analyze"], tools["predict_painted_occlusion"]
    assert analyze_tool.description.startswith("Perturb a photo and compare an image classifier's top-5")
    assert "Returns:" in analyze_tool.description and "Returns:" in paint_tool.description
    for tool, arguments in (
        (
            analyze_tool,
            [
                "model_spec",
                "upload",
                "kind",
                "corruption",
                "severity",
                "ratio",
                "freq_i",
                "freq_j",
                "eps",
                "seed",
            ],
        ),
        (paint_tool, ["model_spec", "editor"]),
    ):
        properties = tool.inputSchema["properties"]
        assert list(properties) == arguments
        # Every argument is explained to the agent, with its allowed values where they are a list.
        assert all(len(properties[name].get("description", "")) > 30 for name in arguments), tool.name
    assert analyze_tool.inputSchema["properties"]["kind"]["enum"] == ["corruption", "cutout", "fourier"]
    assert "brightness" in analyze_tool.inputSchema["properties"]["corruption"]["enum"]


def test_coffee_is_espresso_clean_and_under_brightness(server):
    _, client = server
    (clean, perturbed), clean_label, perturbed_label, clean_overlay, perturbed_overlay, status = analyze(
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
    perturbed = torch.from_numpy(np.array(Image.open(outputs[0][1]).convert("L")))
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
    assert outputs[0] is None and outputs[3] is None and outputs[4] is None


def test_models_that_cannot_load_get_a_friendly_message(server):
    _, client = server
    offline = analyze(client, handle_file(COFFEE), model="google/vit-base-patch16-224")[-1]
    assert "Could not load model 'google/vit-base-patch16-224'" in offline
    assert "offline" in offline and BUILTIN in offline
    local = analyze(client, handle_file(COFFEE), model="../../etc")[-1]
    assert "is not a model id" in local
    missing = analyze(client, None)[-1]
    assert "Upload an image" in missing


def test_leaderboard_reads_results_files(server, results_dir):
    """The fixture's runs are of schema 1 (no protocol recorded): every headline is shown under its own name with
    the protocol "not stated" and no rank; the schema-99 file and the non-results file are skipped."""
    app = load_app()
    _, client = server
    table, note = client.predict(api_name="/leaderboard")
    # The refresh reads again and names what it could not read, as the page's note does.
    assert "Not read (2)" in note and "future/results.json" in note and "other/results.json" in note
    assert table["headers"] == list(app.LEADERBOARD_COLUMNS)
    column = {name: index for index, name in enumerate(table["headers"])}
    rows = {(row[column["model"]], row[column["task"]]): row for row in table["data"]}
    assert set(rows) == {
        (BUILTIN, "imagenet-val top-1 %"),
        (BUILTIN, "imagenet-c mCE %"),
        (BUILTIN, "imagenet-c mean top-1 %"),
        ("org/vit", "imagenet-val top-1 %"),
        ("org/vit", "imagenet-a top-1 %"),
        ("org/vit", "imagenet-o AUPR"),
    }
    mce = rows[BUILTIN, "imagenet-c mCE %"]
    assert mce[column["value"]] == 94.36 and mce[column["run"]] == "demo" and mce[column["source"]] == "space"
    assert rows["org/vit", "imagenet-o AUPR"][column["value"]] == 0.2468
    assert {row[column["protocol"]] for row in rows.values()} == {"not stated"}
    assert {row[column["rank"]] for row in rows.values()} == {None}
    board = app.read_board(results_dir, [])
    assert sorted(item.source for item in board.skipped) == [
        "space: future/results.json",
        "space: other/results.json",
    ]


def test_leaderboard_reads_pushed_results(tmp_path, monkeypatch):
    """A model-repo push (`stage_model`: results/<run>/results.json and .eval_results/<run>.yaml) read back as the
    Space reads a repo id: the entries through `HfApi.model_info(expand=["evalResults"])` (a stand-in answering with
    the Hub's JSON of the staged files, parsed by the real ModelInfo), the results.json through `snapshot_download`
    (a stand-in: no network); the same numbers are shown once; an unreachable repo is skipped with its reason."""
    import yaml
    from huggingface_hub import HfApi, ModelInfo

    from hf_vitrobust.analysis.kinds import summary_headlines
    from hf_vitrobust.analysis.protocols import benchmark_protocol, protocol_record
    from hf_vitrobust.data import BENCHMARKS
    from hf_vitrobust.hub.staging import stage_model

    app = load_app()
    benchmark = BENCHMARKS.get("imagenet-val")
    protocol = benchmark_protocol(benchmark)
    source = {"kind": "hub", "location": "ILSVRC/imagenet-1k", "generated": False}
    metrics = {"num_samples": 50000, "top1": 81.0, "top5": 95.5}
    pushed = results_json(
        [("org_vit", "me/vit-robustness")], {"org_vit": summary_headlines(benchmark, metrics, protocol)}
    )
    pushed["schema_version"] = 2
    pushed["metrics"] = {"org_vit": {"imagenet-val": metrics}}
    pushed["benchmarks"] = {
        "imagenet-val": {
            "task": "classification",
            "source": source,
            "protocol": protocol_record(benchmark, protocol, source),
        }
    }
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
    staged_entries = yaml.safe_load((stage / ".eval_results" / "paper-run.yaml").read_text())

    asked = []

    def model_info(self, repo_id, *, expand=None, **kwargs):
        asked.append(("model_info", repo_id, expand))
        if repo_id != "me/vit-robustness":
            raise OSError("offline")
        files = [
            {"filename": ".eval_results/paper-run.yaml", "verified": False, "data": entry}
            for entry in staged_entries
        ]
        return ModelInfo(**{"_id": "65f0c0ffee", "id": repo_id, "evalResults": files})

    def snapshot_download(repo_id, allow_patterns=None, **kwargs):
        asked.append(("snapshot_download", repo_id, allow_patterns))
        return str(stage)

    monkeypatch.setattr(HfApi, "model_info", model_info)
    monkeypatch.setattr("huggingface_hub.snapshot_download", snapshot_download)
    monkeypatch.setenv(app.RESULTS_REPOS_ENV, "me/vit-robustness, me/unreachable")
    board = app.read_board(None)
    assert asked == [
        ("model_info", "me/vit-robustness", ["evalResults"]),
        ("snapshot_download", "me/vit-robustness", ["results/*/results.json"]),
        ("model_info", "me/unreachable", ["evalResults"]),
    ]
    assert board.table().to_dict("records") == [
        {
            "rank": 1,
            "model": "me/vit-robustness",
            "dataset": "ILSVRC/imagenet-1k",
            "task": "imagenet-val.accuracy",
            "metric": "accuracy",
            "value": 81.0,
            "protocol": "preprocessing=model-native",
            "source": "me/vit-robustness",
            "read_from": "results/paper-run/results.json",
            "run": "paper-run",
            "commit": "0123456789ab",
        }
    ]
    assert [item.source for item in board.skipped] == ["me/unreachable"]
    assert "me/unreachable" in app.skipped_note(board) and "Not read (1)" in app.skipped_note(board)
    # A staged folder is read as it is, beside the Space's own results: the same number, once.
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


# ---------------------------------------------------------------------- painted occlusion (issue 35, point 5)
def painted_layer(size, box):
    """An editor layer as gr.ImageEditor sends it: RGBA of the photo's size (width, height), opaque magenta paint
    on the rows top..bottom-1 and columns left..right-1 of `box` = (top, bottom, left, right), transparent
    elsewhere."""
    top, bottom, left, right = box
    layer = np.zeros((size[1], size[0], 4), dtype=np.uint8)
    layer[top:bottom, left:right] = (255, 0, 255, 255)
    return Image.fromarray(layer, "RGBA")


def test_painted_occlusion_through_the_api(server, tmp_path):
    """Paint rows 100-299 and columns 200-399 of the 600x400 coffee photo. The builtin model resizes its shorter side
    to 256 (scale 0.64) and crops the central 224x224 (offsets 80, 16): the paint lands on rows and columns 48-175
    of its input, 128 x 128 of 224 x 224 pixels, black; every other pixel is the clean input's."""
    _, client = server
    app = load_app()
    layer = tmp_path / "layer.png"
    painted_layer((600, 400), (100, 300, 200, 400)).save(layer)
    editor = {"background": handle_file(COFFEE), "layers": [handle_file(layer)], "composite": None}
    masked_path, fraction, clean_label, masked_label, status = client.predict(
        BUILTIN, editor, api_name="/predict_painted_occlusion"
    )
    assert fraction == pytest.approx(128 * 128 / 224**2, abs=2 * 129 / 224**2)
    assert f"painted occlusion of {fraction:.1%}" in status
    masked = np.array(Image.open(masked_path).convert("RGB"))
    assert masked.shape == (224, 224, 3)
    assert (masked[49:175, 49:175] == 0).all()
    classifier = app.ModelCache().get(BUILTIN)
    clean = np.array(app.to_pil(classifier.preprocess(Image.open(COFFEE).convert("RGB"))[0]))
    outside = np.ones((224, 224), dtype=bool)
    outside[47:177, 47:177] = False
    assert np.array_equal(masked[outside], clean[outside])
    assert abs(float((masked == 0).all(axis=-1).mean()) - fraction) < 0.005
    assert top_label(clean_label)[0] == "espresso"
    # Half of the cup hidden, the model is less sure of it.
    clean_top = {entry["label"]: entry["confidence"] for entry in clean_label["confidences"]}
    masked_top = {entry["label"]: entry["confidence"] for entry in masked_label["confidences"]}
    assert masked_top.get("espresso", 0.0) < clean_top["espresso"]


def test_painted_occlusion_explains_what_is_missing(server, tmp_path):
    _, client = server
    blank, small = tmp_path / "blank.png", tmp_path / "small.png"
    painted_layer((600, 400), (0, 0, 0, 0)).save(blank)
    painted_layer((300, 200), (0, 50, 0, 50)).save(small)
    for layers, expected in (
        ([], "Paint over part of the photo"),
        ([blank], "Paint over part of the photo"),
        ([small], "A painted layer is 300x200 but the photo is 600x400"),
    ):
        editor = {
            "background": handle_file(COFFEE),
            "layers": [handle_file(p) for p in layers],
            "composite": None,
        }
        outputs = client.predict(BUILTIN, editor, api_name="/predict_painted_occlusion")
        assert outputs[0] is None and outputs[-1].startswith("**Cannot analyse this:**")
        assert expected in outputs[-1]
    no_photo = client.predict(BUILTIN, None, api_name="/predict_painted_occlusion")[-1]
    assert "Upload a photo first" in no_photo


def test_a_painted_hole_is_filled_as_cutout_fills_its_hole():
    """Paint exactly Cutout's hole: the model sees what hf_vitrobust.corruptions.cutout gives, bit for bit (same
    fill, same pixels), through the whole painted-layer route."""
    from hf_vitrobust.corruptions import cutout
    from hf_vitrobust.corruptions.occlusion import cutout_mask
    from hf_vitrobust.models.preprocessing import Preprocessing

    painting = load_sibling("app_painting")
    assert inspect.signature(cutout).parameters["fill"].default == painting.FILL
    pixels = torch.rand(1, 3, 64, 48, generator=torch.Generator().manual_seed(1))
    hole = cutout_mask(64, 48, 0.3, seed=7, sample_ids=torch.tensor([0]))[0, 0]
    paint = np.where(hole.numpy()[..., None], [255, 0, 255, 255], [0, 0, 0, 0]).astype(np.uint8)
    untouched = Image.new("RGBA", (48, 64))
    mask = painting.painted_mask([untouched, Image.fromarray(paint, "RGBA")], (48, 64))
    assert torch.equal(mask, hole)
    seen = painting.mask_for_model(Preprocessing(input_size=(64, 48), crop_only=True), mask)
    assert seen.shape == (1, 1, 64, 48)
    assert torch.equal(painting.occlude(pixels, seen), cutout(pixels, 0.3, seed=7))
    assert not painting.painted_mask([], (48, 64)).any()
    with pytest.raises(ValueError, match="A painted layer is 47x64 but the photo is 48x64"):
        painting.painted_mask([Image.new("RGBA", (47, 64))], (48, 64))


# ---------------------------------------------------------------------- ZeroGPU (issue 35, point 5)
def add_one(x):
    return x + 1


def fake_spaces(calls):
    """A stand-in for the `spaces` package: GPU(fn) runs fn, recording its name (as ZeroGPU's would, on a GPU)."""

    def GPU(fn):
        @functools.wraps(fn)
        def on_gpu(*args, **kwargs):
            calls.append(fn.__name__)
            return fn(*args, **kwargs)

        return on_gpu

    return types.SimpleNamespace(GPU=GPU)


def test_gpu_is_a_no_op_without_spaces(monkeypatch):
    monkeypatch.setitem(sys.modules, "spaces", None)  # `import spaces` raises ImportError
    assert load_sibling("app_gpu").gpu(add_one) is add_one
    # Some other `spaces` (a folder of that name on the path, say) has no GPU: a no-op too.
    monkeypatch.setitem(sys.modules, "spaces", types.ModuleType("spaces"))
    assert load_sibling("app_gpu").gpu(add_one) is add_one


def test_gpu_is_spaces_gpu_where_spaces_is_installed(monkeypatch):
    calls = []
    monkeypatch.setitem(sys.modules, "spaces", fake_spaces(calls))
    on_gpu = load_sibling("app_gpu").gpu(add_one)
    assert on_gpu is not add_one and on_gpu.__name__ == "add_one"
    assert on_gpu(1) == 2 and calls == ["add_one"]


def test_the_model_events_run_under_spaces_gpu(monkeypatch):
    calls = []
    monkeypatch.setitem(sys.modules, "spaces", fake_spaces(calls))
    app = load_app()
    monkeypatch.setattr(app, "gpu", load_sibling("app_gpu").gpu)
    demo = app.build_demo(results_dir=None)
    events = {fn.api_name: fn.fn for fn in demo.fns.values()}
    # Their names, which the MCP server lists as tool names, survive the decorator.
    assert events["analyze"].__name__ == "analyze"
    assert events["predict_painted_occlusion"].__name__ == "predict_painted_occlusion"
    assert events["analyze"](BUILTIN, None, *CORRUPTION_ARGS)[-1].startswith("**Cannot analyse this:**")
    assert events["predict_painted_occlusion"](BUILTIN, None)[-1].startswith("**Cannot analyse this:**")
    assert calls == ["analyze", "predict_painted_occlusion"]
    events["show_controls"]("cutout")
    assert calls == ["analyze", "predict_painted_occlusion"]  # UI-only events need no GPU


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
