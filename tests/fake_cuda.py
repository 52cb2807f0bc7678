"""CUDA tensors emulated on the CPU, so that a CPU-only CI catches code that mixes devices.

Bugs that only appear when tensors live on a GPU (a CPU tensor meeting a CUDA tensor in an op, `.numpy()` on a CUDA
tensor, a CPU tensor indexed by CUDA indices) pass unnoticed on a machine without one. Inside `fake_cuda()`:

- `tensor.to("cuda")`, `tensor.cuda()`, `module.to("cuda")` and factories given `device="cuda"` (`torch.zeros`,
  `torch.arange`, `torch.tensor`, ...) return a `FakeCudaTensor`: a tensor subclass that holds a plain CPU tensor
  and computes with CPU kernels, but reports device `FAKE_CUDA`. That is the "meta" device: a PyTorch build
  without a GPU cannot make a tensor that reports "cuda" (autograd would look for the CUDA device guard), and no
  real tensor of the code under test lives on "meta". `device=x.device` therefore stays on the fake device. Ops
  on fake CUDA tensors return fake CUDA tensors (autograd included); `.cpu()` and `.to("cpu")` return plain CPU
  tensors; `.item()`, `float(...)` and `.tolist()` work as they do on CUDA.
- every aten op that involves a fake CUDA tensor is checked against what PyTorch's CUDA kernels accept. A breach
  is recorded in the `DeviceRecorder` that `fake_cuda()` yields, with the op and the hf_vitrobust source lines that
  led to it, and the op still runs (on the CPU), so one run lists every breach instead of stopping at the first.

The rules, as on a real GPU:
- allowed: a CPU 0-dim tensor in an op with CUDA tensors (CUDA kernels take it as a scalar); a CUDA tensor indexed,
  read or written, by CPU index tensors (PyTorch moves the indices); copies between devices (`copy_`, `.to`).
- rejected: a CPU tensor with at least one dimension in an op with a CUDA tensor; a CPU tensor indexed by CUDA
  indices; CPU values (not 0-dim) written into a CUDA tensor through indexing; `.numpy()` or `__array__` (so
  `np.asarray`) on a CUDA tensor.

The values are the CPU's, bit for bit: `F.scaled_dot_product_attention` runs the kernel the CPU would pick (PyTorch
picks by device, and always takes the math path on "meta"), and lazily conjugated tensors (`x.conj()`) are
materialised, since a wrapper would drop the conjugation.

Limits: it checks where tensors are, nothing else. No CUDA kernel runs, so missing CUDA kernels for a dtype, TF32
and other CUDA numerics, memory, streams and asynchrony are out of reach. Code that branches on `tensor.is_cuda` or
`device.type == "cuda"` takes its non-CUDA branch, and `torch.cuda.is_available()` stays False. CPU 0-dim tensors
are allowed in every op, while CUDA takes them only in element-wise ops. Only `device=` keywords and the device
argument of `Tensor.to` / `Tensor.cuda` are recognised; a factory with `device=` makes a new leaf, so
`torch.as_tensor(x, device="cuda")` cuts x's autograd graph. Assigning `.data` of a fake CUDA tensor is refused
(the wrapper would no longer match its values). Real meta tensors cannot be made inside `fake_cuda()`.
`torch.func.vmap`, `grad` and `jvp` work, but `jvp` of `grad` (forward over reverse) crashes the interpreter on
a wrapper subclass (PyTorch 2.14): `hessian_spectrum(hvp="forward_over_reverse")` cannot run under `fake_cuda()`.
"""

from __future__ import annotations

import contextlib
import math
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map_only

FAKE_CUDA = torch.device("meta")
CPU = torch.device("cpu")
REPO_ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIR = REPO_ROOT / "hf_vitrobust"
# Source lines kept per violation, innermost last.
MAX_SOURCE_LINES = 5

aten = torch.ops.aten
_INDEX_PUTS = frozenset({aten.index_put.default, aten.index_put_.default})


