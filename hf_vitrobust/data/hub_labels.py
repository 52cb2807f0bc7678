# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""How a Hub schema's label column becomes a benchmark label: `LabelMap`, the class tables it checks names against
(ImageNet-1k's wnids and names, CIFAR's classes), and the class-name spellings of Hub copies accepted deliberately.

A label is always mapped through the wnid or a verified class-name list, never by position alone: a ClassLabel's
names are checked against the label space's classes before any index is used, and a name that is neither a class
nor a registered variant (`register_class_name_variant`) is a `SchemaError` naming it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..constants import IMAGENET_NUM_CLASSES
from ..models.cifar import CIFAR10_CLASSES, CIFAR100_CLASSES
from ..models.imagenet import IMAGENET_CLASS_NAMES, IMAGENET_WNIDS, imagenet_wnid_to_index
from ..registry import Registry
from .hub_schemas import Evidence, HubSchema
from .samples import NO_LABEL, SchemaError

_WNID = re.compile(r"^n\d{8}$")
_WNID_IN_NAME = re.compile(r"\bn\d{8}\b")


def _normalise_name(name: str) -> str:
    return " ".join(str(name).replace("_", " ").lower().split())


@dataclass(frozen=True)
class ClassNameVariant:
    """A Hub copy's spelling of a class name that differs from the shipped class list, accepted deliberately.

    label_space: "imagenet-1k" or "cifar100". spelling: as the copy writes it. index: the class it names.
    evidence: where the spelling was seen. A name that is neither a class nor a registered variant stays an error.
    """

    label_space: str
    spelling: str
    index: int
    evidence: Evidence


#: label space -> registry of its variants by normalised spelling; filled by `hub_datasets`. One `Registry` per
#: label space: the same spelling may name different classes in two label spaces.
CLASS_NAME_VARIANTS: dict[str, Registry[ClassNameVariant]] = {}


def register_class_name_variant(variant: ClassNameVariant) -> ClassNameVariant:
    """Accept `variant.spelling` as the name of class `variant.index` of its label space."""
    table = CLASS_NAME_VARIANTS.get(variant.label_space)
    if table is None:
        table = CLASS_NAME_VARIANTS[variant.label_space] = Registry(
            f"{variant.label_space} class name variant"
        )
    key = _normalise_name(variant.spelling)
    if key in table:
        raise ValueError(
            f"{variant.label_space} class name variant {variant.spelling!r} is already registered."
        )
    return table.register(key, variant)


def _variant_index(label_space: str, name: str) -> int | None:
    table = CLASS_NAME_VARIANTS.get(label_space)
    variant = None if table is None else table.get(_normalise_name(name), None)
    return None if variant is None else variant.index


# ---------------------------------------------------------------------------------------------------------------
# Label mapping


def _feature_kind(feature: Any) -> str:
    from datasets import ClassLabel, Value

    if isinstance(feature, ClassLabel):
        return "class_label"
    if isinstance(feature, Value):
        if feature.dtype.startswith(("int", "uint")):
            return "int"
        if feature.dtype in ("string", "large_string"):
            return "string"
    return type(feature).__name__


def _same_class(key: str, full: str, first: str) -> bool:
    # A copy may have made ImageNet's duplicate names unique ("crane" -> "crane 2", "crane (n03126707)").
    return key in (full, first) or key.startswith((first + " ", first + "("))


