"""hf_vitrobust/hub/eval_results.py: a run's headlines as `.eval_results` entries, read back through the real
huggingface_hub parser."""

import pytest

from hf_vitrobust.analysis.protocols import default_protocol, protocol_parts
from hf_vitrobust.data import BENCHMARKS
from hf_vitrobust.hub.eval_results import PROTOCOL_PART_ORDER, protocol_from_notes, protocol_note


def test_protocol_note_names_parts_in_protocol_order():
    note = protocol_note({"class_mask": "hendrycks-200", "preprocessing": "model-native"})
    assert note == "protocol: preprocessing=model-native, class_mask=hendrycks-200"


@pytest.mark.parametrize("name", sorted(BENCHMARKS.names()))
def test_protocol_note_round_trips_every_default_protocol(name):
    benchmark = BENCHMARKS.get(name)
    protocol = default_protocol(benchmark)
    notes = " | ".join(
        [protocol_note(protocol), "95 % Wilson interval [41.20, 43.51], 7,424 images", "run: r1"]
    )
    assert protocol_from_notes(notes) == protocol
    # The fixed order is protocol_parts' order for every benchmark.
    order = [part for part in PROTOCOL_PART_ORDER if part in protocol]
    assert tuple(order) == protocol_parts(benchmark)


def test_protocol_from_notes_without_a_protocol_segment():
    assert protocol_from_notes(None) is None
    assert protocol_from_notes("") is None
    assert protocol_from_notes("no-tools") is None
    assert protocol_from_notes("protocol: not a pair | run: r1") is None


def test_protocol_note_refuses_names_it_could_not_read_back():
    with pytest.raises(ValueError, match="cannot be written into notes"):
        protocol_note({"release_encoding": "none (the CIFAR-C release is uint8 arrays, no JPEG)"})
    with pytest.raises(ValueError, match="empty"):
        protocol_note({})
