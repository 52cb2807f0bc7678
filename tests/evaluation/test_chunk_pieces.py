"""The workers hand each chunk over in pieces of about one model batch, and the main process classifies the pieces in
the batches of their whole chunk (issue 36, point 3): the model starts on a chunk's first batch instead of waiting for
the whole chunk, and the predictions are bit for bit those of whole chunks, whatever the number of workers."""

import itertools

import pandas as pd
import pytest
import torch
import yaml
from probe_models import PREPROCESSING, save_tiny_vit

from hf_vitrobust.data import BuiltinPhotosSource, get_benchmark
from hf_vitrobust.data.generated import GeneratedCorruptionSource
from hf_vitrobust.data.samples import InMemorySource, SkipReport, decode_raw_sample
from hf_vitrobust.evaluation import runner as runner_module
from hf_vitrobust.evaluation.chunk_batches import ChunkBatcher
from hf_vitrobust.evaluation.config import EvaluationConfig
from hf_vitrobust.evaluation.runner import evaluate
from hf_vitrobust.evaluation.streams import (
    ChunkDataset,
    ChunkInputs,
    ReadAssignment,
    chunk_pieces,
    chunked,
    plan_stream,
    uint8_to_pixels,
)


def _generated_plan(limit: int = 4, chunk_size: int = 8, generation_batch: int = 2):
    """Generated ImageNet-C of the first `limit` bundled photos, contrast and gaussian noise at severity 1, made
    `generation_batch` clean images at a time: chunks of chunk_size // 2 clean images."""
    source = GeneratedCorruptionSource(
        BuiltinPhotosSource(), ["contrast", "gaussian_noise"], [1], batch_size=generation_batch
    )
    return plan_stream(get_benchmark("imagenet-c"), source, limit, chunk_size, {})


def _first_chunk(plan):
    return next(chunked(plan.raw.shard_raw_samples(0), plan.chunk_size))


def test_pieces_of_a_generated_chunk_are_its_samples_in_order():
    """The pieces, put end to end, are the generated source's own samples of the chunk's clean images (re-derived
    here: decode, generate, preprocess each image), at positions chunk * positions_per_chunk + j; every piece but
    the last holds exactly piece_size samples, and only the last carries the skip report and the positions."""
    plan = _generated_plan()
    index, items = _first_chunk(plan)
    clean = InMemorySource([decode_raw_sample(raw, SkipReport()) for _, raw in items])
    expected = list(plan.generated.with_clean(clean).samples())
    assert len(expected) == 8
    expected_pixels = torch.stack([uint8_to_pixels(PREPROCESSING, sample.image) for sample in expected])
    for piece_size in (1, 3, 8, 100, None):
        pieces = list(chunk_pieces(plan, index, items, PREPROCESSING, 0, piece_size))
        assert [piece.last for piece in pieces] == [False] * (len(pieces) - 1) + [True]
        assert all(len(piece.samples) == piece_size for piece in pieces[:-1])
        assert all(piece.skipped == {} and piece.num_positions == 0 for piece in pieces[:-1])
        assert pieces[-1].num_positions == 8 and pieces[-1].skipped["num_skipped"] == 0
        samples = [sample for piece in pieces for sample in piece.samples]
        assert [s.sample_id for s in samples] == [s.sample_id for s in expected]
        assert [p for piece in pieces for p in piece.positions] == list(range(8))
        pixels = torch.cat([piece.pixels for piece in pieces if piece.pixels is not None])
        assert torch.equal(pixels, expected_pixels)
    # 8 samples in pieces of 4: two full pieces, then an empty last one with the report.
    pieces = list(chunk_pieces(plan, index, items, PREPROCESSING, 0, 4))
    assert [len(piece.samples) for piece in pieces] == [4, 4, 0] and pieces[-1].pixels is None


