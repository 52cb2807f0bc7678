"""The Space app in a real browser (Debian's chromium driven by Playwright), each check against the app's own
computation in this process and against a screenshot: a corruption shown on the clean | perturbed slider, an
occlusion painted with the mouse, and a tool called through the app's MCP server."""

import ast
import asyncio
import base64
import io
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.is_file():
    pytest.skip(
        f"{CHROMIUM} is missing: the browser test needs Debian's chromium (`apt-get install -y chromium`, as .ci/run "
        "does); Playwright's own browser download does not work here.",
        allow_module_level=True,
    )

from playwright.sync_api import expect, sync_playwright  # noqa: E402
from test_space_app import BUILTIN, COFFEE, launch_local, load_app  # noqa: E402

# Flags for a headless chromium as root in a container without network (NOTES.md, "Browser tests").
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]
TIMEOUT_MS = 90_000  # a first prediction runs the model and Grad-CAM twice on a busy 2-core CPU


@pytest.fixture(scope="module")
def space():
    """The app launched as `python app.py` launches it (MCP server on), its module, and its preloaded model."""
    assert os.environ.get("GRADIO_ANALYTICS_ENABLED") == "False"
    app = load_app()
    classifier = app.ModelCache().get(BUILTIN)
    demo = app.build_demo(classifiers={BUILTIN: classifier}, results_dir=None)
    url = launch_local(demo)
    try:
        yield url, app, classifier
    finally:
        demo.close()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory):
    return tmp_path_factory.mktemp("screenshots")


def shown_image(page, image, path: Path) -> np.ndarray:
    """A screenshot (saved to `path`) of the picture an <img> shows: its box less the margins that `object-fit`
    (contain, scale-down: centred, aspect ratio kept) leaves around it. RGB, (H, W, 3) uint8."""
    page.wait_for_function("e => e.complete && e.naturalWidth > 0", arg=image.element_handle())
    fit = image.evaluate("e => getComputedStyle(e).objectFit")
    box = image.bounding_box()
    natural_width, natural_height = image.evaluate("e => [e.naturalWidth, e.naturalHeight]")
    width, height = box["width"], box["height"]
    if fit in ("contain", "scale-down"):
        scale = min(width / natural_width, height / natural_height)
        scale = min(scale, 1.0) if fit == "scale-down" else scale
        width, height = natural_width * scale, natural_height * scale
    else:
        assert fit == "fill", fit
    clip = {
        "x": box["x"] + (box["width"] - width) / 2,
        "y": box["y"] + (box["height"] - height) / 2,
        "width": width,
        "height": height,
    }
    page.screenshot(path=path, clip=clip)
    return np.asarray(Image.open(path).convert("RGB"))


def served_image(page, image) -> Image.Image:
    """The file an <img> shows, as the server sends it."""
    return Image.open(io.BytesIO(page.request.get(image.get_attribute("src")).body())).convert("RGB")


def mean_difference(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a.astype(np.float32) - b.astype(np.float32)).mean())


def test_slider_shows_clean_against_perturbed(space, browser, screenshots):
    url, app, classifier = space
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(url)
    page.locator("#upload input[type=file]").set_input_files(str(COFFEE))
    # Gradio renders the name as two spans (stem, extension); their text may come with a space between.
    expect(page.locator("#upload")).to_contain_text(re.compile(r"coffee\s*\.jpg"), timeout=TIMEOUT_MS)
    corruption = page.locator("#corruption input")
    corruption.click()
    corruption.fill("brightness")
    page.get_by_role("option", name="brightness", exact=True).click()
    expect(corruption).to_have_value("brightness")
    page.locator("#apply").click()
    # The builtin EfficientNet-Lite0 calls the coffee photo "espresso", clean and under brightness 3.
    for panel in ("#clean-label", "#perturbed-label"):
        expect(page.locator(f"{panel} [data-testid=label-output-value]")).to_have_text(
            "espresso", timeout=TIMEOUT_MS
        )
    expect(page.locator("#status")).to_contain_text("brightness, severity 3")
    expect(page.locator("#status")).to_contain_text("Grad-CAM")
    for overlay in ("#overlay-clean img", "#overlay-perturbed img"):
        image = page.locator(overlay)
        expect(image).to_be_visible(timeout=TIMEOUT_MS)
        page.wait_for_function("e => e.complete && e.naturalWidth > 0", arg=image.element_handle())
        assert image.evaluate("e => [e.naturalWidth, e.naturalHeight]") == [224, 224]

    # The slider holds the two images the app computes for these settings, clean under perturbed.
    pixels = classifier.preprocess(Image.open(COFFEE).convert("RGB"))
    perturbed, _ = app.perturb(
        pixels,
        "corruption",
        corruption="brightness",
        severity=3,
        ratio=0.2,
        frequency=(0, 20),
        eps=15.7,
        seed=0,
    )
    expected = [np.asarray(app.to_pil(p[0])) for p in (pixels, perturbed)]
    images = page.locator("#slider img")
    expect(images).to_have_count(2)
    for image, want in zip((images.nth(0), images.nth(1)), expected, strict=True):
        assert np.array_equal(np.asarray(served_image(page, image)), want)
    # On screen: the clean image left of the handle, the perturbed one right of it.
    shot = shown_image(page, images.nth(0), screenshots / "slider.png")
    height, width, _ = shot.shape
    left, right = (
        slice(0, int(0.45 * width)),
        slice(int(0.55 * width), width),
    )  # the handle sits in the middle
    clean, bright = (np.asarray(Image.fromarray(e).resize((width, height), Image.BICUBIC)) for e in expected)
    assert mean_difference(shot[:, left], clean[:, left]) < 6
    assert mean_difference(shot[:, right], bright[:, right]) < 6
    # Brightness 3 shows: each half is far from the other image's same half.
    assert mean_difference(shot[:, left], bright[:, left]) > 15
    assert mean_difference(shot[:, right], clean[:, right]) > 15
    page.close()