@dataclass(frozen=True)
class Violation:
    """One op a CUDA run would reject: `kind` of breach, the aten `op` (with the CPU operands' shapes) and
    `source`, the hf_vitrobust lines on the call stack (innermost last; the caller's line if none)."""

    kind: str
    op: str
    source: tuple[str, ...]

    def __str__(self) -> str:
        lines = [f"{self.kind}: {self.op}", *(f"    at {line}" for line in self.source)]
        return "\n".join(lines)


class DeviceRecorder:
    """The violations seen inside one `fake_cuda()` block, each once, in the order first seen."""

    def __init__(self) -> None:
        self._counts: dict[Violation, int] = {}

    @property
    def violations(self) -> list[Violation]:
        return list(self._counts)

    def record(self, kind: str, op: str) -> None:
        violation = Violation(kind, op, _source_lines())
        self._counts[violation] = self._counts.get(violation, 0) + 1

    def report(self) -> str:
        """Every violation with its count and source lines, for an assertion message."""
        if not self._counts:
            return "no device violations"
        entries = [f"[{count}x] {violation}" for violation, count in self._counts.items()]
        return f"{len(entries)} device violation(s):\n" + "\n".join(entries)


# The recorders of the open `fake_cuda()` blocks; the innermost one records.
_RECORDERS: list[DeviceRecorder] = []


def _record(kind: str, op: str) -> None:
    if _RECORDERS:
        _RECORDERS[-1].record(kind, op)


def _source_lines() -> tuple[str, ...]:
    """`path:line code` of the hf_vitrobust frames on the stack, or of the innermost frame of the caller (a test)
    when the breach happens outside the package."""
    frames = traceback.extract_stack()
    package = [frame for frame in frames if Path(frame.filename).is_relative_to(PACKAGE_DIR)]
    if not package:
        this_file = str(Path(__file__).resolve())
        outside = [f for f in frames if f.filename != this_file and "/torch/" not in f.filename]
        package = outside[-1:]
    return tuple(_describe(frame) for frame in package[-MAX_SOURCE_LINES:])


def _describe(frame: traceback.FrameSummary) -> str:
    path = Path(frame.filename)
    name = path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path
    return f"{name}:{frame.lineno} {frame.line}"


class FakeCudaTensor(torch.Tensor):
    """A tensor that reports device `FAKE_CUDA` and holds its values in the plain CPU tensor `elem`."""

    elem: torch.Tensor

    @staticmethod
    def __new__(cls, elem: torch.Tensor) -> FakeCudaTensor:
        # A wrapper does not carry the lazy conjugate / negative bits of what it wraps, and the ops it dispatches
        # would then skip them: `x.conj()` is materialised instead (a copy, not a view).
        elem = elem.resolve_conj().resolve_neg()
        wrapper = torch.Tensor._make_wrapper_subclass(
            cls,
            elem.shape,
            strides=elem.stride(),
            storage_offset=elem.storage_offset(),
            dtype=elem.dtype,
            layout=elem.layout,
            device=FAKE_CUDA,
        )
        wrapper.elem = elem
        return wrapper

    def __repr__(self) -> str:
        return f"FakeCudaTensor({self.elem!r})"

    # Work on a CUDA tensor, but refuse a tensor subclass or a tensor on "meta": answered from the CPU values.
    def tolist(self) -> Any:
        return self.elem.tolist()

    def __format__(self, format_spec: str) -> str:
        return self.elem.__format__(format_spec)

    # A traceable wrapper subclass: `Module._apply` (`module.to(...)`, `.float()`, ...) then swaps whole parameter
    # objects instead of assigning `param.data`, which would change the wrapper's dtype and strides but not `elem`.
    def __tensor_flatten__(self) -> tuple[list[str], None]:
        return ["elem"], None

    @staticmethod
    def __tensor_unflatten__(
        inner: dict[str, torch.Tensor], meta: None, size: Any, stride: Any
    ) -> FakeCudaTensor:
        return FakeCudaTensor(inner["elem"])

    # Python-level calls see a plain tensor (the function mode of `fake_cuda()` still sees them all).
    __torch_function__ = torch._C._disabled_torch_function_impl

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        _check_devices(func, args, kwargs)
        target = kwargs.get("device")
        if target is not None and torch.device(target) == FAKE_CUDA:
            kwargs = {**kwargs, "device": CPU}
        out = func(*_unwrap(args), **_unwrap(kwargs))
        if (
            torch.Tag.inplace_view in func.tags
        ):  # `unsqueeze_`, `t_`, `resize_`, ...: the CPU values changed shape
            with torch._C._DisableTorchDispatch():
                func(*args, **kwargs)  # the wrapper's meta kernel: its sizes and strides follow, in place
            return args[0]
        if target is not None and torch.device(target).type == "cpu":
            return out  # `.cpu()`, `.to("cpu")`, `torch.zeros_like(x, device="cpu")`
        return _wrap(out)


