"""`GET /v1/audit`: the workspace's audit log for a SIEM, as JSON lines or CSV; what the API
itself changes is in it, attributed to the key and the address it came from."""

from __future__ import annotations

import csv
import io
import json

import pytest

from bot.app.keys import ApiKeys
from tests.api.conftest import OTHER_TENANT, TENANT, LoreApi
from tests.api.test_auth import assert_error

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_a_siem_key_reads_what_the_api_changed(api: LoreApi) -> None:
    created = await api.create_index("audited")  # with the service key
    status, _ = await api.call("DELETE", "/v1/indexes/audited")
    assert status == 204
    siem = ApiKeys(api.services.db).create(TENANT, "siem", reads_audit=True).secret

    status, text = await api.call("GET", "/v1/audit", key=siem, params={"action": "index"})
    assert status == 200, text
    entries = [json.loads(line) for line in text.splitlines()]
    made = [e for e in entries if e["target"] == "audited"]
    assert [e["action"] for e in made] == ["index.delete", "index.create"]  # newest first
    assert {e["surface"] for e in made} == {"api"}
    assert made[1]["details"]["index_id"] == created["id"]
    assert made[0]["origin"].startswith("key ") and "127.0.0.1" in made[0]["origin"]

    status, text = await api.call("GET", "/v1/audit", key=siem, params={"format": "csv", "action": "index"})
    assert status == 200
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["action"] for r in rows if r["target"] == "audited"] == ["index.delete", "index.create"]
    # reading the log is itself recorded
    status, text = await api.call("GET", "/v1/audit", key=siem, params={"action": "export"})
    assert any(json.loads(line)["target"] == "api csv" for line in text.splitlines())


async def test_other_keys_and_other_workspaces_read_nothing(api: LoreApi) -> None:
    status, body = await api.call("GET", "/v1/audit")  # the service key: not an auditor
    assert status == 403
    assert "--audit" in assert_error(body, "permission_error")
    status, body = await api.call("GET", "/v1/audit", key="ada")
    assert status == 403
    assert_error(body, "permission_error")
    elsewhere = ApiKeys(api.services.db).create(OTHER_TENANT, "their-siem", reads_audit=True).secret
    status, text = await api.call("GET", "/v1/audit", key=elsewhere, params={"action": "index"})
    assert status == 200
    assert "audited" not in (text or "")
    status, body = await api.call("GET", "/v1/audit", key=elsewhere, params={"format": "xml"})
    assert status == 400
    assert_error(body, "invalid_request_error")
