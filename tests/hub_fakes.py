"""A stand-in for `huggingface_hub.HfApi` shared by the push tests: it records its calls, and binds every call
against the REAL method's signature first (captured at import, before any monkeypatching), so a call that drifts
from the API fails the test instead of only failing on the Hub."""

import inspect
import typing
from types import SimpleNamespace

import huggingface_hub

REAL_HFAPI = huggingface_hub.HfApi


def bind_real(method: str, *args, **kwargs) -> inspect.BoundArguments:
    """The real `HfApi.<method>`'s signature bound to a call (TypeError when the call does not fit it)."""
    return inspect.signature(getattr(REAL_HFAPI, method)).bind(*args, **kwargs)


class FakeApi:
    """Stands in for huggingface_hub.HfApi: records calls; optionally fails the upload quoting the token."""

    instances: typing.ClassVar[list] = []
    fail_with: str | None = None

    def __init__(self, *args, **kwargs):
        # Every call is bound against the real method's signature: a drifted call fails here, not on the Hub.
        bound = bind_real("__init__", self, *args, **kwargs)
        self.token = bound.arguments.get("token")
        self.calls = []
        FakeApi.instances.append(self)

    def create_repo(self, *args, **kwargs):
        bound = bind_real("create_repo", self, *args, **kwargs)
        kwargs = {k: v for k, v in bound.arguments.items() if k not in {"self", "repo_id"}}
        self.calls.append(("create_repo", bound.arguments["repo_id"], kwargs))
        return SimpleNamespace(repo_id=bound.arguments["repo_id"])

    def upload_folder(self, *args, **kwargs):
        kwargs = dict(bind_real("upload_folder", self, *args, **kwargs).arguments)
        kwargs.pop("self")
        self.calls.append(("upload_folder", kwargs["repo_id"], kwargs))
        if FakeApi.fail_with:
            raise RuntimeError(FakeApi.fail_with)
        return SimpleNamespace(commit_url=f"https://huggingface.co/{kwargs['repo_id']}/commit/abc")
