"""The model families by the ``class_identifier`` a checkpoint (or a registry entry) names:
where each family's class is, imported only when a model of it is loaded. The registry
checks its entries against these names without importing torch."""

from __future__ import annotations

from importlib import import_module
from typing import Any

#: class_identifier -> "module:Class".
FAMILIES: dict[str, str] = {
    "regression_metric": "bleucli.neural.comet:RegressionModel",
    "referenceless_regression_metric": "bleucli.neural.comet:ReferencelessModel",
    "unified_metric": "bleucli.neural.xcomet:UnifiedModel",
    "xcomet_metric": "bleucli.neural.xcomet:XCometModel",
    "metricx24": "bleucli.neural.metricx:MetricXModel",
}
#: What a registry entry may be: a model of a family, or an encoder models load.
REGISTRY_CLASSES = (*FAMILIES, "encoder")


def family(identifier: str) -> Any:
    """The class of the family ``identifier``."""
    from bleucli.errors import InputError

    target = FAMILIES.get(identifier)
    if target is None:
        raise InputError(
            f"model class {identifier!r} is not one bleucli computes ({', '.join(FAMILIES)})"
        )
    module, _, name = target.partition(":")
    return getattr(import_module(module), name)