def test_a_piece_is_made_before_the_rest_of_its_chunk(monkeypatch):
    """The first piece costs one cell of one generation batch, not the whole chunk: the model can start on it
    while the worker makes the rest."""
    plan = _generated_plan(generation_batch=2)
    index, items = _first_chunk(plan)
    made = []
    recipe = plan.generated.recipe
    original = type(recipe).make

    def counted(self, cell, images, sample_ids):
        made.append((cell, len(images)))
        return original(self, cell, images, sample_ids)

    monkeypatch.setattr(type(recipe), "make", counted)
    pieces = chunk_pieces(plan, index, items, PREPROCESSING, 0, 2)
    first = next(pieces)
    assert [s.metadata["corruption"] for s in first.samples] == ["contrast", "contrast"]
    assert made == [(("contrast", 1), 2)]
    list(pieces)
    # Generation batches of 2 clean images, every cell of each in turn.
    assert made == [(("contrast", 1), 2), (("gaussian_noise", 1), 2)] * 2


def _scaled_by_batch_mean(pixels: torch.Tensor) -> torch.Tensor:
    """A 'model' whose output depends on which frames share its batch (the batch mean), so that a batch formed
    otherwise than the whole chunk's gives other numbers."""
    return pixels.flatten(1)[:, :3] * 10 + pixels.mean()


def _piece(key, frames, positions, last, shape=None):
    pixels = frames if shape is None else frames.view(-1, *shape)
    samples = [f"s{p}" for p in positions]
    skipped = {"num_skipped": 0} if last else {}
    return ChunkInputs(
        key[0], key[1], positions, samples, pixels, skipped, num_positions=9 if last else 0, last=last
    )


def test_the_batcher_classifies_the_whole_chunks_batches_whatever_the_pieces():
    """Two chunks' pieces, interleaved as two workers hand them over, of sizes unrelated to the batch: each chunk's
    frames are classified in batches of exactly 4 counted from its first frame, the result equal to the whole
    chunk's (computed here batch by batch), bit for bit."""
    torch.manual_seed(0)
    a, b = torch.rand(9, 3, 2, 2), torch.rand(6, 3, 2, 2)
    calls = []

    def classify(pixels):
        calls.append(len(pixels))
        return _scaled_by_batch_mean(pixels)

    batcher = ChunkBatcher(classify, batch_size=4)
    order = [
        _piece((0, 0), a[:1], [0], False),
        _piece((0, 1), b[:5], [10, 11, 12, 13, 14], False),
        _piece((0, 0), a[1:6], [1, 2, 3, 4, 5], False),
        _piece((0, 1), b[5:], [15], True),
        _piece((0, 0), a[6:], [6, 7, 8], True),
    ]
    done = {}
    for piece in order:
        finished = batcher.add(piece)
        if finished is not None:
            done[finished.key] = finished
    assert batcher.open_chunks == 0
    # b's first 4, a's first 4, b's last 2 (its last piece), a's next 4 and last 1 (9 = 4 + 4 + 1).
    assert calls == [4, 4, 2, 4, 1]
    for key, frames in (((0, 0), a), ((0, 1), b)):
        expected = torch.cat([_scaled_by_batch_mean(frames[i : i + 4]) for i in range(0, len(frames), 4)])
        assert torch.equal(done[key].logits, expected)
        assert done[key].num_positions == 9 and done[key].skipped == {"num_skipped": 0}
    assert done[(0, 0)].positions == list(range(9)) and done[(0, 0)].samples == [f"s{p}" for p in range(9)]


def test_the_batcher_batches_sequence_frames_and_keeps_their_shapes():
    """Sequences are batched by frames, across sequences, as a whole chunk's flattened frames are: one length
    gives (n, T, classes); different lengths give a list of (T_i, classes)."""
    torch.manual_seed(1)
    same = torch.rand(3, 5, 3, 2, 2)
    batcher = ChunkBatcher(_scaled_by_batch_mean, batch_size=4)
    assert batcher.add(_piece((0, 0), same[:2], [0, 1], False)) is None
    out = batcher.add(_piece((0, 0), same[2:], [2], True))
    flat = same.flatten(0, 1)
    expected = torch.cat([_scaled_by_batch_mean(flat[i : i + 4]) for i in range(0, 15, 4)]).view(3, 5, 3)
    assert torch.equal(out.logits, expected)
    mixed = [torch.rand(3, 3, 2, 2), torch.rand(5, 3, 2, 2)]
    assert batcher.add(ChunkInputs(0, 1, [0], ["a"], [mixed[0]], {}, last=False)) is None
    out = batcher.add(ChunkInputs(0, 1, [1], ["b"], [mixed[1]], {}, num_positions=2))
    flat = torch.cat(mixed)
    whole = torch.cat([_scaled_by_batch_mean(flat[i : i + 4]) for i in range(0, 8, 4)])
    assert isinstance(out.logits, list) and [len(x) for x in out.logits] == [3, 5]
    assert torch.equal(torch.cat(out.logits), whole)


