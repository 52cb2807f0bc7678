"""`Registry[T]`: registration (direct and as a decorator), aliases, did-you-mean lookups, and the package's own
registries built on it."""

import pytest

from hf_vitrobust.registry import Registry, UnknownNameError, check_known, did_you_mean


def test_register_get_names_in_order():
    registry: Registry[int] = Registry("number")
    registry.register("one", 1)

    @registry.register("two")
    def two() -> int:
        return 2

    assert registry.names() == ("one", "two")
    assert registry.get("one") == 1 and registry["two"] is two
    assert list(registry) == ["one", "two"] and len(registry) == 2
    assert dict(registry.items()) == {"one": 1, "two": two}
    assert "one" in registry and "three" not in registry and 1 not in registry


def test_unknown_name_is_a_value_and_key_error_with_the_closest_name():
    registry: Registry[int] = Registry("number")
    registry.register("seven", 7)
    registry.register("seventeen", 17)
    with pytest.raises(UnknownNameError) as caught:
        registry.get("sevn")
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, KeyError)
    assert str(caught.value) == "Unknown number 'sevn'. Did you mean 'seven'? Available: seven, seventeen."
    with pytest.raises(ValueError, match=r"Unknown number 'zzz'\. Available: seven, seventeen\.$"):
        registry.get("zzz")
    with pytest.raises(ValueError, match="Unknown number 3"):
        registry.get(3)
    assert registry.get("zzz", None) is None and registry.get("seven", None) == 7


def test_aliases_resolve_and_are_suggested_as_their_name():
    registry: Registry[str] = Registry("probe", display=lambda name: f"'probe:{name}'")
    registry.register("occlusion", "spec", aliases=("occlusion_sweep",))
    assert registry.get("occlusion_sweep") == "spec" and registry.canonical("occlusion_sweep") == "occlusion"
    assert registry.names() == ("occlusion",) and "occlusion_sweep" in registry
    with pytest.raises(ValueError, match=r"Did you mean 'probe:occlusion'\?"):
        registry.get("occlusion_swep")


def test_taken_names_are_refused_unless_replaced_and_unregister_removes_aliases():
    registry: Registry[int] = Registry("thing")
    registry.register("a", 1, aliases=("alpha",))
    for name, aliases in (("a", ()), ("b", ("alpha",)), ("alpha", ())):
        with pytest.raises(ValueError, match="already registered"):
            registry.register(name, 2, aliases=aliases)
    registry.register("a", 3, replace=True)
    assert registry.get("a") == 3 and "alpha" not in registry
    registry.unregister("a")
    assert len(registry) == 0
    registry.unregister("a", missing_ok=True)
    with pytest.raises(UnknownNameError):
        registry.unregister("a")
    with pytest.raises(ValueError, match="non-empty string"):
        registry.register("", 1)


def test_did_you_mean_and_check_known():
    assert did_you_mean("rotat", ("rotate", "tilt")) == " Did you mean 'rotate'?"
    assert did_you_mean("xyz", ("rotate", "tilt")) == ""
    check_known(["tilt"], ("rotate", "tilt"), "perturbation")
    with pytest.raises(
        ValueError,
        match=r"^Unknown perturbation\(s\): 'rotat' \(did you mean 'rotate'\?\), 'xyz'\. Known: rotate, tilt\.$",
    ):
        check_known(["rotat", "xyz", "rotat"], ("rotate", "tilt"), "perturbation")


def test_the_package_registries_share_the_helper():
    from hf_vitrobust.corruptions.base import CORRUPTION_REGISTRY
    from hf_vitrobust.metrics import METRICS

    for registry, kind, bad, good in (
        (CORRUPTION_REGISTRY, "corruption", "gausian_noise", "gaussian_noise"),
        (METRICS, "metric", "flip_rat", "flip_rate"),
    ):
        assert isinstance(registry, Registry)
        with pytest.raises(ValueError, match=rf"Unknown {kind} '{bad}'\. Did you mean '{good}'\?"):
            registry.get(bad)
