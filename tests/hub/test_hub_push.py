"""push(): a dry run touches nothing and needs no token; a real push goes through HfApi.create_repo + upload_folder
with the right repo type and folder; the token comes from the argument, else HF_TOKEN, else the stored login, and
never appears in a log record, an exception (message or traceback) or a staged file. HfApi is replaced by a fake
that records its calls: nothing here reaches the network."""

import logging
import traceback

import huggingface_hub
import pytest
from hub_fakes import FakeApi

from hf_vitrobust.hub import PushError, push, stage_metric
from hf_vitrobust.hub.push import resolve_token

TOKEN = "hf_SECRETtokenVALUE0123456789abcdef"


@pytest.fixture
def fake_hub(monkeypatch):
    FakeApi.instances, FakeApi.fail_with = [], None
    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    return FakeApi


@pytest.fixture
def stage(tmp_path):
    folder = tmp_path / "mce"
    stage_metric(folder, "mce")
    return folder


def _no_token_anywhere(caplog, stage, *texts):
    for record in caplog.records:
        assert TOKEN not in record.getMessage() and TOKEN not in str(record.args)
    for text in texts:
        assert TOKEN not in text
    for path in stage.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path


def test_dry_run_lists_the_files_and_touches_nothing(fake_hub, stage, caplog):
    caplog.set_level(logging.DEBUG)
    result = push(stage, "me/mce", repo_type="space", dry_run=True)
    assert result.dry_run and result.url is None
    assert result.files == ["README.md", "app.py", "mce.py", "requirements.txt", "vitrobust_core.py"]
    assert fake_hub.instances == []  # no client, no token needed


def test_push_creates_the_repo_and_uploads_the_stage(fake_hub, stage, caplog):
    caplog.set_level(logging.DEBUG)
    result = push(stage, "me/mce", repo_type="space", token=TOKEN, private=True)
    (api,) = fake_hub.instances
    assert api.token == TOKEN
    (create, upload) = api.calls
    assert create == (
        "create_repo",
        "me/mce",
        {"repo_type": "space", "exist_ok": True, "private": True, "space_sdk": "gradio"},
    )
    assert upload[0] == "upload_folder" and upload[1] == "me/mce"
    assert upload[2]["repo_type"] == "space" and upload[2]["folder_path"] == str(stage)
    assert result.url == "https://huggingface.co/me/mce/commit/abc" and len(result.files) == 5
    _no_token_anywhere(caplog, stage, repr(result))
    # A model repo gets no Space SDK.
    push(stage, "me/model", token=TOKEN)
    create = fake_hub.instances[-1].calls[0]
    assert create[2] == {"repo_type": "model", "exist_ok": True, "private": False}


def test_token_comes_from_argument_then_env_then_stored_login(fake_hub, monkeypatch):
    assert resolve_token() is None
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: "stored")
    assert resolve_token() == "stored"
    monkeypatch.setenv("HF_TOKEN", "from-env")
    assert resolve_token() == "from-env"
    assert resolve_token("explicit") == "explicit"


def test_no_token_is_a_clear_error_before_any_call(fake_hub, stage):
    with pytest.raises(PushError, match="No Hugging Face token"):
        push(stage, "me/mce", repo_type="space")
    assert fake_hub.instances == []


def test_a_failing_upload_never_shows_the_token(fake_hub, stage, caplog):
    caplog.set_level(logging.DEBUG)
    fake_hub.fail_with = f"401 Client Error: headers={{'authorization': 'Bearer {TOKEN}'}}"
    with pytest.raises(PushError, match="401 Client Error") as info:
        push(stage, "me/mce", repo_type="space", token=TOKEN)
    shown = "".join(traceback.format_exception(info.value))
    assert "***" in str(info.value)
    _no_token_anywhere(caplog, stage, str(info.value), repr(info.value), shown)


def test_bad_arguments_are_refused_before_any_call(fake_hub, stage, tmp_path):
    with pytest.raises(ValueError, match="namespace/name"):
        push(stage, "no-namespace", token=TOKEN)
    with pytest.raises(ValueError, match="repo_type"):
        push(stage, "me/mce", repo_type="sapce", token=TOKEN)
    with pytest.raises(FileNotFoundError, match="stage the upload first"):
        push(tmp_path / "missing", "me/mce", token=TOKEN)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="empty"):
        push(tmp_path / "empty", "me/mce", token=TOKEN)
    assert fake_hub.instances == []


def test_the_fake_hub_binds_calls_against_the_real_signatures(fake_hub):
    api = huggingface_hub.HfApi(token=TOKEN)
    with pytest.raises(TypeError):
        api.create_repo("me/x", repo_kind="model")  # no such parameter on the real create_repo
    with pytest.raises(TypeError):
        api.upload_folder(repo_id="me/x", folder="stage")  # the real one takes folder_path
    with pytest.raises(TypeError):
        huggingface_hub.HfApi(tokn=TOKEN)
    assert api.calls == []