def test_an_empty_chunk_has_no_logits_and_bad_settings_are_refused():
    batcher = ChunkBatcher(_scaled_by_batch_mean, batch_size=2)
    out = batcher.add(ChunkInputs(0, 0, [], [], None, {"num_skipped": 3}, num_positions=3))
    assert out.logits is None and out.skipped == {"num_skipped": 3} and out.num_positions == 3
    with pytest.raises(ValueError, match="finish_chunk"):
        batcher.add(ChunkInputs(0, 1, [], [], None, {}, clean=[]))
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="batch_size must be a positive integer"):
            ChunkBatcher(_scaled_by_batch_mean, batch_size=bad)
    plan = _generated_plan()
    for bad in (0, -2, 1.5, False):
        with pytest.raises(ValueError, match="piece_size must be None or a positive integer"):
            ChunkDataset(plan, PREPROCESSING, ReadAssignment(1, 0, 1), piece_size=bad)
        with pytest.raises(ValueError, match="piece_size must be None or a positive integer"):
            next(chunk_pieces(plan, *_first_chunk(plan), PREPROCESSING, 0, bad))
    # A worker may run two chunks ahead, in pieces: 8 samples a chunk in pieces of 3 is 3 pieces a chunk.
    assert ChunkDataset(plan, PREPROCESSING, ReadAssignment(1, 0, 1), piece_size=3).prefetch_factor() == 6
    assert ChunkDataset(plan, PREPROCESSING, ReadAssignment(1, 0, 1)).prefetch_factor() == 2


def test_generated_predictions_are_bit_identical_whatever_the_workers(
    tmp_path, monkeypatch, count_classified
):
    """Generated ImageNet-C through the runner with 0, 1 and 2 DataLoader workers (pieces of one batch, two chunks
    interleaved with 2 workers), and with whole chunks (as before pieces): the same predictions file, bit for bit,
    and the model called on the same batches: each chunk's, counted from its first sample."""
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        yaml.safe_dump(
            {
                "name": "pieces",
                "batch_size": 3,
                "seed": 4,
                "chunk_size": 8,  # 4 clean images x 2 cells a chunk: batches of 3, 3, 2
                "models": [save_tiny_vit(tmp_path / "vit")],
                "benchmarks": {
                    "imagenet-c": {
                        "source": "generated:builtin",
                        "limit": 5,
                        "corruptions": ["gaussian_noise", "contrast"],
                        "severities": [2],
                    }
                },
            }
        )
    )
    calls = count_classified

    def run(name: str, workers: int) -> pd.DataFrame:
        calls.clear()
        results = evaluate(
            EvaluationConfig(
                suite=str(suite),
                output=tmp_path / name,
                num_workers=workers,
                corruption_device="workers",
                progress=False,
                report=False,
            )
        )
        assert results["benchmarks"]["imagenet-c"]["num_samples"] == 10
        assert sorted(calls) == sorted([3, 3, 2, 2])  # chunk 0: 8 samples; chunk 1: 1 image x 2 cells
        (model,) = results["predictions"]
        return pd.read_parquet(tmp_path / name / results["predictions"][model]["imagenet-c"])

    frames = {workers: run(f"w{workers}", workers) for workers in (0, 1, 2)}

    class WholeChunks(ChunkDataset):
        def __init__(self, *args, piece_size=None, **kwargs):
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(runner_module, "ChunkDataset", WholeChunks)
    whole = run("whole", 1)
    for frame in frames.values():
        pd.testing.assert_frame_equal(frame, whole, check_exact=True)
    assert list(itertools.chain(whole["corruption"][:8])) == ["gaussian_noise"] * 4 + ["contrast"] * 4
