"""Copy two of WMT25's published pairs into tests/data/autorank/wmt25 so the AutoRank tests
run without ../shared: en-kn_IN (no human references, so no CometKiwi-XL; null GEMBA
scores) and en-sr_Cyrl_RS (all five metrics; a pair code with a script). Each system's
lines of those pairs are kept byte for byte, gzipped; the published tables of the two pairs
are copied as they are.

    python scripts/autorank_fixtures.py [../shared/data/autorank/wmt25]
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAIRS = ("en-kn_IN", "en-sr_Cyrl_RS")


def main() -> None:
    source = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT.parent / "shared/data/autorank/wmt25")
    target = ROOT / "tests" / "data" / "autorank" / "wmt25"
    scores = target / "automatic_scores"
    scores.mkdir(parents=True, exist_ok=True)
    for path in sorted((source / "automatic_scores").glob("*.jsonl")):
        kept = [
            line
            for line in path.read_text(encoding="utf-8").splitlines(keepends=True)
            if json.loads(line)["language_pair"] in PAIRS
        ]
        if kept:
            with gzip.GzipFile(scores / f"{path.name}.gz", "wb", mtime=0) as handle:
                handle.write("".join(kept).encode("utf-8"))
    tables = json.loads((source / "published_tables.json").read_text(encoding="utf-8"))
    tables["pairs"] = {pair: tables["pairs"][pair] for pair in PAIRS}
    (target / "published_tables.json").write_text(
        json.dumps(tables, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