def open_editor_with_photo(page, url: str, path: Path, attempts: int = 3):
    """The "Paint an occlusion" tab's ImageEditor with a photo on its canvas. On a loaded machine the editor can take
    the file before its upload handler is attached (seen beside a full test run: the file was dropped and the canvas
    stayed empty for 90 s, and giving the same input the file again did not help), so each new attempt loads the
    page afresh, up to `attempts` times, until the canvas shows a photo."""
    for attempt in range(attempts):
        page.goto(url)
        page.wait_for_load_state("networkidle")
        page.get_by_role("tab", name="Paint an occlusion").click()
        editor = page.locator("#editor")
        expect(editor).to_contain_text("Upload an image")
        page.wait_for_load_state("networkidle")
        editor.locator("input[type=file]").set_input_files(str(path))
        try:
            expect(editor).not_to_contain_text("Upload an image", timeout=TIMEOUT_MS // attempts)
            return editor
        except AssertionError:
            if attempt == attempts - 1:
                raise


def test_a_painted_occlusion_blacks_out_the_strokes(space, browser, screenshots):
    url, _, _ = space
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    editor = open_editor_with_photo(page, url, COFFEE)
    canvas = editor.locator("canvas").first
    # One horizontal stroke through the middle of the photo, from 30 % to 70 % of the canvas's width, in a few
    # pointer events: each one redraws the canvas, about a second apiece in a chromium without a GPU.
    box = canvas.bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(box["x"] + 0.3 * box["width"], y)
    page.mouse.down()
    page.mouse.move(box["x"] + 0.7 * box["width"], y, steps=4)
    page.mouse.up()
    editor.screenshot(path=screenshots / "painted.png")
    page.locator("#paint-apply").click()
    expect(page.locator("#paint-status")).to_contain_text("painted occlusion of", timeout=TIMEOUT_MS)
    expect(page.locator("#paint-clean-label [data-testid=label-output-value]")).to_have_text("espresso")
    fraction = float(page.locator("#masked-fraction input").input_value())
    assert 0.05 < fraction < 0.6
    expect(page.locator("#paint-status")).to_contain_text(f"painted occlusion of {fraction:.1%}")

    image = page.locator("#masked-image img")
    expect(image).to_be_visible(timeout=TIMEOUT_MS)
    masked = np.asarray(served_image(page, image))
    assert masked.shape == (224, 224, 3)
    black = (masked == 0).all(axis=-1)
    # The stroke crosses the model's input at mid-height (the crop is centred), black as Cutout's hole.
    assert black[112, 50:174].all()
    assert not black[:10].any() and not black[-10:].any()
    assert abs(float(black.mean()) - fraction) < 0.01
    shot = shown_image(page, image, screenshots / "masked.png")
    height, width, _ = shot.shape
    middle = shot[int(0.48 * height) : int(0.52 * height), int(0.25 * width) : int(0.75 * width)]
    assert middle.max() <= 8  # the fill colour, black, on screen
    assert shot[: int(0.05 * height)].mean() > 40  # the photo above the stroke
    page.close()


def test_an_mcp_tool_call_answers_as_the_app_computes(space, browser, screenshots):
    """`analyze` called by an MCP client (the photo as a data URL, as agents send files): the top-5 it returns are
    those of a direct call in this process, and the perturbed image it links to shows the Cutout hole."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    url, app, classifier = space
    photo = "data:image/jpeg;base64," + base64.b64encode(COFFEE.read_bytes()).decode()
    arguments = {"model_spec": BUILTIN, "upload": photo, "kind": "cutout", "ratio": 0.25, "seed": 3}

    async def call():
        async with (
            streamable_http_client(f"{url}gradio_api/mcp/") as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await session.call_tool("analyze", arguments)

    with ThreadPoolExecutor(1) as thread:  # Playwright's sync API holds this thread's event loop
        result = thread.submit(asyncio.run, call()).result()
    assert not result.isError
    (content,) = result.content
    slider, clean_label, perturbed_label, _, _, status = ast.literal_eval(content.text)
    assert "Cutout of 25% of the image" in status

    pixels = classifier.preprocess(Image.open(COFFEE).convert("RGB"))
    perturbed, _ = app.perturb(
        pixels,
        "cutout",
        corruption="gaussian_noise",
        severity=3,
        ratio=0.25,
        frequency=(0, 20),
        eps=15.7,
        seed=3,
    )
    direct = app.top_k(classifier, torch.cat([pixels, perturbed]))
    for label, table in zip((clean_label, perturbed_label), direct, strict=True):
        assert [entry["label"] for entry in label["confidences"]] == list(table)
        got = [entry["confidence"] for entry in label["confidences"]]
        assert got == pytest.approx(list(table.values()), abs=1e-6)

    page = browser.new_page(viewport={"width": 600, "height": 600})
    page.goto(slider[1]["url"])
    shot = shown_image(page, page.locator("img"), screenshots / "mcp_perturbed.png")
    # A quarter of the image is Cutout's black square (112 x 112 of 224 x 224).
    assert abs(float((shot.max(axis=-1) <= 8).mean()) - 0.25) < 0.03
    page.close()
