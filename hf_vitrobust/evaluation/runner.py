# Copyright 2026 The hf_vitrobust developers. Licensed under the Apache License, Version 2.0.
"""The evaluation runner: every model of a run on every benchmark and probe of a suite.

    results = evaluate(EvaluationConfig(models=["google/vit-base-patch16-224"], suite="paper", output="runs/vit"))

A run validates everything first (suite, sources, label spaces, options), then, model by model:
1. streams each benchmark in chunks (see `distributed`): this process's chunks are decoded, corrupted (ImageNet-C/-P
   generated on the fly) and preprocessed by DataLoader workers, classified in batches, and written as one parquet
   file per chunk; rank 0 merges the chunks into `predictions/<model>/<benchmark>.parquet` and computes the metrics;
2. runs each probe on its selected images (chosen from the clean predictions, the same on every rank), chunk by
   chunk across the ranks, one partial result file per chunk, merged by rank 0.
Then rank 0 analyses the run once (`analysis.analyze`, on the predictions files it has written, read by column and
in batches: intervals, model comparisons, published numbers and findings) and writes results.json and the report.
Every file is written atomically; `resume=True` skips the chunks already on disk, so a killed run continues where it
stopped and ends with the same results.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader
from tqdm.auto import tqdm

from .. import __version__
from ..analysis.analyze import analyze
from ..analysis.kinds import benchmark_metrics, summary_headlines
from ..analysis.prediction_source import Predictions
from ..analysis.predictions import empty_columns, keeps_logits, prediction_rows, to_table
from ..analysis.protocols import protocol_record
from ..analysis.record import benchmark_record, model_key, new_record, predictions_path
from ..analysis.results import SCHEMA_VERSION, json_safe, summary_table
from ..analysis.scoring import clean_of_generated
from ..constants import LABEL_SPACE_CLASSES
from ..data import Benchmark, SkipReport
from ..models.loading import load_classifier
from ..probes.spec import ProbeNotApplicable, get_probe
from ..report.document import write_report
from .chunk_batches import ChunkBatcher
from .config import PRECISIONS, EvaluationConfig, EvaluationError
from .distributed import ProcessGroup, process_group
from .model_input import ModelEntry, model_input
from .probe_images import keyed_rows, select_probe_places
from .progress import RunProgress, done_positions, skipped_lines
from .run_lock import RunFolderBusy, RunLock
from .store import (
    ChunkStore,
    load_tensors,
    resume_refusal,
    save_tensors_atomic,
    write_json_atomic,
    write_parquet_atomic,
)
from .stream_merge import merge_stream_chunks, merged_predictions
from .streams import (
    ChunkDataset,
    ReadAssignment,
    ShardEnd,
    StreamPlan,
    collate_identity,
    finish_chunk,
    interleaving_cost,
    limits_per_cell,
    open_benchmark,
    plan_stream,
    read_places,
)
from .suite import Suite

logger = logging.getLogger(__name__)

#: Run settings that change results: a resumed run must use the same ones.
_RESULT_SETTINGS = (
    "models", "suite", "data", "limit", "seed", "precision", "chunk_size", "protocols", "schema_version",
    "chunk_layout", "suite_contents", "subset",
)  # fmt: skip
#: How the chunk files of a stream are cut: per shard of the source (`streams.StreamPlan`). Run folders of
#: versions that cut the whole stream (chunk k of every process's full read) record none and cannot be resumed.
CHUNK_LAYOUT = "per-shard"


class Runner:
    """Carries one run: its settings, process group, run folder, models and stream plans."""

    def __init__(self, config: EvaluationConfig) -> None:
        self.config = config
        resolved = config.resolve()
        self.suite: Suite = resolved.suite
        self.seed = resolved.seed
        self.uncertainty = resolved.uncertainty
        self.batch_size = resolved.batch_size
        self.chunk_size = resolved.chunk_size
        self.model_specs = resolved.model_specs
        self.benchmarks: dict[str, Benchmark] = resolved.benchmarks
        self.protocols: dict[str, dict[str, str]] = resolved.protocols
        self.model_preprocessing = resolved.model_preprocessing
        self.output = Path(config.output)
        self.work = self.output / ".work"
        self.group: ProcessGroup = process_group(config.device)
        self.unavailable: dict[str, str] = {}  # optional benchmarks without a source -> why
        self.subsets: dict[str, dict[str, Any]] = {}  # benchmark -> the images its limit kept (results.json)
        self.settings = {
            "models": self.model_specs,
            "suite": self.suite.name,
            "data": dict(sorted(config.data.items())),
            "limit": config.limit,
            # None (each benchmark's suite entry, else the first N) is also what run folders of earlier versions,
            # which record no subset, kept: they resume with it and only with it.
            "subset": config.subset,
            "seed": self.seed,
            "precision": config.precision,
            "chunk_size": self.chunk_size,
            "protocols": self.protocols,
            "schema_version": SCHEMA_VERSION,
            "chunk_layout": CHUNK_LAYOUT,
            "suite_contents": json_safe(self.suite.to_dict()),
            "corruption_device": self._corruption_device_name(),
            "batch_size": self.batch_size,
            "compile": config.compile,
            "num_workers": config.num_workers,
            "num_threads": config.num_threads,
            "num_processes": self.group.world_size,
            "device": str(self.group.device),
        }

    # ------------------------------------------------------------------------------------------------ set-up
    def _corruption_device_name(self) -> str:
        """ "workers" or "device" (config "auto": "device" on a GPU)."""
        chosen = self.config.corruption_device
        if chosen == "auto":
            return "device" if self.group.device.type == "cuda" else "workers"
        return chosen

    def _plans(self) -> dict[str, StreamPlan]:
        """Resolve and validate every benchmark's source (before any work). An optional benchmark with no source
        at all is left out and recorded in `self.unavailable`."""
        plans = {}
        for spec in self.suite.benchmarks:
            benchmark = self.benchmarks[spec.name]
            source = self.config.data.get(spec.name, spec.source)
            if source is None and benchmark.default_source is None and spec.optional:
                self.unavailable[spec.name] = (
                    f"{spec.name} has no Hub copy and no source was given: pass --data {spec.name}=PATH"
                )
                logger.warning("Skipping %s.", self.unavailable[spec.name])
                continue
            limit = self.config.limit if self.config.limit is not None else spec.limit
            subset = self.config.subset or spec.subset or "first"
            per_cell = limit is not None and limits_per_cell(benchmark)
            self.subsets[spec.name] = {
                "kind": "all" if limit is None else subset,
                "limit": limit,
                "seed": self.seed if limit is not None and subset in ("random", "class-balanced") else None,
                "per_cell": per_cell,
            }
            device = self.group.device if self.settings["corruption_device"] == "device" else None
            try:
                resolved = open_benchmark(spec, source, self.seed, self.protocols[spec.name])
                plan = plan_stream(
                    benchmark,
                    resolved,
                    limit,
                    self.chunk_size,
                    dict(spec.options),
                    device,
                    subset=subset,
                    seed=self.seed,
                )
                # Each process checks the parts it will read (and the first, for the schema); together, all.
                plan.raw.validate_shards(
                    ReadAssignment(len(plan.shards()), self.group.rank, self.group.world_size).shards
                )
            except (ValueError, FileNotFoundError, OSError) as error:
                shown = (
                    repr(source)
                    if source is not None
                    else f"{benchmark.default_source!r} (its default source)"
                )
                raise EvaluationError(f"{spec.name}: cannot read source {shown}: {error}") from error
            row_order = resolved.describe().get("row_order")
            if limit is not None and subset == "first" and row_order:
                logger.warning("%s: %s.", spec.name, row_order)
            warning = interleaving_cost(spec.name, plan, self.group.world_size, self.config.num_workers)
            if warning is not None and self.group.is_main:
                logger.warning("%s", warning)
            plans[spec.name] = plan
        return plans

    def _load_models(self) -> list[ModelEntry]:
        """Load every model and match its label space to the benchmarks. A benchmark the model cannot be scored on
        is an error when the user named it (--data) or when nothing else is left; otherwise (a suite that mixes
        ImageNet and CIFAR benchmarks) it is skipped for that model and recorded as such."""
        entries: list[ModelEntry] = []
        for spec in self.model_specs:
            try:
                classifier = load_classifier(spec, device=self.group.device)
            except (OSError, ValueError, KeyError, RuntimeError) as error:
                raise EvaluationError(f"Cannot load model {spec!r}: {error}") from error
            skipped = dict(self.unavailable)
            for name, benchmark in self.benchmarks.items():
                if name in self.unavailable:
                    continue
                needed = LABEL_SPACE_CLASSES[benchmark.label_space]
                if classifier.num_classes == needed or (
                    benchmark.label_space == "imagenet-9" and classifier.num_classes == 9
                ):
                    continue
                message = (
                    f"Model {spec!r} predicts {classifier.num_classes} classes, but {name} is scored in the "
                    f"{benchmark.label_space} label space ({needed} classes)"
                )
                if name in self.config.data:
                    raise EvaluationError(f"{message}: use a {benchmark.label_space} classifier for it.")
                skipped[name] = message
            if len(skipped) == len(self.benchmarks):
                raise EvaluationError(
                    f"{list(skipped.values())[-1]}; no benchmark of the suite {self.suite.name!r} fits this "
                    "model: use a classifier of the suite's label space or another suite."
                )
            for name, message in skipped.items():
                if name not in self.unavailable:
                    logger.warning("%s: skipping %s.", message, name)
            inputs = {}
            for name, benchmark in self.benchmarks.items():
                if name in skipped:
                    continue
                try:
                    preprocessing, pairing = self.model_preprocessing(spec, name)
                    how = {"pairing": pairing, "interpolation": self.protocols[name]["interpolation"]}
                    inputs[name] = model_input(benchmark, preprocessing, classifier, **how)
                except ValueError as error:
                    raise EvaluationError(f"{name}: {error}") from error
            key = model_key(spec, [e.key for e in entries])
            entry = ModelEntry(key, spec, classifier, skipped, inputs)
            try:
                entry.check_probes(self.suite.probes)
            except ValueError as error:
                raise EvaluationError(str(error)) from None
            entries.append(entry)
        return entries

    def _prepare_folder(self) -> None:
        run_file = self.work / "run.json"
        recorded = {key: self.settings[key] for key in _RESULT_SETTINGS}
        if self.group.is_main:
            previous = json.loads(run_file.read_text()) if run_file.is_file() else None
            refusal = resume_refusal(
                self.output, previous, recorded, self.config.resume, SCHEMA_VERSION, self.work
            )
            if refusal is not None:
                raise EvaluationError(refusal)
            write_json_atomic(run_file, recorded)
        self.group.barrier()

    # -------------------------------------------------------------------------------------------- benchmarks
    @contextlib.contextmanager
    def _autocast(self) -> Iterator[None]:
        dtype = PRECISIONS[self.config.precision]
        if dtype == torch.float32:
            yield
            return
        with torch.autocast(device_type=self.group.device.type, dtype=dtype):
            yield

    def _classify(
        self, model: torch.nn.Module, pixels: torch.Tensor | list[torch.Tensor]
    ) -> torch.Tensor | list[torch.Tensor]:
        """Logits of (n, 3, h, w) or (n, T, 3, h, w) pixels, in batches of `batch_size` images; of a list of
        sequences of different lengths (T_i, 3, h, w), the list of their (T_i, classes) logits (the frames are
        batched in the same order as a stacked chunk's)."""
        if isinstance(pixels, list):
            logits = self._classify(model, torch.cat(pixels))
            return list(logits.split([len(sequence) for sequence in pixels]))
        flat = pixels.flatten(0, pixels.dim() - 4)
        outputs = []
        with torch.inference_mode(), self._autocast():
            for start in range(0, flat.shape[0], self.batch_size):
                batch = flat[start : start + self.batch_size].to(self.group.device, non_blocking=True)
                batch = batch.contiguous(memory_format=torch.channels_last)
                outputs.append(model(batch).float().cpu())
        logits = torch.cat(outputs)
        return logits.view(*pixels.shape[: pixels.dim() - 3], logits.shape[-1])

    def _progress(self, description: str, total: int | None, unit: str = "sample", initial: int = 0) -> tqdm:
        return tqdm(
            total=total,
            initial=initial,
            desc=description,
            unit=unit,
            disable=not (self.config.progress and self.group.is_main),
            dynamic_ncols=True,
            leave=False,
        )

    def _run_stream(
        self, entry: ModelEntry, name: str, plan: StreamPlan, model: torch.nn.Module, progress: RunProgress
    ) -> None:
        """This process's chunks of one benchmark -> chunk parquet files, and a marker for each shard it read to
        its end. It reads only its own shards (`ReadAssignment`); shards whose chunks are all on disk are not read
        again. `model` reads the benchmark under its protocol (`entry.inputs[name]`)."""
        store = ChunkStore(self.work / entry.key / "benchmarks" / name, "parquet")
        shards = plan.shards()
        if self.group.is_main:
            store.adopt_whole_stream(len(shards))
            store.check_shards(shards)
            # Before the barrier, so that no process has written a chunk of this run yet.
            progress.add_done_earlier(done_positions(map(store.path, store.done_indices())))
        self.group.barrier()
        done = store.done_indices()
        keep_logits = keeps_logits(plan.benchmark, plan.generated is not None)
        preprocessing = entry.inputs[name].classifier.preprocessing
        dataset = ChunkDataset(
            plan,
            preprocessing,
            ReadAssignment(len(shards), self.group.rank, self.group.world_size),
            done,  # type: ignore[arg-type]
            store.complete_shards(len(shards), done),
            piece_size=self.batch_size,  # the model starts on a chunk's first batch, not after the whole chunk
        )
        loader = DataLoader(
            dataset,
            batch_size=None,
            num_workers=self.config.num_workers,
            collate_fn=collate_identity,
            persistent_workers=False,
            prefetch_factor=dataset.prefetch_factor() if self.config.num_workers else None,
        )
        batcher = ChunkBatcher(lambda pixels: self._classify(model, pixels), self.batch_size)
        progress.describe(f"{entry.key} {name}")
        marked: set[int] = set()
        for item in loader:
            if isinstance(item, ShardEnd):
                # Several workers may each read a shard (fewer shards than workers): one marker is enough.
                if item.shard not in marked:
                    store.mark_shard(item.shard, item.num_chunks, item.num_items)
                    marked.add(item.shard)
                continue
            chunk = batcher.add(finish_chunk(item, plan, preprocessing))
            if chunk is None:  # more pieces of this chunk to come
                continue
            columns = empty_columns()
            if chunk.logits is not None:
                columns = prediction_rows(
                    plan.benchmark, chunk.positions, chunk.samples, chunk.logits, keep_logits, chunk.shard
                )
            write_parquet_atomic(store.path(chunk.key), to_table(columns, chunk.skipped, chunk.num_positions))
            progress.add(chunk.num_positions)

    def _merge_stream(
        self, entry: ModelEntry, name: str, plan: StreamPlan
    ) -> tuple[Predictions, SkipReport, int]:
        """Rank 0: every chunk of a benchmark, in order, appended one at a time to its predictions file; then that
        file, checked, which the metrics, intervals and probes' image selection read by column and in batches."""
        store = ChunkStore(self.work / entry.key / "benchmarks" / name, "parquet")
        path = self.output / predictions_path(entry.key, name)
        report, num_items = merge_stream_chunks(name, store, len(plan.shards()), path)
        return merged_predictions(name, path), report, num_items

    # ------------------------------------------------------------------------------------------------ probes
    def _run_probes(
        self,
        entry: ModelEntry,
        plans: dict[str, StreamPlan],
        selections: dict[str, list[tuple[int, int]]],
    ) -> dict[str, Any]:
        """Every probe of the suite on its selected images: this rank's chunks, then (rank 0) the merge. A probe sees
        its benchmark's images as the benchmark's protocol feeds them to the model (`entry.inputs`)."""
        skipped: dict[str, Any] = {}
        jobs = []  # (spec, task, chunks of positions, their store, this rank's chunks still to do)
        for spec in self.suite.probes:
            task = get_probe(spec.name)
            if spec.benchmark in entry.skipped:
                skipped[spec.name] = {"skipped": entry.skipped[spec.benchmark], "benchmark": spec.benchmark}
                continue
            if spec.name in entry.not_run:
                skipped[spec.name] = {"skipped": entry.not_run[spec.name], "benchmark": spec.benchmark}
                continue
            positions = selections[spec.name]
            size = task.chunk_length(spec.params)
            chunks = [positions[i : i + size] for i in range(0, len(positions), size)]
            store = ChunkStore(self.work / entry.key / "probes" / spec.name, "pt")
            done = store.done_indices()
            mine = [i for i in range(len(chunks)) if self.group.owns(i) and i not in done]
            jobs.append((spec, task, chunks, store, mine))
        # This rank's images of every probe, fetched in one pass per benchmark.
        needed: dict[str, set[tuple[int, int]]] = {}
        for spec, _task, chunks, _store, mine in jobs:
            for index in mine:
                needed.setdefault(spec.benchmark, set()).update((s, p) for s, p, _key in chunks[index])
        inputs = {
            name: read_places(plans[name], entry.inputs[name].classifier.preprocessing, wanted)
            for name, wanted in needed.items()
        }
        for spec, task, chunks, store, mine in jobs:
            classifier = entry.inputs[spec.benchmark].classifier
            owned = sum(self.group.owns(i) for i in range(len(chunks)))  # this process's (earlier ones done)
            with self._progress(f"{entry.key} probe {spec.name}", owned, "chunk", owned - len(mine)) as bar:
                for index in mine:
                    found = inputs[spec.benchmark]
                    rows = keyed_rows(found, chunks[index])
                    pixels = torch.stack([r[0] for r in rows]).to(classifier.device)
                    labels = torch.tensor([r[1] for r in rows], dtype=torch.int64, device=classifier.device)
                    ids = torch.tensor([r[2] for r in rows], dtype=torch.int64, device=classifier.device)
                    partial = task.run(classifier, pixels, labels, ids, self.seed, dict(spec.params))
                    save_tensors_atomic(store.path(index), partial)
                    bar.update(1)
            store.mark_complete(self.group.rank, len(chunks), sum(len(c) for c in chunks))
        self.group.barrier()
        if not self.group.is_main:
            return {}
        merged: dict[str, Any] = dict(skipped)
        for spec, task, chunks, store, _mine in jobs:
            missing = store.missing(len(chunks))
            if missing:
                raise RuntimeError(f"probe {spec.name}: chunks {missing[:10]} were never written.")
            if not chunks:
                merged[spec.name] = {"skipped": "no images were selected", "benchmark": spec.benchmark}
                continue
            partials = [load_tensors(store.path(i)) for i in range(len(chunks))]
            try:
                value = json_safe(task.merge(partials, confidence_level=self.uncertainty.confidence_level))
            except ProbeNotApplicable as reason:  # e.g. PGD: none of its images left to attack
                logger.warning("probe %s of %s not run: %s", spec.name, entry.key, reason)
                merged[spec.name] = {"skipped": str(reason), "benchmark": spec.benchmark}
                continue
            value.update({"benchmark": spec.benchmark, "params": json_safe(dict(spec.params))})
            merged[spec.name] = value
        # In the suite's order.
        return {spec.name: merged[spec.name] for spec in self.suite.probes if spec.name in merged}

    # ---------------------------------------------------------------------------------------------------- run
    def run(self) -> dict[str, Any]:
        """Run every model on every benchmark and probe, then analyse (`analysis.analyze`, once, on the predictions
        files) and write results.json and the report (rank 0)."""
        # load_suite has checked that every probe reads a clean classification benchmark of the suite.
        plans = self._plans()
        models = self._load_models()
        lock, threads = RunLock(self.work, self.output), torch.get_num_threads()
        try:
            if self.config.num_threads is not None:
                torch.set_num_threads(self.config.num_threads)
            if self.group.is_main:
                try:
                    lock.acquire()
                except RunFolderBusy as error:
                    raise EvaluationError(str(error)) from None
            self._prepare_folder()
            return self._run(plans, models)
        finally:
            lock.release()
            torch.set_num_threads(threads)

    def _run(self, plans: dict[str, StreamPlan], models: list[ModelEntry]) -> dict[str, Any]:
        started = time.perf_counter()
        results = new_record(
            version=__version__,
            suite=self.suite.to_dict(),
            seed=self.seed,
            settings=self.settings,
            device=self.group.device,
            num_processes=self.group.world_size,
            models=[entry.describe() for entry in models],
            uncertainty=self.uncertainty.to_dict(),
        )
        frames: dict[str, dict[str, Predictions]] = {}  # model key -> benchmark -> predictions file (rank 0)
        progress = RunProgress(
            self.work,
            self.group.rank,
            self.group.world_size,
            self._expected_samples(models, plans) if self.group.is_main and self.config.progress else None,
            self.config.progress,
        )
        for entry in models:
            frames[entry.key] = self._run_benchmarks(entry, plans, results, progress)
            probe_started = time.perf_counter()
            probes = {}
            if self.suite.probes:
                selections = (
                    select_probe_places(self.suite.probes, frames[entry.key], self.seed)
                    if self.group.is_main
                    else None
                )
                probes = self._run_probes(entry, plans, self.group.broadcast(selections))
            if self.group.is_main:
                results["timing"][entry.key]["probes"] = time.perf_counter() - probe_started
                results["probes"][entry.key] = probes
                self._write_results(results)
        progress.close()
        results["complete"] = True
        results["wall_seconds"] = time.perf_counter() - started
        if self.group.is_main:
            # The run's own settings are those it recorded (`run_settings`), so none are passed: given settings would
            # also recompute the probes' per-point intervals, which the probes' merge has just computed.
            analyze([results], frames=frames, check_other_protocols=self.config.check_other_protocols).store(
                [results]
            )
            if self.config.report:
                written = write_report(results, self.output)
                results["figures"] = written.get("figures", {})
            self._write_results(results)
            if self.config.progress:
                print(summary_table(results))
                for line in skipped_lines(results, self.output / "results.json"):
                    print(line)
                report = f"; report: {self.output / 'report.html'}" if self.config.report else ""
                print(f"results: {self.output / 'results.json'}{report}")
        self.group.barrier()
        return results

    def _run_benchmarks(
        self, entry: ModelEntry, plans: dict[str, StreamPlan], results: dict[str, Any], progress: RunProgress
    ) -> dict[str, Predictions]:
        """One model on every benchmark: every process streams its chunks; rank 0 merges them, records each
        benchmark and its metrics and summary in `results`, and returns the predictions files."""
        # channels-last convolutions are up to 2x faster on CPUs and GPUs (as timm's validate.py
        # --channels-last); attention layers are unaffected.
        entry.classifier.to(memory_format=torch.channels_last)
        models_by_benchmark: dict[str, torch.nn.Module] = {
            name: torch.compile(given.classifier) if self.config.compile else given.classifier
            for name, given in entry.inputs.items()
        }
        frames: dict[str, Predictions] = {}
        timing: dict[str, float] = {}
        metrics: dict[str, Any] = {name: {"skipped": reason} for name, reason in entry.skipped.items()}
        summary: dict[str, Any] = {}
        for name, plan in plans.items():
            if name in entry.skipped:
                continue
            begin = time.perf_counter()
            self._run_stream(entry, name, plan, models_by_benchmark[name], progress)
            self.group.barrier()
            if self.group.is_main:
                frame, report, num_items = self._merge_stream(entry, name, plan)
                frames[name] = frame
                source = plan.source.describe()
                record = results["benchmarks"].get(name, {}).get("protocol") or protocol_record(
                    plan.benchmark, self.protocols[name], source
                )
                record.setdefault("models", {})[entry.key] = entry.inputs[name].to_dict()
                results["benchmarks"][name] = benchmark_record(
                    plan.benchmark,
                    source,
                    num_samples=frame.num_rows,
                    num_source_items=num_items,
                    skipped=report.to_dict(),
                    options=plan.options,
                    protocol=record,
                    subset=self.subsets[name],
                )
                results["predictions"].setdefault(entry.key, {})[name] = predictions_path(entry.key, name)
            timing[name] = time.perf_counter() - begin
        if self.group.is_main:
            for name, frame in frames.items():
                clean = clean_of_generated(
                    frame, frames.get(self.benchmarks[name].clean or ""), plans[name].generated is not None
                )
                protocol = self.protocols[name]
                metrics[name] = json_safe(benchmark_metrics(self.benchmarks[name], frame, clean, protocol))
                summary.update(summary_headlines(self.benchmarks[name], metrics[name], protocol))
            results["metrics"][entry.key] = metrics
            results["timing"][entry.key] = timing
            results["summary"][entry.key] = summary
        return frames

    @staticmethod
    def _expected_samples(models: list[ModelEntry], plans: dict[str, StreamPlan]) -> int | None:
        """Samples of the whole run (every model's benchmarks), where every benchmark's count is known."""
        counts = [
            plan.expected_samples()
            for entry in models
            for name, plan in plans.items()
            if name not in entry.skipped
        ]
        return None if any(count is None for count in counts) else sum(counts)  # type: ignore[arg-type]

    def _write_results(self, results: dict[str, Any]) -> None:
        write_json_atomic(self.output / "results.json", json_safe(results))


def evaluate(config: EvaluationConfig | None = None, **kwargs: Any) -> dict[str, Any]:
    """Run an evaluation (see `EvaluationConfig`; keyword arguments build one) and return its results dict."""
    if config is None:
        config = EvaluationConfig(**kwargs)
    elif kwargs:
        config = EvaluationConfig(**{**asdict(config), **kwargs})
    return Runner(config).run()


__all__ = ["CHUNK_LAYOUT", "Runner", "evaluate"]
