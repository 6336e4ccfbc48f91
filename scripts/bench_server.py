"""Benchmark rows of the evaluation server (docs/server.md), on real WMT22 en-de data:

1. a 2,037-line submission scored with BLEU, chrF and TER and visible: seconds from the
   upload's 202 to ``"status": "scored"`` (p50, p95 over --samples uploads; one worker);
2. 100 concurrent uploads of 2,037-line files: every one acknowledged and scored, no 5xx;
3. a test set with 1,000 submissions from 50 teams: leaderboard API and page latency (p95),
   and the time to re-cluster 50 systems (paired bootstrap, 1,000 resamples) for a new
   primary;
4. the server-side gate's verdict after an upload; 5. a series of 1,000 runs;
6. an anonymous leaderboard read while 5 teams each run gates at the cap (1,000 resamples):
   p95 (the web process only enqueues; the workers resample);
7. a deadline, simulated on PostgreSQL with 2 workers: 200 teams x 3 submissions of 2,037
   lines arriving within 5 minutes -- every 202 scored exactly once, no 5xx, the
   leaderboard's p95 throughout, and the time to drain the queue.

    python scripts/bench_server.py [--data ../shared/data/wmt22/en-de] [--db sqlite|postgresql://...]
        [--deadline-db postgresql://...]   # default: a PostgreSQL started here (Debian's)

A real ``bleucli server run`` on 127.0.0.1 (loopback only, bounded loops). Writes
scripts/BENCHMARKS-server.md.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def bleucli(*args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "bleucli", *args], capture_output=True, text=True, check=True
    )
    return proc.stdout


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def start(db: str, workers: int, port: int) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", "bleucli", "server", "run", "--db", db, "--port", str(port), "--workers", str(workers)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    for _ in range(300):
        try:
            requests.get(f"http://127.0.0.1:{port}/api/v1/testsets", timeout=1)
            return process
        except requests.RequestException:
            time.sleep(0.1)
    raise SystemExit("the server did not start")


def stop(process: subprocess.Popen) -> None:
    import signal

    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=120)


def wait(url: str, token: str, submission: int, timeout: float = 600) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = requests.get(
            f"{url}/api/v1/submissions/{submission}",
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        ).json()
        if state["status"] in ("scored", "failed"):
            return state
        time.sleep(0.02)
    raise SystemExit(f"submission {submission} not scored in {timeout} s")


def timed_get(url: str, headers: dict[str, str] | None = None) -> float:
    """Seconds for one GET that must answer 200."""
    started = time.perf_counter()
    assert requests.get(url, headers=headers, timeout=60).status_code == 200
    return time.perf_counter() - started


def upload(url: str, token: str, data: bytes, name: str) -> requests.Response:
    return requests.post(
        f"{url}/api/v1/submissions", headers={"Authorization": f"Bearer {token}"},
        data={"testset": "wmt22", "name": name}, files={"hypothesis": ("h.txt", data)}, timeout=300,
    )  # fmt: skip


def gate_verdict(url: str, token: str, run: int, options: dict) -> dict:
    """Queue a gate and poll its job until a worker has done it: the verdict."""
    headers = {"Authorization": f"Bearer {token}"}
    answer = requests.post(f"{url}/api/v1/submissions/{run}/gate", headers=headers, json=options,
                           timeout=60)  # fmt: skip
    assert answer.status_code == 202, answer.text
    while True:
        state = requests.get(url + answer.json()["url"], headers=headers, timeout=60).json()
        if state["status"] in ("done", "failed"):
            assert state["status"] == "done", state
            return state["result"]
        time.sleep(0.02)


def gate_load(db: str, url: str, port: int, tokens: list[str], outputs: list[bytes]) -> list:
    """Anonymous leaderboard reads while 5 teams gate at the cap, again and again."""
    import threading

    server = start(db, 1, port)
    runs = {}
    for team in range(10, 15):
        ids = []
        for k in range(2):
            answer = requests.post(
                f"{url}/api/v1/submissions", headers={"Authorization": f"Bearer {tokens[team]}"},
                data={"testset": "wmt22", "name": f"load {k}", "series": "load"},
                files={"hypothesis": ("h.txt", outputs[k % len(outputs)])}, timeout=300,
            )  # fmt: skip
            ids.append(answer.json()["id"])
            wait(url, tokens[team], ids[-1])
        runs[team] = ids[-1]
    done = threading.Event()
    gates = [0]

    def gating(team: int) -> None:
        while not done.is_set():
            gate_verdict(url, tokens[team], runs[team], {"paired_bs_n": 1000, "tolerance": 0.1})
            gates[0] += 1

    threads = [threading.Thread(target=gating, args=(team,)) for team in runs]
    for thread in threads:
        thread.start()
    reads = []
    for _ in range(300):
        reads.append(timed_get(f"{url}/api/v1/leaderboards/wmt22"))
        time.sleep(0.05)
    done.set()
    for thread in threads:
        thread.join()
    stop(server)
    return [
        (
            f"anonymous leaderboard read while 5 teams each run gates at the cap (1,000 resamples; {gates[0]} gates done meanwhile)",
            f"p50 {1000 * statistics.median(reads):.0f} ms, p95 {1000 * quantile(reads, 0.95):.0f} ms",
            "<= 100 ms p95",
        )
    ]


def _postgres(folder: Path) -> tuple[str, Callable[[], None]]:
    """A PostgreSQL of this run's own (Debian's, run as the postgres user): URL and stop."""
    import pwd
    import shutil
    import socket

    programs = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    if not programs:
        raise SystemExit("no PostgreSQL: install Debian's postgresql, or give --deadline-db")
    bin_dir = programs[-1].parent
    home = Path(tempfile.mkdtemp(prefix="bleucli-bench-pg-"))
    user = pwd.getpwnam("postgres")
    os.chown(home, user.pw_uid, user.pw_gid)

    def run(*argv: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run([*prefix, *argv], check=True, capture_output=True)

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    run(
        str(bin_dir / "initdb"),
        "-D",
        str(home / "data"),
        "-A",
        "trust",
        "-U",
        "postgres",
        "-E",
        "UTF8",
    )
    run(str(bin_dir / "pg_ctl"), "-D", str(home / "data"), "-l", str(home / "log"), "-w", "-o",
        f"-p {port} -k {home} -c listen_addresses=127.0.0.1 -c max_connections=200", "start")  # fmt: skip
    import psycopg

    with psycopg.connect(f"postgresql://postgres@127.0.0.1:{port}/postgres", autocommit=True) as c:
        c.execute("CREATE DATABASE deadline")

    def stop_pg() -> None:
        run(str(bin_dir / "pg_ctl"), "-D", str(home / "data"), "-m", "fast", "stop")
        shutil.rmtree(home, ignore_errors=True)

    return f"postgresql://postgres@127.0.0.1:{port}/deadline", stop_pg


def deadline(args: argparse.Namespace, ref: Path, outputs: list[bytes]) -> list:
    """200 teams x 3 submissions arriving within 5 minutes, 2 workers, PostgreSQL."""
    import threading

    folder = Path(tempfile.mkdtemp(prefix="bleucli-bench-deadline-"))
    stop_pg = None
    db = args.deadline_db
    if db is None:
        db, stop_pg = _postgres(folder)
    try:
        bleucli("server", "init", "--db", db)
        bleucli("server", "add-testset", "--db", db, "wmt22", "-l", "en-de", "--ref", str(ref), "-m", "bleu",
                "chrf", "ter", "--limit-per-day", "10", "--limit-total", "10")  # fmt: skip
        from bleucli.commands.server import add_team

        tokens = [add_team(db, f"team{k:03d}").splitlines()[-1] for k in range(args.deadline_teams)]
        server = start(db, 2, args.port + 1)
        url = f"http://127.0.0.1:{args.port + 1}"
        uploads = [(team, k) for k in range(args.deadline_runs) for team in range(len(tokens))]
        random.Random(7).shuffle(uploads)
        window = 60.0 * args.deadline_minutes
        statuses: list[int] = []
        accepted: list[int] = []
        reads: list[float] = []
        busy = threading.Event()
        started = time.perf_counter()

        def send(index: int) -> None:
            team, k = uploads[index]
            delay = started + window * index / len(uploads) - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            answer = upload(url, tokens[team], outputs[(team + k) % len(outputs)], f"run {k}")
            statuses.append(answer.status_code)
            if answer.status_code == 202:
                accepted.append(answer.json()["id"])

        def read() -> None:
            while busy.is_set():
                reads.append(timed_get(f"{url}/api/v1/leaderboards/wmt22"))
                time.sleep(0.25)

        busy.set()
        reader = threading.Thread(target=read)
        reader.start()
        with concurrent.futures.ThreadPoolExecutor(24) as pool:
            list(pool.map(send, range(len(uploads))))
        sent = time.perf_counter() - started
        from bleucli.server import store
        from bleucli.server.db import connect

        engine = connect(db)
        while store.pending(engine, store.testset(engine, "wmt22").id):
            time.sleep(0.5)
        drained = time.perf_counter() - started
        busy.clear()
        reader.join()
        counts = store.queue_counts(engine)
        with engine.connect() as connection:
            from sqlalchemy import func, select

            from bleucli.server import schema

            attempts = connection.execute(
                select(func.max(schema.submissions.c.attempts))
            ).scalar_one()
        engine.dispose()
        stop(server)
    finally:
        if stop_pg is not None:
            stop_pg()
    errors = sum(status >= 500 for status in statuses)
    return [
        (
            f"a deadline on PostgreSQL, 2 workers: {len(tokens)} teams x {args.deadline_runs} "
            f"2,037-line submissions within {args.deadline_minutes} min (sent in {sent:.0f} s)",
            f"{len(accepted)} of {len(uploads)} acknowledged, {counts.get('scored', 0)} scored, "
            f"{counts.get('failed', 0)} failed, most attempts a job took: {attempts}, {errors} 5xx; "
            f"queue drained {drained:.0f} s after the first upload",
            "every 202 scored once, no 5xx",
        ),
        (
            "... the leaderboard meanwhile",
            f"p50 {1000 * statistics.median(reads):.0f} ms, p95 {1000 * quantile(reads, 0.95):.0f} ms "
            f"({len(reads)} reads)",
            "<= 100 ms p95",
        ),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "wmt22" / "en-de"))
    parser.add_argument("--db", default="sqlite")
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--port", type=int, default=18931)
    parser.add_argument("--deadline-db", default=None, help="PostgreSQL for the deadline row")
    parser.add_argument("--deadline-teams", type=int, default=200)
    parser.add_argument("--deadline-runs", type=int, default=3)
    parser.add_argument("--deadline-minutes", type=float, default=5.0)
    args = parser.parse_args()
    data = Path(args.data)
    ref = data / "ref.A.de"
    systems = sorted(data.glob("sys.*.de"))
    if not ref.is_file() or not systems:
        raise SystemExit(
            f"{data}: no ref.A.de and sys.*.de (WMT22 en-de from ../shared/data/wmt22)"
        )
    folder = Path(tempfile.mkdtemp(prefix="bleucli-bench-server-"))
    db = f"sqlite:///{folder / 'bench.db'}" if args.db == "sqlite" else args.db
    bleucli("server", "init", "--db", db)
    bleucli("server", "add-testset", "--db", db, "wmt22", "-l", "en-de", "--ref", str(ref), "-m", "bleu", "chrf", "ter",
            "--limit-per-day", "100000", "--limit-total", "100000", "--visibility", "public")  # fmt: skip
    tokens = [
        bleucli("server", "add-team", "--db", db, f"team{k:02d}").strip().splitlines()[-1]
        for k in range(50)
    ]
    url = f"http://127.0.0.1:{args.port}"
    outputs = [path.read_bytes() for path in systems]
    rows: list[tuple[str, str, str]] = []

    # 1. latency of one submission, one worker
    server = start(db, 1, args.port)
    latencies = []
    for k in range(args.samples):
        answer = upload(url, tokens[0], outputs[k % len(outputs)], f"latency {k}")
        started = time.perf_counter()
        assert answer.status_code == 202, answer.text
        wait(url, tokens[0], answer.json()["id"])
        latencies.append(time.perf_counter() - started)
    rows.append(("2,037-line submission, BLEU+chrF+TER, 202 to visible (1 worker)",
                 f"p50 {statistics.median(latencies):.2f} s, p95 {quantile(latencies, 0.95):.2f} s", "<= 1 s p95"))  # fmt: skip

    # 2. 100 concurrent uploads
    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        answers = list(
            pool.map(
                lambda k: upload(url, tokens[k % 50], outputs[k % len(outputs)], f"burst {k}"),
                range(100),
            )
        )
    statuses = [a.status_code for a in answers]
    accepted = [(k, a.json()["id"]) for k, a in enumerate(answers) if a.status_code == 202]
    for k, submission in accepted:
        wait(url, tokens[k % 50], submission)
    elapsed = time.perf_counter() - started
    server_errors = sum(s >= 500 for s in statuses)
    rows.append(("100 concurrent 2,037-line uploads (1 worker)",
                 f"{len(accepted)} acknowledged and scored, {server_errors} 5xx, all scored after {elapsed:.1f} s",
                 "every one scored, no 5xx"))  # fmt: skip
    stop(server)

    # 3. 1,000 submissions from 50 teams (statistics of 50 real-data variants)
    from bleucli.server import leaderboard, store
    from bleucli.server.db import connect
    from bleucli.server.scoring import score

    engine = connect(db)
    testset = store.testset(engine, "wmt22")
    version = store.version(engine, testset.version_id)
    rng = random.Random(1)
    variants = []
    for k in range(50):
        lines = outputs[k % len(outputs)].decode("utf-8").splitlines()
        changed = [
            " ".join(w for w in line.split() if rng.random() > 0.02 * (k % 7)) for line in lines
        ]
        data = ("\n".join(changed) + "\n").encode("utf-8")
        variants.append((data, score(version.references, version.request, data)))
    from bleucli.server.scoring import intervals

    kept = [  # each variant's resampled scores, as the worker keeps them
        json.dumps(intervals(version.references, version.request, scored.stats)["resampled"])
        for _, scored in variants
    ]
    from sqlalchemy import insert

    from bleucli.server import schema
    from bleucli.server.db import writing

    with engine.connect() as connection:
        team_ids = {row.name: row.id for row in connection.execute(schema.teams.select())}
    with writing(engine) as connection:
        for k in range(1000 - len(accepted) - args.samples):
            team = k % 50
            data, scored = variants[team]
            sid = connection.execute(insert(schema.submissions).values(
                testset_id=testset.id, version_id=version.id, team_id=team_ids[f"team{team:02d}"],
                name=f"run {k}", status="scored", hypothesis_sha256="0" * 64,
                result=scored.json(), scores=json.dumps(scored.scores),
                receipt="{}", primary_choice=False, attempts=1, created_at=store.now(), finished_at=store.now(),
            )).inserted_primary_key[0]  # fmt: skip
            connection.execute(insert(schema.submission_data).values(
                submission_id=sid, hypothesis=data, stats=store.encode_stats(scored.stats),
                resampled=kept[variants.index((data, scored))]))  # fmt: skip
    started = time.perf_counter()
    testset = store.testset(engine, "wmt22")
    document = leaderboard.compute(engine, testset)
    store.save_leaderboard(engine, testset.id, document, testset.changes)
    recluster = time.perf_counter() - started
    total = sum(store.queue_counts(engine).values())
    server = start(db, 0, args.port)
    api, page = [], []
    for _ in range(200):
        api.append(timed_get(f"{url}/api/v1/leaderboards/wmt22"))
        page.append(timed_get(f"{url}/testsets/wmt22"))
    stop(server)
    rows.append((f"leaderboard of {total} submissions, {len(document['rows'])} teams: API",
                 f"p50 {1000 * statistics.median(api):.0f} ms, p95 {1000 * quantile(api, 0.95):.0f} ms", "<= 100 ms p95"))  # fmt: skip
    rows.append(
        (
            "... page",
            f"p50 {1000 * statistics.median(page):.0f} ms, p95 {1000 * quantile(page, 0.95):.0f} ms",
            "<= 100 ms p95",
        )
    )
    rows.append(
        (
            f"a new primary: re-cluster {len(document['rows'])} systems (1,000 resamples)",
            f"{recluster:.2f} s",
            "<= 2 s",
        )
    )

    # 4. the server-side gate: a 2,037-line run against its series' baseline
    token_file = folder / "team.token"
    token_file.write_text(tokens[1])
    server = start(db, 1, args.port)
    gate_times, cli_times = [], []
    for k in range(args.samples):
        path = systems[k % len(systems)]
        answer = requests.post(
            f"{url}/api/v1/submissions", headers={"Authorization": f"Bearer {tokens[1]}"},
            data={"testset": "wmt22", "name": f"gate {k}", "series": "gate"},
            files={"hypothesis": ("h.txt", path.read_bytes())}, timeout=300,
        )  # fmt: skip
        started = time.perf_counter()  # the upload is acknowledged: durably stored
        wait(url, tokens[1], answer.json()["id"])
        gate_verdict(url, tokens[1], answer.json()["id"], {"tolerance": 0.5})
        gate_times.append(time.perf_counter() - started)
    for k in range(5):  # the whole command, interpreter start and upload included
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "bleucli", "submit", "--server", url, "--token-file", str(token_file),
             "-t", "wmt22", "-i", str(systems[k % len(systems)]), "--series", "gate", "--gate", "-f", "json"],
            capture_output=True, text=True,
        )  # fmt: skip
        cli_times.append(time.perf_counter() - started)
        assert proc.returncode in (0, 3), proc.stderr
    stop(server)
    rows.append(("gate verdict of a 2,037-line run vs its baseline (1,000 resamples), after the upload",
                 f"p50 {statistics.median(gate_times):.2f} s, p95 {quantile(gate_times, 0.95):.2f} s",
                 "<= 1.5 s"))  # fmt: skip
    rows.append(("... `bleucli submit --gate` as a whole (interpreter start and upload included)",
                 f"p50 {statistics.median(cli_times):.2f} s", ""))  # fmt: skip

    # 5. a series of 1,000 runs: its API and trend page
    bands = [
        json.dumps(intervals(version.references, version.request, scored.stats))
        for _, scored in variants[:10]
    ]
    with writing(engine) as connection:
        for k in range(1000):
            data, scored = variants[k % 10]
            sid = connection.execute(insert(schema.submissions).values(
                testset_id=testset.id, version_id=version.id, team_id=team_ids["team02"],
                name=f"nightly {k}", status="scored", hypothesis_sha256="0" * 64,
                result=scored.json(), scores=json.dumps(scored.scores),
                receipt="{}", primary_choice=False, attempts=1, created_at=store.now(), finished_at=store.now(),
                series="nightly", labels=json.dumps({"commit": f"{k:07x}"}), intervals=bands[k % 10],
                promoted=False,
            )).inserted_primary_key[0]  # fmt: skip
            connection.execute(insert(schema.submission_data).values(
                submission_id=sid, hypothesis=data, stats=store.encode_stats(scored.stats),
                resampled=kept[variants.index((data, scored))]))  # fmt: skip
    server = start(db, 0, args.port)
    headers = {"Authorization": f"Bearer {tokens[2]}"}
    series_api, series_page = [], []
    for _ in range(50):
        series_api.append(timed_get(f"{url}/api/v1/series/wmt22/nightly", headers))
        series_page.append(timed_get(f"{url}/testsets/wmt22/series/nightly", headers))
    stop(server)
    rows.append(
        (
            "series of 1,000 runs: API",
            f"p50 {1000 * statistics.median(series_api):.0f} ms, p95 {1000 * quantile(series_api, 0.95):.0f} ms",
            "<= 150 ms p95",
        )
    )
    rows.append(
        (
            "... trend page",
            f"p50 {1000 * statistics.median(series_page):.0f} ms, p95 {1000 * quantile(series_page, 0.95):.0f} ms",
            "<= 150 ms p95",
        )
    )

    rows += gate_load(db, url, args.port, tokens, outputs)
    rows += deadline(args, ref, outputs)

    table = [
        "| row | measured | target |",
        "| --- | --- | --- |",
        *(f"| {a} | {b} | {c} |" for a, b, c in rows),
    ]
    engine_name = "SQLite" if args.db == "sqlite" else "PostgreSQL"
    text = (
        "# Evaluation server benchmarks\n\n"
        f"`python scripts/bench_server.py` on {time.strftime('%Y-%m-%d')}, {engine_name} (the "
        f"deadline row: PostgreSQL), 2 cores, WMT22 en-de ({len(systems)} systems, 2,037 lines). "
        "A real `bleucli server run` on 127.0.0.1; the client runs on the same 2 cores.\n\n"
        + "\n".join(table)
        + "\n"
    )
    print(text)
    (ROOT / "scripts" / "BENCHMARKS-server.md").write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