def _names_to_indices(
    names: Sequence[str], expected: Sequence[int], candidates: Sequence[int], what: str
) -> list[int]:
    """Map class names onto ImageNet-1k indices: a registered variant spelling (`crane2`) names its class; a name
    that agrees with the class expected at its position keeps it (this resolves ImageNet's duplicate names, e.g. the
    two "crane"s); any other name must match exactly one candidate class by a wnid inside it, else by full name,
    else by first name. Raises SchemaError naming the first name that cannot be mapped."""
    full = {i: _normalise_name(IMAGENET_CLASS_NAMES[i]) for i in candidates}
    first = {i: _normalise_name(IMAGENET_CLASS_NAMES[i].split(",")[0]) for i in candidates}
    indices = []
    for position, name in enumerate(names):
        key = _normalise_name(name)
        variant = _variant_index("imagenet-1k", name)
        if variant is not None and variant in full:
            indices.append(variant)
            continue
        guess = expected[position] if position < len(expected) else None
        if guess is not None and guess in full and _same_class(key, full[guess], first[guess]):
            indices.append(guess)
            continue
        wnid = _WNID_IN_NAME.search(str(name))
        found = [i for i in candidates if wnid and IMAGENET_WNIDS[i] == wnid.group(0)]
        found = (
            found or [i for i in candidates if key == full[i]] or [i for i in candidates if key == first[i]]
        )
        if len(found) != 1:
            problem = "matches no" if not found else f"matches {len(found)}"
            raise SchemaError(f"{what}: label name {name!r} (class {position}) {problem} ImageNet-1k class.")
        indices.append(found[0])
    if len(set(indices)) != len(indices):
        raise SchemaError(f"{what}: two label names map onto the same ImageNet-1k class.")
    return indices


def _wnids_to_indices(wnids: Sequence[str], allowed: set[str] | None, what: str) -> list[int]:
    to_index = imagenet_wnid_to_index()
    unknown = [w for w in wnids if w not in to_index]
    if unknown:
        raise SchemaError(f"{what}: unknown wnid {unknown[0]!r} ({len(unknown)} unknown in all).")
    if allowed is not None:
        outside = [w for w in wnids if w not in allowed]
        if outside:
            raise SchemaError(f"{what}: wnid {outside[0]!r} is not one of the benchmark's classes.")
    return [to_index[w] for w in wnids]


def _cifar_table(mode: str, names: Sequence[str], what: str) -> list[int]:
    """CIFAR label names must be CIFAR's classes in order; a registered variant (uoft-cs/cifar100's `cra`) counts
    as the class it names."""
    classes = CIFAR10_CLASSES if mode == "cifar10" else CIFAR100_CLASSES
    canonical = [_normalise_name(n) for n in classes]
    for position, name in enumerate(names):
        variant = _variant_index(mode, name)
        key = _normalise_name(classes[variant]) if variant is not None else _normalise_name(name)
        if position >= len(canonical) or key != canonical[position]:
            raise SchemaError(
                f"{what}: label name {name!r} (class {position}) is not {mode}'s class "
                f"{classes[position] if position < len(classes) else '(none)'!r}."
            )
    if len(names) != len(classes):
        raise SchemaError(f"{what}: expected the {len(classes)} classes of {mode}, found {len(names)} names.")
    return list(range(len(classes)))


