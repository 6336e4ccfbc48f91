"""The optional stack (torch, transformers, tokenizers) imported on demand with one clear
error when it is missing, and the settings that make a run reproducible."""

from __future__ import annotations

from typing import Any

from bleucli.errors import ConfigError, MissingExtraError

#: --comet-precision values -> torch dtype names.
PRECISIONS = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}


#: Set by the command line when it (not the user) pinned BLAS to one thread.
CLI_PINNED_THREADS = "BLEUCLI_PINNED_BLAS_THREADS"


def torch() -> Any:
    """The torch module, or an error naming the extra to install."""
    try:
        import torch as module
    except ImportError:
        raise MissingExtraError("neural metrics (COMET)", "neural", "torch") from None
    _use_all_cores(module)
    return module


def _use_all_cores(module: Any) -> None:
    """Every core for the encoder, unless the user limited threads: the command line pins
    BLAS to one thread for its small statistics products, which made a model run ~1.7x
    slower on two cores. Scores do not depend on the thread count (tests/neural)."""
    import os

    if os.environ.pop(CLI_PINNED_THREADS, None) is None:
        return
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    module.set_num_threads(max(1, cores))


def require(module: str) -> Any:
    """Import ``module`` of the neural extra (transformers, tokenizers, yaml)."""
    from importlib import import_module

    try:
        return import_module(module)
    except ImportError:
        raise MissingExtraError("neural metrics (COMET)", "neural", module.split(".")[0]) from None


def device(name: str) -> Any:
    """A torch device from ``cpu`` / ``cuda`` / ``cuda:N``, refused when it is not there."""
    torch_ = torch()
    if name == "cpu":
        return torch_.device("cpu")
    if name.startswith("cuda"):
        if not torch_.cuda.is_available():
            raise ConfigError(f"device {name!r}: no CUDA device is available here; use cpu")
        return torch_.device(name)
    raise ConfigError(f"device {name!r}: expected cpu, cuda or cuda:N")


def dtype(precision: str, where: Any) -> Any:
    """The torch dtype of a precision name, checked against the device (fp16 only on GPU:
    CPU half-precision kernels are slow and inexact)."""
    torch_ = torch()
    if precision not in PRECISIONS:
        raise ConfigError(f"precision {precision!r}: expected one of {', '.join(PRECISIONS)}")
    if precision == "fp16" and where.type == "cpu":
        raise ConfigError(
            "precision fp16 needs a GPU (--comet-device cuda); on CPU use fp32 or bf16"
        )
    return getattr(torch_, PRECISIONS[precision])


def deterministic(where: Any) -> None:
    """Deterministic kernels on a GPU (cuBLAS workspace, no TF32, deterministic
    algorithms), so one signature gives the same numbers run to run. The CPU kernels the
    models use are deterministic already, and switching torch's flag imports its compiler
    (~1.6 s of start-up), so CPU runs leave it alone."""
    import os

    if where.type != "cuda":
        return
    torch_ = torch()
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch_.backends.cuda.matmul.allow_tf32 = False
    torch_.backends.cudnn.allow_tf32 = False
    torch_.backends.cudnn.benchmark = False
    torch_.use_deterministic_algorithms(True, warn_only=True)
