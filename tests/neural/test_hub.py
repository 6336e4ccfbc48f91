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
               BLEUCLI_CACHE=str(tmp_path / "cache"), HF_HUB_DISABLE_TELEMETRY="1")  # fmt: skip
    env.update(extra)
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
        assert "not downloaded and downloads are off (HF_HUB_OFFLINE=1)" in line
        assert "unset HF_HUB_OFFLINE to download it here" in line


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


def _closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # closed again when the probe is


def _imports_torch(stderr: str) -> bool:
    """Whether ``python -X importtime`` reported importing torch."""
    return any(line.rstrip().endswith("| torch") for line in stderr.splitlines())


@pytest.mark.serial  # a wall-clock bound
def test_an_unreachable_hub_is_said_once_at_once_with_what_to_do(toys, tmp_path) -> None:
    """First contact: no model, no hub. One line within a few seconds (it was 27 s of ten
    "Retrying in 8s" lines, then a false "offline" and advice to run `models download`,
    which printed the same line), naming the mirror, the local folder and `models path`."""
    import time

    with Hub() as hub:
        registry = publish(hub, toys["regression"], tmp_path)
    env = env_for(hub, registry, tmp_path, HF_ENDPOINT=f"http://127.0.0.1:{_closed_port()}")
    for args in (
        [REF, "-i", HYP, "--source", SRC, "-m", "comet", "--comet-model", "toy-comet"],
        ["models", "download", "toy-comet"],
    ):
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "bleucli", *args],
            capture_output=True, text=True, env=env, cwd=ROOT,
        )  # fmt: skip
        assert done.returncode == 1 and done.stdout == ""
        assert time.monotonic() - started < 5
        assert not _imports_torch(done.stderr)
        (line,) = [x for x in done.stderr.splitlines() if not x.startswith("import time:")]
        assert "cannot be reached (connection refused)" in line, line
        assert "HF_ENDPOINT" in line and "--comet-model DIR" in line
        assert "bleucli models path toy-comet" in line and "OFFLINE" not in line


def test_neural_mistakes_are_said_before_torch_is_imported(toys, tmp_path) -> None:
    """A missing source (it used to try the download first), quality estimation without a
    source (it said "no references"), a damaged checkpoint: one line, torch not imported."""
    import shutil

    with Hub() as hub:
        registry = publish(hub, toys["regression"], tmp_path)
        env = env_for(hub, registry, tmp_path)
        damaged = tmp_path / "damaged"
        shutil.copytree(toys["regression"].parents[1], damaged)
        (damaged / "checkpoints" / "model.ckpt").write_bytes(b"not a zip archive")
        cases = [
            ([REF, "-i", HYP, "-m", "comet", "--comet-model", "toy-comet"],
             "-m comet: neural metrics read the source sentences: give --source FILE"),
            (["-i", HYP, "-m", "cometkiwi", "--cometkiwi-model", str(damaged)],
             "-m cometkiwi: reference-free neural metrics read the source sentences: give --source FILE"),
            ([REF, "-i", HYP, "--source", SRC, "-m", "comet", "--comet-model", str(damaged)],
             "not a checkpoint torch can read"),
        ]  # fmt: skip
        for args, message in cases:
            done = subprocess.run(
                [sys.executable, "-X", "importtime", "-m", "bleucli", *args],
                capture_output=True, text=True, env=env, cwd=ROOT,
            )  # fmt: skip
            assert done.returncode == 1, done.stderr[-500:]
            assert not _imports_torch(done.stderr), args
            (line,) = [x for x in done.stderr.splitlines() if not x.startswith("import time:")]
            assert message in line, line
        assert not hub.requests  # nothing was fetched for any of them
