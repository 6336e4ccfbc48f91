"""Loading COMET's layout: every tensor must come from the file (unbabel-comet loads with
``strict=False``, where a misnamed key keeps random weights), and bad checkpoints get one
clear error naming the file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
import yaml

from bleucli.errors import ConfigError, InputError


def copy(toy: Path, tmp_path: Path) -> Path:
    """A copy of a toy model folder with its encoder beside it (as its hparams name it:
    ``../encoder``, relative to the model folder)."""
    target = tmp_path / toy.parents[1].name
    shutil.copytree(toy.parents[1], target)
    if not (tmp_path / "encoder").exists():
        shutil.copytree(toy.parents[2] / "encoder", tmp_path / "encoder")
    return target


def edit_state(folder: Path, change) -> None:
    file = folder / "checkpoints" / "model.ckpt"
    stored = torch.load(file, weights_only=True)
    change(stored["state_dict"])
    torch.save(stored, file)


def load(folder: Path):
    from bleucli.neural.load import load as load_model

    return load_model(str(folder))


def test_a_misnamed_tensor_is_refused(toys, tmp_path) -> None:
    folder = copy(toys["regression"], tmp_path)
    name = "encoder.model.encoder.layer.0.output.dense.weight"
    edit_state(folder, lambda s: s.__setitem__(name.replace("dense", "dens"), s.pop(name)))
    with pytest.raises(
        InputError, match="does not match its weights.*missing.*layer.0.output.dense"
    ):
        load(folder)


def test_an_extra_tensor_is_refused(toys, tmp_path) -> None:
    folder = copy(toys["referenceless"], tmp_path)
    edit_state(folder, lambda s: s.__setitem__("estimator.extra.weight", torch.zeros(2)))
    with pytest.raises(InputError, match="tensors this model does not use: estimator.extra"):
        load(folder)


def test_layer_mix_weights_must_be_there(toys, tmp_path) -> None:
    folder = copy(toys["unified"], tmp_path)
    edit_state(folder, lambda s: s.pop("layerwise_attention.gamma"))
    with pytest.raises(InputError, match="layer mix needs"):
        load(folder)


def test_unknown_class_and_missing_files(toys, tmp_path) -> None:
    folder = copy(toys["regression"], tmp_path)
    hparams = yaml.safe_load((folder / "hparams.yaml").read_text())
    (folder / "hparams.yaml").write_text(
        yaml.safe_dump({**hparams, "class_identifier": "ranking_metric"})
    )
    with pytest.raises(ConfigError, match="ranking_metric.*is not one bleucli computes"):
        load(folder)
    (folder / "hparams.yaml").unlink()
    with pytest.raises(InputError, match="hparams.yaml is missing"):
        load(folder)
    with pytest.raises(InputError, match="no COMET checkpoint here"):
        load(tmp_path / "nowhere-but-a-folder")


def test_changed_settings_are_another_model_in_the_same_process(toys, tmp_path) -> None:
    """A process keeps the models it loaded; the same weights with other settings beside
    them (hparams.yaml) are loaded again, not served from what the process kept."""
    folder = copy(toys["regression"], tmp_path)
    assert load(folder).model_class == "regression_metric"
    hparams = yaml.safe_load((folder / "hparams.yaml").read_text())
    (folder / "hparams.yaml").write_text(
        yaml.safe_dump({**hparams, "class_identifier": "ranking_metric"})
    )
    with pytest.raises(ConfigError, match="ranking_metric.*is not one bleucli computes"):
        load(folder)


def test_a_pickled_object_is_not_unpickled_from_a_local_file(toys, tmp_path) -> None:
    """A local checkpoint is read with torch's weights-only loader: an object that would
    run code on unpickling is refused, not executed."""
    folder = copy(toys["regression"], tmp_path)
    file = folder / "checkpoints" / "model.ckpt"
    stored = torch.load(file, weights_only=True)
    stored["callback"] = Path("any object")  # not in the weights-only allowlist
    torch.save(stored, file)
    with pytest.raises(
        InputError, match="torch can read safely: it holds Python objects .pathlib.PosixPath."
    ):
        load(folder)


def test_sparsemax_is_a_projection_onto_the_simplex() -> None:
    from bleucli.neural.layers import sparsemax

    generator = torch.Generator().manual_seed(0)
    for _ in range(200):
        x = (
            torch.randn(int(torch.randint(1, 30, (1,), generator=generator)), generator=generator)
            * 3
        )
        p = sparsemax(x, dim=0)
        assert torch.all(p >= 0) and abs(float(p.sum()) - 1) < 1e-5
        support = p > 0
        # on the support, p = x - tau for one tau; off it, x <= tau
        tau = (x[support] - p[support]).mean()
        assert torch.allclose(x[support] - p[support], tau.expand(int(support.sum())), atol=1e-5)
        assert torch.all(x[~support] <= tau + 1e-5)


def test_a_model_folder_moves_and_hparams_yaml_repoints_its_encoder(toys, tmp_path) -> None:
    """A toy folder moved with its encoder beside it works as it was (the checkpoint names
    ``../encoder``); moved alone, it is refused naming hparams.yaml, and editing
    ``pretrained_model`` there is what points it at the encoder again (it changed nothing
    when the checkpoint's own copy of the setting won)."""
    import hashlib

    from bleucli import COMET
    from tests.neural_toy import ROOT

    lines = [(ROOT / "examples" / n).read_text(encoding="utf-8").splitlines()
             for n in ("src.en", "hyp.de", "ref.de")]  # fmt: skip

    def score(folder: Path) -> float:
        metric = COMET(model=str(folder))
        return metric.corpus_score(lines[1], [lines[2]], sources=lines[0]).score

    original = score(toys["regression"].parents[1])
    moved = copy(toys["regression"], tmp_path / "with-encoder")
    assert score(moved) == original
    alone = tmp_path / "alone" / "regression"
    shutil.copytree(toys["regression"].parents[1], alone)
    with pytest.raises(ConfigError, match="hparams.yaml: pretrained_model '../encoder'"):
        from bleucli.neural.preflight import check_model

        check_model(str(alone))
    hparams = yaml.safe_load((alone / "hparams.yaml").read_text())
    hparams["pretrained_model"] = str(toys["regression"].parents[2] / "encoder")
    (alone / "hparams.yaml").write_text(yaml.safe_dump(hparams))
    assert score(alone) == original
    # the weights' hash (the signature's) does not depend on where the toy was built
    digests = {
        hashlib.sha256((folder / "checkpoints" / "model.ckpt").read_bytes()).hexdigest()
        for folder in (toys["regression"].parents[1], moved, alone)
    }
    assert len(digests) == 1
