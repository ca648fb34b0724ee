"""Schemathesis against /openapi.json on loopback: requests generated from the document,
valid and invalid, for every operation; no server errors, and every response as documented.

Each operation is fuzzed twice: with any path parameters, and aimed at a real index, source
and (finished) job, and a connector at a private address, so the requests reach past the
404 into the route's own logic. The operations that start jobs or remove things come last,
so a following log stream never waits on a job: jobs do not run in this server, the crawler
never leaves loopback, and the server looks no host name up (`no_dns`), so no request the
fuzzer makes up leaves this machine.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest
import pytest_asyncio
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.api.conftest import LoreApi

pytestmark = pytest.mark.asyncio(loop_scope="module")

TARGET = "fuzz-target"
EXAMPLES = {GenerationMode.POSITIVE: 12, GenerationMode.NEGATIVE: 6}
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def target(llm_api: LoreApi) -> dict[str, Any]:
    """Path parameters naming real things: an index, a site attached to it, a finished job."""
    index = await llm_api.create_index(TARGET)
    await llm_api.add_text(TARGET, "fuzz.md", "# Fuzz\n\nSchemathesis sends whatever the schema allows.")
    jobs, ref = llm_api.services.jobs, llm_api.services.indexes.get(index["id"])
    source = await jobs.attach_site(ref, ["https://docs.invalid/"])
    job = await jobs.cancel((await jobs.start_indexing_job(ref, source)).id)  # queued, so it ends
    assert job.finished
    connection = llm_api.services.connections.repository.save(  # stored unchecked, and never called:
        "T0001", "confluence", "fuzz", "http://10.255.255.1/wiki", {"token": "fuzz-token"}, "…"
    )  # a private address, which the fetcher refuses before any request
    return {"index": TARGET, "source_id": source.id, "job_id": job.id, "connector_id": connection.id}


def order(method: str, path: str) -> tuple[int, str]:
    """Reads first; then what starts jobs; then what removes things, the index last."""
    method = method.upper()
    if method == "DELETE" and path == "/v1/indexes/{index}":
        return 4, path
    if method == "DELETE":
        return 3, path
    if method == "POST" and (path.endswith(("/refresh", "/sources", "/attach"))):
        return 2, path
    return 1, path


def fuzz(document: dict[str, Any], base_url: str, key: str, target: dict[str, Any]) -> list[str]:
    """Every operation, each generation mode; the failures found, one line each."""
    schema = schemathesis.openapi.from_dict(document)
    operations = [result.ok() for result in schema.get_all_operations()]
    operations.sort(key=lambda op: order(op.method, op.path))
    headers = {"Authorization": f"Bearer {key}"}
    failures: list[str] = []
    with requests.Session() as session:
        for operation in operations:
            aims: list[dict[str, Any] | None] = [None]
            named = {k: v for k, v in target.items() if "{" + k + "}" in operation.path}
            if named:
                aims.append(named)
            for aim in aims:
                for mode, examples in EXAMPLES.items():
                    strategy = operation.as_strategy(mode, headers=headers, path_parameters=aim)
                    try:
                        _run(strategy, examples, session, base_url)
                    except Unsatisfiable:  # nothing in this operation can be made invalid
                        continue
                    except Exception as exc:
                        failures.append(
                            f"{operation.method.upper()} {operation.path} {mode.value} {aim}: {exc}"
                        )
    return failures


def _run(strategy: st.SearchStrategy[Any], examples: int, session: requests.Session, base_url: str) -> None:
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy)
    def check(case: Any) -> None:
        response = case.call(base_url=base_url, session=session, timeout=30)
        case.validate_response(response, checks=CHECKS)

    check()


@pytest.fixture
def off_machine(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Connections the fuzzed server tried to open to anything but loopback (refused)."""
    tried: list[object] = []
    real_connect = socket.socket.connect

    def guarded(self: socket.socket, address: Any) -> None:
        host = address[0] if isinstance(address, tuple) else None
        if host is not None and host not in ("127.0.0.1", "::1"):
            tried.append(address)
            raise OSError(f"the fuzz test allows no connection off this machine ({address!r})")
        real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    return tried


@pytest.mark.slow
async def test_no_server_errors_and_responses_as_documented(
    llm_api: LoreApi, target: dict[str, Any], off_machine: list[object]
) -> None:
    status, document = await llm_api.call("GET", "/openapi.json", key=None)
    assert status == 200
    failures = await asyncio.to_thread(fuzz, document, llm_api.base_url, llm_api.keys.service, target)
    assert failures == [], "\n\n".join(failures)
    assert off_machine == [], "the fuzzer made Lore reach beyond loopback"
