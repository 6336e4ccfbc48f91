"""The neural model classes by their COMET ``class_identifier`` (re-exported from their
family modules for code that imports them from here)."""

from bleucli.neural.comet import ReferencelessModel, RegressionModel, SentenceEmbeddingModel
from bleucli.neural.model import CometModel, NeuralModel, Prediction, pairwise_by_prediction
from bleucli.neural.xcomet import UnifiedModel, XCometModel

__all__ = [
    "CometModel",
    "NeuralModel",
    "Prediction",
    "ReferencelessModel",
    "RegressionModel",
    "SentenceEmbeddingModel",
    "UnifiedModel",
    "XCometModel",
    "pairwise_by_prediction",
]
