"""Verified answers, measured: 20 questions, each with a verified answer, a rewording ("what's
the way to…") that should find it first and a neighbouring question that should not
(`bench/data/verified/answers.jsonl`, all written before any was run). The thresholds of
`knowledge.answering.verified` were chosen on the 10 `tune` ones; the 10 `heldout` ones are
reported as they come. Run alone: `python -m bench.verified` (results/verified.json).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.slack_path import _settings
from bot.app.local import local_dm
from bot.app.services import build_services
from knowledge.answering.verified import CONFIDENT, MATCH
from storage.repositories.verified import VerifiedEntry

ANSWERS = Path(__file__).resolve().parent / "data" / "verified" / "answers.jsonl"
RESULTS = Path(__file__).resolve().parent / "results" / "verified.json"


async def run(workdir: Path, quick: bool = False) -> dict[str, Any]:
    rows = [json.loads(line) for line in ANSWERS.read_text().splitlines() if line.strip()]
    services = build_services(_settings(workdir))
    try:
        actor = await local_dm(services)
        report: dict[str, Any] = {"match": MATCH, "confident": CONFIDENT}
        for split in ("tune", "heldout"):
            chosen = [r for r in rows if r["split"] == split][: 3 if quick else None]
            index = await services.catalog.create_shared(actor.place, f"verified-{split}")
            for row in chosen:
                entry = VerifiedEntry(
                    tenant_id=index.tenant_id, index_id=index.id, source_key=row["id"], question=row["question"],
                    answer=row["answer"], question_vector=await services.verified.vector(row["question"]),
                    embedding_model=services.verified.model_id, answered_by="bench", verified_by=actor.user.id,
                )  # fmt: skip
                await asyncio.to_thread(services.verified_answers.save, entry)
            items = []
            for row in chosen:
                reworded = await services.verified.match([index], row["reworded"])
                near = await services.verified.match([index], row["near"])
                items.append(
                    {
                        "id": row["id"],
                        "reworded_first": reworded is not None and reworded.question == row["question"],
                        "reworded_similarity": reworded.similarity if reworded else None,
                        "reworded_confident": bool(reworded and reworded.confident),
                        "near_matched": near is not None,
                        "near_confident": bool(near and near.confident),
                    }
                )
            report[split] = {
                "verified": len(chosen),
                "reworded_first": sum(i["reworded_first"] for i in items),
                "reworded_confident": sum(i["reworded_confident"] for i in items),
                "near_matched": sum(i["near_matched"] for i in items),
                "near_confident": sum(i["near_confident"] for i in items),
                "items": items,
            }
        return report
    finally:
        await services.aclose()


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="lore-verified-") as scratch:
        report = asyncio.run(run(Path(scratch)))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    for split in ("tune", "heldout"):
        part = report[split]
        print(
            f"{split}: {part['reworded_first']}/{part['verified']} rewordings find their verified answer first "
            f"({part['reworded_confident']} close enough to answer unasked); neighbouring questions matched: "
            f"{part['near_matched']} ({part['near_confident']} close enough to answer unasked)",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()
