# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The pieces of chunks that the DataLoader workers hand over, classified in the model batches of their whole chunk.

A worker hands each chunk over in pieces (`streams.chunk_pieces`), so that the model starts on a chunk's first images
while the worker still decodes, corrupts and preprocesses the rest: the model waits for one piece, not for a whole
chunk (on generated ImageNet-C, a chunk of 128 clean images corrupted twice is seconds of one worker's time). With
several workers the pieces of their chunks interleave. `ChunkBatcher` keeps each open chunk's frames and classifies
them in batches of `batch_size` frames counted from the chunk's first frame, as a chunk classified whole is: the same
frames in the same batches, so the same logits bit for bit, whatever the piece size or the number of workers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from ..data.samples import Sample
from .streams import ChunkInputs


@dataclass
class ClassifiedChunk:
    """A whole chunk and its logits: (n, classes), (n, T, classes) for sequences of one length, a list of
    (T_i, classes) for sequences of different lengths, or None when every sample was skipped."""

    shard: int
    index: int
    positions: list[int]
    samples: list[Sample]
    logits: torch.Tensor | list[torch.Tensor] | None
    skipped: dict[str, Any]
    num_positions: int

    @property
    def key(self) -> tuple[int, int]:
        return (self.shard, self.index)


@dataclass
class _OpenChunk:
    positions: list[int] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    shapes: list[tuple[int, ...]] = field(default_factory=list)  # each sample's pixel shape
    pending: list[torch.Tensor] = field(default_factory=list)  # frames not yet classified, in order
    num_pending: int = 0
    logits: list[torch.Tensor] = field(default_factory=list)  # of the frames classified so far, in order


class ChunkBatcher:
    """Collects pieces of chunks (`ChunkInputs`, in each chunk's order; chunks may interleave) and classifies their
    frames with `classify` in batches of exactly `batch_size` frames counted from each chunk's first frame (the last
    batch of a chunk shorter); `add` returns the chunk with its logits once its last piece is in.

    classify: (k, 3, h, w) pixels, k <= batch_size -> (k, classes) logits.
    """

    def __init__(self, classify: Callable[[torch.Tensor], torch.Tensor], batch_size: int) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}.")
        self.classify = classify
        self.batch_size = batch_size
        self._open: dict[tuple[int, int], _OpenChunk] = {}

    @property
    def open_chunks(self) -> int:
        """Chunks with pieces in and their last piece still to come."""
        return len(self._open)

    def add(self, piece: ChunkInputs) -> ClassifiedChunk | None:
        """Take one piece: classify every full batch its chunk now holds; return the chunk, classified, when this is
        its last piece, else None. A chunk still holding clean images to corrupt (`finish_chunk` first) is a
        ValueError."""
        if piece.clean is not None:
            raise ValueError(
                f"chunk {piece.key} holds clean images still to be corrupted: pass it through finish_chunk first."
            )
        chunk = self._open.setdefault(piece.key, _OpenChunk())
        if piece.pixels is not None:
            pixels = piece.pixels
            if isinstance(pixels, torch.Tensor):
                chunk.shapes += [tuple(pixels.shape[1:])] * len(pixels)
                frames = pixels.flatten(0, pixels.dim() - 4)
            else:
                chunk.shapes += [tuple(sequence.shape) for sequence in pixels]
                frames = torch.cat(pixels)
            chunk.positions += piece.positions
            chunk.samples += piece.samples
            chunk.pending.append(frames)
            chunk.num_pending += len(frames)
            while chunk.num_pending >= self.batch_size:
                self._classify_pending(chunk, self.batch_size)
        if not piece.last:
            return None
        del self._open[piece.key]
        if chunk.num_pending:
            self._classify_pending(chunk, chunk.num_pending)
        return ClassifiedChunk(
            piece.shard,
            piece.index,
            chunk.positions,
            chunk.samples,
            _per_sample(chunk),
            piece.skipped,
            piece.num_positions,
        )

    def _classify_pending(self, chunk: _OpenChunk, count: int) -> None:
        """Classify the first `count` pending frames of `chunk`."""
        flat = chunk.pending[0] if len(chunk.pending) == 1 else torch.cat(chunk.pending)
        chunk.logits.append(self.classify(flat[:count]))
        rest = flat[count:]
        chunk.pending = [rest] if len(rest) else []
        chunk.num_pending = len(rest)


def _per_sample(chunk: _OpenChunk) -> torch.Tensor | list[torch.Tensor] | None:
    """The chunk's frame logits per sample, shaped as a chunk classified whole gives them."""
    if not chunk.samples:
        return None
    logits = torch.cat(chunk.logits)
    shapes = set(chunk.shapes)
    if len(shapes) == 1:
        (shape,) = shapes
        return logits.view(len(chunk.samples), *shape[:-3], logits.shape[-1])
    return list(logits.split([shape[0] if len(shape) == 4 else 1 for shape in chunk.shapes]))


__all__ = ["ChunkBatcher", "ClassifiedChunk"]