def _unwrap(tree: Any) -> Any:
    return tree_map_only(FakeCudaTensor, _values_in_sync, tree)


def _values_in_sync(tensor: FakeCudaTensor) -> torch.Tensor:
    """`tensor.elem`, after checking that it still matches the wrapper: `param.data = other` replaces the wrapper's
    dtype, shape and strides but not `elem`, and the results would be silently wrong."""
    elem = tensor.elem
    if (tensor.dtype, tensor.shape, tensor.stride()) != (elem.dtype, elem.shape, elem.stride()):
        raise RuntimeError(
            f"fake_cuda cannot follow this: a FakeCudaTensor ({tensor.dtype}, {tuple(tensor.shape)}, "
            f"{tensor.stride()}) no longer matches its CPU values ({elem.dtype}, {tuple(elem.shape)}, "
            f"{elem.stride()}); do not assign `.data` of a fake CUDA tensor."
        )
    return elem


def _wrap(tree: Any) -> Any:
    return tree_map_only(
        torch.Tensor, lambda t: t if isinstance(t, FakeCudaTensor) else FakeCudaTensor(t), tree
    )


def _check_devices(func, args: tuple, kwargs: dict) -> None:
    """Record what a CUDA kernel would reject in `func(*args, **kwargs)`, where some operand is fake CUDA."""
    tensors = [leaf for leaf in tree_flatten((args, kwargs))[0] if isinstance(leaf, torch.Tensor)]
    cpu = [tensor for tensor in tensors if not isinstance(tensor, FakeCudaTensor)]
    if (
        not cpu or func is aten.copy_.default
    ):  # copies between devices are fine (`cuda_tensor[:2] = cpu_tensor`)
        return
    name = str(func)
    if func is aten.index.Tensor:
        if not isinstance(args[0], FakeCudaTensor):
            _record("cpu tensor indexed by cuda indices", name)
    elif func in _INDEX_PUTS:
        values = args[2]
        if not isinstance(args[0], FakeCudaTensor):
            _record("cpu tensor written through cuda indices or values", name)
        elif not isinstance(values, FakeCudaTensor) and values.dim() > 0:
            _record("cpu values written into a cuda tensor", f"{name} values {tuple(values.shape)}")
    else:
        shapes = [tuple(tensor.shape) for tensor in cpu if tensor.dim() > 0]
        if shapes:
            _record("cpu tensor in an op with cuda tensors", f"{name} cpu shapes {shapes}")


def _is_cuda_device(device: Any) -> bool:
    return isinstance(device, str | torch.device) and torch.device(device).type == "cuda"


def _is_cuda_or_fake(device: Any) -> bool:
    """Whether `device` names CUDA or the fake CUDA device (what `device=x.device` passes for a fake tensor)."""
    return _is_cuda_device(device) or (
        isinstance(device, str | torch.device) and torch.device(device) == FAKE_CUDA
    )


def _new_fake(tree: Any) -> Any:
    """The tensors of a factory's CPU result as fake CUDA leaves (with the factory's requires_grad)."""
    return tree_map_only(
        torch.Tensor, lambda t: FakeCudaTensor(t.detach()).requires_grad_(t.requires_grad), tree
    )


