#!/usr/bin/env python3
"""Time re-ranking a neural leaderboard: 20 teams' primaries on a 2,000-line test set scored
with COMET (a toy checkpoint: the model's speed does not matter here), then the leaderboard
recomputed from the stored segment scores, 1,000 bootstrap resamples for the intervals,
rank ranges and clusters, with no model call (checked: no model is loaded).

    python -m scripts.bench_neural_board
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from tests.neural_toy import ROOT, build


def lines(name: str, n: int) -> list[str]:
    base = (ROOT / "examples" / name).read_text(encoding="utf-8").splitlines()
    return [f"{base[i % len(base)]} ({i // len(base)})" for i in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--teams", type=int, default=20)
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    import os

    from starlette.testclient import TestClient

    folder = Path(tempfile.mkdtemp(prefix="bench-board-"))
    os.environ["BLEUCLI_CACHE"] = str(folder / "cache")
    from bleucli.commands.server import add_team, add_testset, init
    from bleucli.neural import load
    from bleucli.server import leaderboard, store
    from bleucli.server.app import create_app
    from bleucli.server.db import connect
    from bleucli.server.worker import work

    model = build(folder / "toy", "regression").parents[1]
    files = {}
    for name, source in (("src", "src.en"), ("ref", "ref.de")):
        files[name] = folder / f"{name}.txt"
        files[name].write_text("\n".join(lines(source, args.lines)) + "\n", encoding="utf-8")
    db = f"sqlite:///{folder / 'board.db'}"
    init(db, None)
    add_testset(db, "news", "en-de", (str(files["ref"]),), str(files["src"]), None,
                ["-m", "comet", "bleu", "--comet-model", str(model)],
                {"visibility": "public", "limit_per_day": 10})  # fmt: skip
    app = create_app(db, max_upload=50_000_000)
    hyps = [lines(name, args.lines) for name in ("hyp.de", "hyp2.de", "ref2.de")]
    with TestClient(app, base_url="http://testserver") as client:
        for team in range(args.teams):
            token = add_team(db, f"team{team}").splitlines()[-1]
            output = [hyps[(team + i) % 3][i] for i in range(args.lines)]  # each team its mix
            answer = client.post(
                "/api/v1/submissions", headers={"Authorization": f"Bearer {token}"},
                data={"testset": "news", "name": "run"},
                files={"hypothesis": ("hyp.txt", ("\n".join(output) + "\n").encode())},
            )  # fmt: skip
            assert answer.status_code == 202, answer.text
    start = time.perf_counter()
    work(db, once=True)
    print(f"scored {args.teams} submissions in {time.perf_counter() - start:.1f} s")
    engine = connect(db)
    testset = store.testset(engine, "news")
    load._LOADED.clear()
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        leaderboard.refresh(engine, testset.id)
        times.append(time.perf_counter() - start)
    assert not load._LOADED, "re-ranking loaded a model"
    board = leaderboard.current(engine, store.testset(engine, "news"))
    assert board["ranked_by"] == "COMET" and len(board["rows"]) == args.teams
    print(f"\n| leaderboard | systems | lines | re-rank (median of {args.runs}) | model calls |")
    print("|---|---|---|---|---|")
    print(f"| COMET, 1,000 resamples | {args.teams} | {args.lines:,} | "
          f"{statistics.median(times):.2f} s | none |")  # fmt: skip
    engine.dispose()


if __name__ == "__main__":
    main()
