"""The Space app in a real browser (Debian's chromium driven by Playwright): upload a photo, choose a corruption,
apply it, and read the predictions and the overlay the page shows."""

import os
import re
import socket
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.is_file():
    pytest.skip(
        f"{CHROMIUM} is missing: the browser test needs Debian's chromium (`apt-get install -y chromium`, as .ci/run "
        "does); Playwright's own browser download does not work here.",
        allow_module_level=True,
    )

from playwright.sync_api import expect, sync_playwright  # noqa: E402
from test_space_app import COFFEE, load_app  # noqa: E402

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
TIMEOUT_MS = 90_000  # a first prediction loads the model and runs Grad-CAM twice on a busy 2-core CPU


@pytest.fixture(scope="module")
def url():
    assert os.environ.get("GRADIO_ANALYTICS_ENABLED") == "False"
    demo = load_app().build_demo()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    demo.launch(
        server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, ssr_mode=False, quiet=True
    )
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()


def test_upload_corrupt_and_read_predictions_and_overlay(url):
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
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
                size = image.evaluate("e => [e.naturalWidth, e.naturalHeight]")
                assert size == [224, 224]
        finally:
            browser.close()