def _attention_as_on_the_cpu(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attn_mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    *,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> torch.Tensor:
    """`F.scaled_dot_product_attention` with the kernel the CPU would pick. PyTorch picks it by the query's
    device, and for "meta" always takes the math path, which rounds differently from the CPU's fused flash kernel."""
    settings = {"dropout_p": dropout_p, "is_causal": is_causal, "scale": scale}
    # The choice depends on which inputs require grad, which the wrapped CPU tensors do not carry.
    stand_ins = tree_map_only(
        FakeCudaTensor,
        lambda t: t.elem.detach().requires_grad_(t.requires_grad),
        (query, key, value, attn_mask),
    )
    choice = aten._fused_sdp_choice(*stand_ins, **settings, enable_gqa=enable_gqa)
    if choice != SDPBackend.FLASH_ATTENTION.value or enable_gqa:
        return F.scaled_dot_product_attention(query, key, value, attn_mask, **settings, enable_gqa=enable_gqa)
    if attn_mask is not None and attn_mask.dtype == torch.bool:  # as PyTorch's convert_boolean_attn_mask
        attn_mask = torch.zeros_like(attn_mask, dtype=query.dtype).masked_fill_(~attn_mask, -math.inf)
    return aten._scaled_dot_product_flash_attention_for_cpu(
        query, key, value, attn_mask=attn_mask, **settings
    )[0]


_NUMPY_EXPORTS = frozenset({torch.Tensor.numpy, torch.Tensor.__array__})


class _CudaToFakeDevice(TorchFunctionMode):
    """Python level: `.to("cuda")` and `.cuda()` become `.to(FAKE_CUDA)` (turned into a fake tensor at the aten
    level, which keeps the autograd graph); factories given a CUDA or fake device run on the CPU and return fake
    tensors (`torch.tensor(..., device="meta")` would make a real meta tensor without reaching the aten level);
    `.numpy()` / `__array__` of a fake CUDA tensor is recorded, then answered from the CPU values so the run goes on."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in _NUMPY_EXPORTS and isinstance(args[0], FakeCudaTensor):
            _record(".numpy() of a cuda tensor", func.__name__)
            return func(args[0].elem.detach(), *args[1:], **kwargs)
        if func is F.scaled_dot_product_attention and isinstance(args[0], FakeCudaTensor):
            return _attention_as_on_the_cpu(*args, **kwargs)
        if func is torch.Tensor.cuda:
            kwargs.pop("device", None)
            return args[0].to(FAKE_CUDA, **kwargs)
        if func is torch.Tensor.to:
            if _is_cuda_device(kwargs.get("device")):
                kwargs["device"] = FAKE_CUDA
            if len(args) > 1 and _is_cuda_device(args[1]):
                args = (args[0], FAKE_CUDA, *args[2:])
            return func(*args, **kwargs)
        if _is_cuda_or_fake(kwargs.get("device")):
            return _new_fake(func(*args, **{**kwargs, "device": CPU}))
        return func(*args, **kwargs)


class _FakeCudaFactories(TorchDispatchMode):
    """Aten level: an op asked for `FAKE_CUDA` with no fake CUDA operand (a factory, or a copy of a CPU tensor
    to the device) runs on the CPU and returns fake CUDA tensors. Below autograd, so `.to("cuda")` keeps the graph."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        target = kwargs.get("device")
        operands = tree_flatten((args, kwargs))[0]
        if (
            target is None
            or torch.device(target) != FAKE_CUDA
            or any(isinstance(t, FakeCudaTensor) for t in operands)
        ):
            return func(*args, **kwargs)
        return _wrap(func(*args, **{**kwargs, "device": CPU}))


@contextlib.contextmanager
def fake_cuda() -> Iterator[DeviceRecorder]:
    """Emulate CUDA for the block (see the module docstring) and yield the recorder of its device violations."""
    recorder = DeviceRecorder()
    _RECORDERS.append(recorder)
    try:
        with _CudaToFakeDevice(), _FakeCudaFactories():
            yield recorder
    finally:
        _RECORDERS.pop()


def is_fake_cuda(tensor: Any) -> bool:
    """Whether `tensor` is a tensor on the fake CUDA device."""
    return isinstance(tensor, FakeCudaTensor) and tensor.device == FAKE_CUDA


def cpu_values(tensor: torch.Tensor) -> torch.Tensor:
    """The plain CPU tensor behind a fake CUDA tensor (a CPU tensor is returned as it is)."""
    return tensor.elem if isinstance(tensor, FakeCudaTensor) else tensor