class LabelMap:
    """Turns one label value of a schema's label column into a benchmark label: `(label, None)` or
    `(None, reason)`. Built from the column's `datasets` feature; raises SchemaError for a column that cannot
    be mapped."""

    def __init__(self, schema: HubSchema, feature: Any, what: str) -> None:
        self.mode = schema.label_mode
        self.table: list[int] | None = None
        self.wnids: dict[str, int] | None = None
        self.allowed: set[str] | None = None
        self.space = schema.benchmark
        kind = _feature_kind(feature) if feature is not None else None
        subset = schema.class_subset() if schema.class_subset is not None else None
        allowed = set(subset.wnids) if subset is not None else None
        if self.mode == "none":
            if kind == "class_label" and subset is not None:
                # ImageNet-O's folders name classes of its mask (a partial copy, some of them): a copy of another
                # dataset fails here.
                _wnids_to_indices(list(feature.names), allowed, what)
            return
        if self.mode == "subset_index":
            if subset is None:
                raise SchemaError(f"{what}: label_mode 'subset_index' needs a class subset.")
            self.space = subset.name
        if self.mode == "wnid_column":
            if kind != "string":
                raise SchemaError(f"{what}: the label column must hold wnid strings, found {feature}.")
            self.wnids = imagenet_wnid_to_index()
            self.allowed = allowed
            return
        if kind == "int":
            if not schema.int_labels:
                raise SchemaError(
                    f"{what}: the label column holds plain integers ({feature}), but {schema.name} stores a "
                    "ClassLabel whose names are checked before any index is used; a plain integer cannot be "
                    "checked. Pass schema= with a schema whose dataset really stores integers."
                )
            if self.mode in ("cifar10", "cifar100"):
                self.table = list(range(len(CIFAR10_CLASSES if self.mode == "cifar10" else CIFAR100_CLASSES)))
            elif self.mode == "subset_index":
                self.table = list(subset.class_indices)
            else:
                self.table = list(range(IMAGENET_NUM_CLASSES))
            return
        if kind != "class_label":
            raise SchemaError(f"{what}: the label column must be a ClassLabel, found {feature}.")
        names = list(feature.names)
        if self.mode in ("cifar10", "cifar100"):
            self.table = _cifar_table(self.mode, names, what)
            return
        if self.mode in ("wnid_names", "imagenet_names"):
            if all(_WNID.match(n) for n in names):
                self.table = _wnids_to_indices(names, allowed, what)
            elif self.mode == "wnid_names":
                bad = next(n for n in names if not _WNID.match(n))
                raise SchemaError(f"{what}: expected wnid label names, found {bad!r}.")
            else:
                if len(names) != IMAGENET_NUM_CLASSES:
                    raise SchemaError(
                        f"{what}: expected the 1000 ImageNet-1k classes, found {len(names)} names."
                    )
                everything = range(IMAGENET_NUM_CLASSES)
                self.table = _names_to_indices(names, list(everything), everything, what)
            return
        # subset_index
        if len(names) != len(subset):
            raise SchemaError(f"{what}: expected {len(subset)} classes of {subset.name}, found {len(names)}.")
        if all(_WNID.match(n) for n in names):
            self.table = _wnids_to_indices(names, allowed, what)
        else:
            self.table = _names_to_indices(names, subset.class_indices, subset.class_indices, what)

    def __call__(self, value: Any) -> tuple[int | None, str | None]:
        if self.mode == "none":
            return NO_LABEL, None
        if value is None or (isinstance(value, int) and not isinstance(value, bool) and value < 0):
            return None, "missing_label"
        if self.wnids is not None:
            index = self.wnids.get(str(value))
            if index is None or (self.allowed is not None and value not in self.allowed):
                return None, "unknown_wnid"
            return index, None
        assert self.table is not None
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < len(self.table):
            return None, "unknown_label"
        return self.table[value], None

    def check_first_batch(self, values: Sequence[Any], what: str) -> None:
        """The first rows' labels must fit the label mode, before any image is decoded: a label outside the
        column's classes (e.g. an ImageNet-1k index where 200-class numbers are expected) or a first batch without
        any label (an unlabelled split: ILSVRC/imagenet-1k's test split is all -1) raises SchemaError."""
        if self.mode == "none":
            return
        if not values:
            raise SchemaError(f"{what}: the split holds no rows.")
        reasons = [self(value)[1] for value in values]
        if all(reason == "missing_label" for reason in reasons):
            raise SchemaError(
                f"{what}: none of the first {len(values)} rows has a label (all None or -1): an unlabelled split "
                "(ILSVRC/imagenet-1k's test split has label -1 throughout). Use a labelled split."
            )
        bad = [
            value
            for value, reason in zip(values, reasons, strict=True)
            if reason not in (None, "missing_label")
        ]
        if not bad:
            return
        if self.wnids is not None:
            raise SchemaError(
                f"{what}: unknown wnid {bad[0]!r} in the first {len(values)} rows (not a class of {self.space})."
            )
        assert self.table is not None
        hint = ""
        if self.mode == "subset_index" and all(isinstance(v, int) and v < IMAGENET_NUM_CLASSES for v in bad):
            hint = (
                f": the column looks like ImageNet-1k indices, not the {len(self.table)}-class numbering of "
                f"{self.space}"
            )
        raise SchemaError(
            f"{what}: label {bad[0]!r} in the first {len(values)} rows is outside the {len(self.table)} classes "
            f"the label column can hold{hint}."
        )


# ---------------------------------------------------------------------------------------------------------------
# Sources


__all__ = [
    "CIFAR10_CLASSES",
    "CIFAR100_CLASSES",
    "CLASS_NAME_VARIANTS",
    "ClassNameVariant",
    "LabelMap",
    "register_class_name_variant",
]
