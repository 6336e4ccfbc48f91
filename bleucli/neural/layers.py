"""The pieces COMET puts on top of the encoder, computed in the order unbabel-comet 2.2.7
computes them (the same operations in the same order give the same floating-point
results): the layer mix (softmax or sparsemax weights, optional masked layer norm),
pooling, and the feed-forward head."""

from __future__ import annotations

from typing import Any

from bleucli.errors import ConfigError, InputError
from bleucli.neural import runtime


def sparsemax(x: Any, dim: int = 0) -> Any:
    """Sparsemax (Martins & Astudillo, 2016): the Euclidean projection onto the simplex,
    shifted by the maximum first as entmax does."""
    torch = runtime.torch()
    x = x - x.max(dim=dim, keepdim=True)[0]
    ordered = torch.sort(x, dim=dim, descending=True)[0]
    cumulative = ordered.cumsum(dim) - 1
    ranks = torch.arange(1, x.shape[dim] + 1, dtype=x.dtype, device=x.device)
    support = (ranks * ordered > cumulative).sum(dim=dim).unsqueeze(dim)
    tau = cumulative.gather(dim, support - 1)
    tau /= support.to(x.dtype)
    return torch.clamp(x - tau, min=0)


class LayerMix:
    """``gamma * sum_i w_i * layer_i`` with ``w = softmax(s)`` or ``sparsemax(s)``."""

    def __init__(self, state: dict[str, Any], layers: int, transformation: str, norm: bool) -> None:
        torch = runtime.torch()
        names = [f"layerwise_attention.scalar_parameters.{i}" for i in range(layers)]
        if any(n not in state for n in names) or "layerwise_attention.gamma" not in state:
            raise InputError(f"checkpoint: the layer mix needs {layers} scalar weights and gamma")
        self.weights = torch.cat([state[n].float() for n in names])
        self.gamma = state["layerwise_attention.gamma"].float()
        if transformation == "softmax":
            self.transform = torch.softmax
        elif transformation == "sparsemax":
            self.transform = sparsemax
        else:
            raise ConfigError(
                f"layer_transformation {transformation!r}: expected softmax or sparsemax"
            )
        self.norm = norm

    def to(self, device: Any, dtype: Any) -> LayerMix:
        self.weights = self.weights.to(device=device, dtype=dtype)
        self.gamma = self.gamma.to(device=device, dtype=dtype)
        return self

    def __call__(self, tensors: tuple[Any, ...], mask: Any) -> Any:
        torch = runtime.torch()
        normed = torch.split(self.transform(self.weights, dim=0), split_size_or_sections=1)
        if not self.norm:
            return self.gamma * sum(w * t for w, t in zip(normed, tensors))
        mask_float = mask.float()
        broadcast = mask_float.unsqueeze(-1)
        return self.gamma * sum(
            w * _masked_layer_norm(t, broadcast, mask_float) for w, t in zip(normed, tensors)
        )


def _masked_layer_norm(tensor: Any, broadcast: Any, mask: Any) -> Any:
    torch = runtime.torch()
    batch, _, width = tensor.size()
    masked = tensor * broadcast
    count = mask.sum(1) * width
    mean = (masked.view(batch, -1).sum(1) / count).view(batch, 1, 1)
    variance = (((masked - mean) * broadcast) ** 2).view(batch, -1).sum(1) / count
    return (tensor - mean) / torch.sqrt(variance + 1e-12).view(batch, 1, 1)


def average_pool(ids: Any, embeddings: Any, mask: Any, pad_id: int) -> Any:
    torch = runtime.torch()
    filled = embeddings.float().masked_fill_(ids.eq(pad_id).unsqueeze(-1), 0.0).type_as(embeddings)
    total = torch.sum(filled, 1)
    return total / mask.unsqueeze(-1).expand(embeddings.size()).float().sum(1)


def max_pool(ids: Any, embeddings: Any, pad_id: int) -> Any:
    filled = embeddings.float().masked_fill_(ids.eq(pad_id).unsqueeze(-1), float("-inf"))
    return filled.type_as(embeddings).max(dim=1)[0]


def feed_forward(state: dict[str, Any], prefix: str, hidden: list[int], activation: str,
                 final: str | None, in_dim: int) -> Any:  # fmt: skip
    """COMET's estimator: Linear, activation (and dropout, idle at inference) per hidden
    size, a last Linear, an optional final activation; weights from ``state``."""
    torch = runtime.torch()
    nn = torch.nn

    def act(name: str) -> Any:
        cls = getattr(nn, name.title(), None)
        if cls is None:
            raise ConfigError(f"checkpoint: activation {name!r} is not a torch.nn module")
        return cls()

    sizes = [in_dim, *hidden]
    modules: list[Any] = []
    for a, b in zip(sizes, sizes[1:]):
        modules += [nn.Linear(a, b), act(activation), nn.Dropout(0.0)]
    modules.append(nn.Linear(sizes[-1], 1))
    if final is not None:
        modules.append(act(final))
    head = nn.Sequential(*modules)
    own = {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}
    from bleucli.neural.encoder import _load_exactly

    _load_exactly(head, own, "the estimator")
    return head.eval()
