"""Pinned models from a hub served on 127.0.0.1 (tests/neural/hub_server.py), through the
real download code: download and use, hashes checked, a corrupted file refused, an
interrupted download resumed, offline use of the cache, and `bleucli models` end to end."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.neural.hub_server import Hub
from tests.neural_toy import ROOT

SRC, HYP, REF = (str(ROOT / "examples" / n) for n in ("src.en", "hyp.de", "ref.de"))


def publish(hub: Hub, toy: Path, tmp_path: Path, pin: bool = True) -> Path:
    """Serve the toy regression model as ``tests/toy-comet`` with its encoder as
    ``tests/toy-encoder``; a registry (BLEUCLI_MODELS) naming them."""
    folder = toy.parents[1]
    hparams = yaml.safe_load((folder / "hparams.yaml").read_text())
    encoder = folder / hparams["pretrained_model"]  # relative to the model folder
    hparams["pretrained_model"] = "toy-encoder"  # resolved through the registry
    model_files = {
        "hparams.yaml": yaml.safe_dump(hparams).encode(),
        "checkpoints/model.ckpt": (folder / "checkpoints" / "model.ckpt").read_bytes(),
    }
    encoder_files = {
        name: (encoder / name).read_bytes()
        for name in ("config.json", "tokenizer.json", "tokenizer_config.json")
    }
    for name, data in model_files.items():
        hub.files[("tests/toy-comet", name)] = data
    for name, data in encoder_files.items():
        hub.files[("tests/toy-encoder", name)] = data

    def pins(files: dict[str, bytes]) -> dict[str, str | None]:
        return {n: hashlib.sha256(d).hexdigest() if pin else None for n, d in files.items()}

    registry = {
        "toy-comet": {"metric": "comet", "repo": "tests/toy-comet", "revision": None,
                      "class": "regression_metric", "licence": "mit", "encoder": "toy-encoder",
                      "files": pins(model_files)},
        "toy-encoder": {"metric": None, "repo": "tests/toy-encoder", "revision": None,
                        "class": "encoder", "licence": "mit", "encoder": None,
                        "files": pins(encoder_files)},
    }  # fmt: skip
    path = tmp_path / "models.json"
    path.write_text(json.dumps(registry))
    return path


def env_for(hub: Hub, registry: Path, tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "BLEUCLI_"))}
    env.update(HF_ENDPOINT=hub.url, HF_HOME=str(tmp_path / "hf"), BLEUCLI_MODELS=str(registry),
               BLEUCLI_CACHE=str(tmp_path / "cache"), HF_HUB_DISABLE_TELEMETRY="1", **extra)  # fmt: skip
    return env


def bleucli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bleucli", *args], capture_output=True, text=True, env=env, cwd=ROOT
    )


def test_download_score_and_verify(toys, tmp_path) -> None:
    with Hub() as hub:
        registry = publish(hub, toys["regression"], tmp_path)
        env = env_for(hub, registry, tmp_path)
        done = bleucli(["models", "download", "toy-comet"], env)
        assert done.returncode == 0, done.stderr
        name, folder, digest = done.stdout.strip().split("\t")
        assert name == "toy-comet" and Path(folder, "checkpoints", "model.ckpt").is_file()
        assert (
            digest
            == hashlib.sha256(hub.files[("tests/toy-comet", "checkpoints/model.ckpt")]).hexdigest()
        )
        assert bleucli(["models", "verify", "toy-comet"], env).returncode == 0
        assert bleucli(["models", "path", "toy-comet"], env).stdout.strip() == folder
        # scoring offline from the cache: no request reaches the hub
        before = len(hub.requests)
        scored = bleucli([REF, "-i", HYP, "--source", SRC, "-m", "comet", "--comet-model", "toy-comet",
                          "-b"], {**env, "HF_HUB_OFFLINE": "1"})  # fmt: skip
        assert scored.returncode == 0, scored.stderr
        assert len(hub.requests) == before
        local = bleucli(
            [
                REF,
                "-i",
                HYP,
                "--source",
                SRC,
                "-m",
                "comet",
                "--comet-model",
                str(toys["regression"].parents[1]),
                "-b",
            ],
            env,
        )
        assert scored.stdout == local.stdout  # the same weights, the same number


def test_a_corrupted_download_is_refused_naming_both_hashes(toys, tmp_path) -> None:
    with Hub() as hub:
        registry = publish(hub, toys["regression"], tmp_path)
        hub.damage.add(("tests/toy-comet", "checkpoints/model.ckpt"))
        env = env_for(hub, registry, tmp_path)
        done = bleucli(["models", "download", "toy-comet"], env)
        assert done.returncode == 1
        (line,) = done.stderr.strip().splitlines()
        assert (
            "checkpoints/model.ckpt has SHA-256" in line
            and "registry pins" in line
            and "--force" in line
        )
        hub.damage.clear()
        again = bleucli(["models", "download", "toy-comet", "--force"], env)
        assert again.returncode == 0, again.stderr


def test_an_interrupted_download_is_completed_and_verified(toys, tmp_path) -> None:
    """A transfer cut short (the connection dropped after 50 kB) is taken up again by
    huggingface_hub and the file that results passes its hash; nothing partial is used."""
    with Hub() as hub:
        registry = publish(hub, toys["regression"], tmp_path)
        env = env_for(hub, registry, tmp_path)
        hub.cut[("tests/toy-comet", "checkpoints/model.ckpt")] = 50_000
        done = bleucli(["models", "download", "toy-comet"], env)
        assert done.returncode == 0, done.stderr
        fetches = [r for r in hub.requests if r[0] == "GET" and r[1].endswith("model.ckpt")]
        assert len(fetches) >= 2, "the cut transfer was taken up again"
        assert bleucli(["models", "verify", "toy-comet"], env).returncode == 0


def test_offline_without_the_model_says_how_to_get_it(toys, tmp_path) -> None:
    with Hub() as hub:
        registry = publish(hub, toys["regression"], tmp_path)
        env = env_for(hub, registry, tmp_path, HF_HUB_OFFLINE="1")
        done = bleucli(
            [REF, "-i", HYP, "--source", SRC, "-m", "comet", "--comet-model", "toy-comet"], env
        )
        assert done.returncode == 1 and not hub.requests
        (line,) = done.stderr.strip().splitlines()
        assert "not downloaded" in line and "bleucli models download toy-comet" in line


def test_first_download_pins_an_unpinned_model(toys, tmp_path) -> None:
    """A registry entry without hashes is pinned by its first download: a changed file on
    the hub afterwards is refused."""
    with Hub() as hub:
        registry = publish(hub, toys["regression"], tmp_path, pin=False)
        env = env_for(hub, registry, tmp_path)
        assert bleucli(["models", "download", "toy-comet"], env).returncode == 0
        lock = json.loads((tmp_path / "cache" / "models.lock.json").read_text())
        assert lock["tests/toy-comet@main"]["checkpoints/model.ckpt"]
        key = ("tests/toy-comet", "checkpoints/model.ckpt")
        hub.files[key] = hub.files[key][:-4] + b"\0\0\0\0"
        changed = bleucli(["models", "download", "toy-comet", "--force"], env)
        assert changed.returncode == 1 and "SHA-256" in changed.stderr


@pytest.mark.parametrize(
    "command", [["models", "path", "toy-comet"], ["models", "verify", "toy-comet"]]
)
def test_models_commands_on_a_model_not_downloaded(toys, tmp_path, command) -> None:
    with Hub() as hub:
        registry = publish(hub, toys["regression"], tmp_path)
        done = bleucli(command, env_for(hub, registry, tmp_path))
        assert done.returncode == 1 and "not downloaded" in (done.stderr + done.stdout)
