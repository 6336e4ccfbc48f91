"""The optional stack (torch, transformers, tokenizers) imported on demand with one clear
error when it is missing, and the settings that make a run reproducible."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from bleucli.errors import ConfigError, InputError, MissingExtraError

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


# -- a run's confinement (the evaluation server) -----------------------------------------------


class TimeLimitExceeded(InputError):
    """A run's neural scoring went past the time it was allowed."""


@dataclass
class Confinement:
    """How a run is confined: ``isolated`` -- its hypotheses share no cache with anything
    (not the sources' and references' embeddings, not another run's), so the time it takes
    says nothing about what it has in common with them (the server's blind sets: a
    cached line scored faster, and a team counted its lines equal to the hidden
    references); ``deadline`` -- ``time.monotonic()`` past which it stops, and ``seconds``,
    the limit that deadline came from."""

    isolated: bool = False
    deadline: float | None = None
    seconds: float | None = None


_CONFINEMENT = Confinement()


def confinement() -> Confinement:
    return _CONFINEMENT


@contextmanager
def confined(isolated: bool = True, seconds: float | None = None) -> Iterator[Confinement]:
    """Score within a confinement (see :class:`Confinement`); one run at a time."""
    global _CONFINEMENT
    previous = _CONFINEMENT
    deadline = time.monotonic() + seconds if seconds is not None else None
    _CONFINEMENT = Confinement(isolated, deadline, seconds)
    try:
        yield _CONFINEMENT
    finally:
        _CONFINEMENT = previous


def check_time() -> None:
    """Stop a confined run past its deadline (called between batches)."""
    limit = _CONFINEMENT
    if limit.deadline is not None and time.monotonic() > limit.deadline:
        raise TimeLimitExceeded(
            f"scoring took longer than the {limit.seconds:g} s a run may take on this server"
        )


def release_memory() -> None:
    """Give freed memory back to the system after a large run: Python's collector, then
    glibc's ``malloc_trim`` (torch's CPU buffers go back to malloc, which keeps them)."""
    import contextlib
    import ctypes
    import gc

    gc.collect()
    with contextlib.suppress(OSError, AttributeError):  # not glibc: nothing more to do
        ctypes.CDLL("libc.so.6").malloc_trim(0)
