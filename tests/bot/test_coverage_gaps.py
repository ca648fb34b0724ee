"""The coverage-gap job's questions are embedded once, when they are asked: a question Lore
could not answer keeps the vector its search used, so the job groups without embedding."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import numpy as np

from bot.app.settings import Settings
from bot.chat.runtime import open_runtime
from bot.shell.session import Shell
from storage.repositories.history import AnswerHistory
from storage.values import LOCAL_TENANT, utcnow
from tests.bot.test_shell import lines

NOTES = "# Deploying\n\nWe deploy the billing service every Tuesday with the blue-green pipeline.\n"
GAPS = (
    "how many days of parental leave do new parents get?",
    "what is the parental leave policy for new parents?",
    "who signs off the quokka sanctuary budget?",
)


async def test_a_question_lore_could_not_answer_keeps_its_vector_for_the_job(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "deploy.md").write_text(NOTES)
    settings = Settings(
        _env_file=None,
        lore_home=tmp_path / "home",
        database_url=None,
        chroma_host=None,
        openai_api_key=None,
        openai_base_url=None,
        slack_bot_token=None,
    )
    async with open_runtime(settings) as runtime:
        services, out = runtime.services, StringIO()
        shell = Shell(services, runtime.router, out)
        await shell.run(lines("/in #eng", f"add {tmp_path / 'notes'} to your memory"))
        await shell.run(lines("When do we deploy the billing service?", *GAPS))
        assert "every Tuesday" in out.getvalue()

        history = AnswerHistory(services.db)
        asked = history.unresolved(LOCAL_TENANT, utcnow().replace(year=2000), limit=10)
        assert sorted(q for _, q in asked) == sorted(GAPS)  # the answered question is no gap
        model = services.embedder.model_id
        kept = history.vectors([i for i, _ in asked], model)
        assert set(kept) == {i for i, _ in asked}
        for answer_id, question in asked:
            expected = (await services.embedder.embed([question]))[0]
            vector = np.frombuffer(kept[answer_id], dtype="<f4")
            assert np.allclose(vector, expected, atol=1e-5)

        run = await services.gaps.run(LOCAL_TENANT)
        assert run is not None and (run.questions, run.embedded) == (3, 0)
        assert run.groups == 2  # the two about parental leave together, the quokkas alone
