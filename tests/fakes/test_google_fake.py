"""The fake Google speaks Google's wire format: checked here with a plain HTTP client, apart
from Lore's connector. The shapes follow Google's documented examples (Drive v3's `File`,
`FileList`, `ChangeList`, `StartPageToken`, `PermissionList`, its error body with `errors[].
reason`, the OAuth token endpoint's grants and errors, the Sheets `ValueRange`, the Directory
`members` list): the `fields` mask, `nextPageToken` paging, shared drives hidden without
`supportsAllDrives`, the change log per user and per shared drive, quota errors."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import jwt
import pytest

from tests.fakes.google_server import (
    CLIENT_ID,
    CLIENT_SECRET,
    DIRECTORY_SCOPES,
    DOMAIN,
    DRIVE_SCOPE,
    FakeGoogle,
    Permission,
    Seeded,
    seed,
)

ADA, BOB = f"ada@{DOMAIN}", f"bob@{DOMAIN}"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


@pytest.fixture
async def google() -> AsyncIterator[tuple[FakeGoogle, Seeded, aiohttp.ClientSession]]:
    async with FakeGoogle() as fake, aiohttp.ClientSession() as http:
        yield fake, seed(fake), http


def assertion(key_json: str, subject: str, scopes: str = DRIVE_SCOPE, **claims: Any) -> str:
    """A service account's JWT-bearer assertion, as Google documents it (RS256, `aud` Google's
    token endpoint, `iss` the account, `sub` the user it acts as)."""
    key = json.loads(key_json)
    now = int(time.time())
    body = {
        "iss": key["client_email"],
        "sub": subject,
        "scope": scopes,
        "aud": "https://oauth2.googleapis.com/token",
        "iat": now,
        "exp": now + 3600,
        **claims,
    }
    return jwt.encode(body, key["private_key"], algorithm="RS256", headers={"kid": key["private_key_id"]})


async def token(fake: FakeGoogle, http: aiohttp.ClientSession, form: dict[str, str]) -> tuple[int, Any]:
    async with http.post(fake.token_uri, data=form) as response:
        return response.status, await response.json()


async def bearer(fake: FakeGoogle, http: aiohttp.ClientSession, user: str = ADA) -> dict[str, str]:
    status, body = await token(
        fake, http, {"grant_type": JWT_BEARER, "assertion": assertion(fake.service_account_key(), user)}
    )
    assert status == 200, body
    return {"Authorization": f"Bearer {body['access_token']}"}


async def get(
    fake: FakeGoogle, http: aiohttp.ClientSession, path: str, auth: dict[str, str], **params: str
) -> tuple[int, Any]:
    async with http.get(f"{fake.base_url}{path}", params=params, headers=auth) as response:
        body = await response.read()
        is_json = response.content_type == "application/json"
        return response.status, json.loads(body) if is_json else body


async def test_the_token_endpoint_grants_as_google_documents(google: Any) -> None:
    fake, _, http = google
    key = fake.service_account_key()
    status, body = await token(fake, http, {"grant_type": JWT_BEARER, "assertion": assertion(key, ADA)})
    assert status == 200 and body["token_type"] == "Bearer" and body["expires_in"] == 3600
    assert body["access_token"].startswith("ya29.")
    other = fake.service_account_key()  # a valid signature, but another key's
    forged = assertion(other, ADA, iss=json.loads(key)["client_email"])
    status, body = await token(fake, http, {"grant_type": JWT_BEARER, "assertion": forged})
    assert (status, body["error"]) == (400, "invalid_grant")
    status, body = await token(
        fake, http, {"grant_type": JWT_BEARER, "assertion": assertion(key, "eve@evil.example")}
    )
    assert (status, body["error"]) == (400, "invalid_grant")
    narrow = fake.service_account_key(scopes=[DRIVE_SCOPE])  # delegation allows Drive only
    wide = assertion(narrow, ADA, scopes=" ".join(DIRECTORY_SCOPES))
    status, body = await token(fake, http, {"grant_type": JWT_BEARER, "assertion": wide})
    assert (status, body["error"]) == (401, "unauthorized_client")

    refresh = fake.oauth_refresh_token(BOB)
    form = {"grant_type": "refresh_token", "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET}
    status, body = await token(fake, http, {**form, "refresh_token": refresh})
    assert status == 200 and "access_token" in body
    status, body = await token(fake, http, {**form, "refresh_token": "1//revoked"})
    assert (status, body["error"]) == (400, "invalid_grant")
    status, body = await token(fake, http, {**form, "client_secret": "wrong", "refresh_token": refresh})
    assert (status, body["error"]) == (401, "invalid_client")


async def test_drive_answers_only_the_fields_asked_for_and_pages(google: Any) -> None:
    fake, seeded, http = google
    auth = await bearer(fake, http)
    status, body = await get(fake, http, "/drive/v3/files", auth, q=f"'{seeded.handbook}' in parents")
    assert status == 200 and body["kind"] == "drive#fileList" and body["incompleteSearch"] is False
    assert set(body["files"][0]) == {"kind", "id", "name", "mimeType"}, "Drive's default file fields"
    fields = "nextPageToken,files(id,name,owners(emailAddress),permissions(type,role))"
    status, body = await get(
        fake, http, "/drive/v3/files", auth, q=f"'{seeded.handbook}' in parents", fields=fields, pageSize="2"
    )
    assert status == 200 and len(body["files"]) == 2 and set(body) == {"nextPageToken", "files"}
    assert set(body["files"][0]) == {"id", "name", "owners", "permissions"}
    assert body["files"][0]["owners"] == [{"emailAddress": ADA}]
    names = [f["name"] for f in body["files"]]
    while "nextPageToken" in body:
        _, body = await get(
            fake,
            http,
            "/drive/v3/files",
            auth,
            q=f"'{seeded.handbook}' in parents",
            fields=fields,
            pageSize="2",
            pageToken=body["nextPageToken"],
        )
        names += [f["name"] for f in body["files"]]
    assert sorted(names) == ["Expenses policy", "HR", "Office directory", "Office map.png", "Salary bands"]
    status, body = await get(fake, http, "/drive/v3/files", auth, q="name = 'unclosed")
    assert status == 400 and body["error"]["errors"][0]["reason"] == "invalid"


async def test_a_shared_drive_is_hidden_without_supports_all_drives(google: Any) -> None:
    fake, seeded, http = google
    auth = await bearer(fake, http)
    status, body = await get(fake, http, f"/drive/v3/files/{seeded.drive_doc}", auth)
    assert status == 404 and body["error"]["errors"][0]["reason"] == "notFound"
    status, body = await get(
        fake, http, f"/drive/v3/files/{seeded.drive_doc}", auth, supportsAllDrives="true", fields="id,driveId"
    )
    assert status == 200 and body == {"id": seeded.drive_doc, "driveId": seeded.drive}
    status, body = await get(fake, http, "/drive/v3/files", auth, includeItemsFromAllDrives="true")
    assert status == 403 and body["error"]["errors"][0]["reason"] == "teamDrivesParameterNotSupported"
    status, body = await get(
        fake,
        http,
        "/drive/v3/files",
        auth,
        corpora="drive",
        driveId=seeded.drive,
        includeItemsFromAllDrives="true",
        supportsAllDrives="true",
        fields="files(name,permissions)",
    )
    assert status == 200 and body["files"] == [{"name": "Deploy runbook"}], (
        "no permissions in a shared drive's listing"
    )
    status, body = await get(
        fake, http, f"/drive/v3/files/{seeded.drive_doc}/permissions", auth, supportsAllDrives="true"
    )
    assert status == 200 and body["kind"] == "drive#permissionList"
    member = next(p for p in body["permissions"] if p.get("emailAddress") == f"eng@{DOMAIN}")
    assert member["type"] == "group" and member["permissionDetails"][0]["inherited"] is True
    _, drives = await get(fake, http, "/drive/v3/drives", auth)
    assert drives["drives"] == [{"kind": "drive#drive", "id": seeded.drive, "name": "Engineering"}]


async def test_exports_downloads_and_sheets(google: Any) -> None:
    fake, seeded, http = google
    auth = await bearer(fake, http)
    status, body = await get(
        fake, http, f"/drive/v3/files/{seeded.doc}/export", auth, mimeType="text/markdown"
    )
    assert status == 200 and body.startswith(b"# Expenses")
    status, body = await get(fake, http, f"/drive/v3/files/{seeded.doc}", auth, alt="media")
    assert status == 403 and body["error"]["errors"][0]["reason"] == "fileNotDownloadable"
    status, body = await get(fake, http, f"/drive/v3/files/{seeded.pdf}", auth, alt="media")
    assert status == 200 and body.startswith(b"%PDF")
    status, body = await get(fake, http, f"/drive/v3/files/{seeded.sheet}/export", auth, mimeType="text/csv")
    assert status == 200 and body.decode().splitlines() == ["Name,Desk", "Ada,4.12", "Bob,2.03"], (
        "the first sheet"
    )
    status, body = await get(
        fake, http, f"/v4/spreadsheets/{seeded.sheet}", auth, fields="sheets.properties(sheetId,title)"
    )
    assert status == 200 and [s["properties"]["title"] for s in body["sheets"]] == ["Desks", "Rooms"]
    status, body = await get(
        fake, http, f"/v4/spreadsheets/{seeded.sheet}/values:batchGet", auth, ranges="'Rooms'"
    )
    assert status == 200 and body["valueRanges"][0]["range"] == "'Rooms'!A1:C3"
    assert body["valueRanges"][0]["values"][1] == ["Lovelace room", "5", "12"]
    fake.sheets_api = False
    status, body = await get(fake, http, f"/v4/spreadsheets/{seeded.sheet}", auth)
    assert status == 403 and body["error"]["status"] == "PERMISSION_DENIED"
    assert body["error"]["details"][0]["reason"] == "SERVICE_DISABLED"


async def test_the_change_log_lists_each_files_last_change_and_removals(google: Any) -> None:
    fake, seeded, http = google
    auth = await bearer(fake, http)
    _, start = await get(fake, http, "/drive/v3/changes/startPageToken", auth)
    assert start["kind"] == "drive#startPageToken" and start["startPageToken"].isdigit()
    status, body = await get(fake, http, "/drive/v3/changes", auth, pageToken=start["startPageToken"])
    assert status == 200 and body["changes"] == [] and body["newStartPageToken"] == start["startPageToken"]
    fake.edit(seeded.doc, "# Expenses\n\nnew\n")
    fake.edit(seeded.doc, "# Expenses\n\nnewer\n")
    fake.trash(seeded.slides)
    fake.delete(seeded.pdf)
    fields = "nextPageToken,newStartPageToken,changes(changeType,removed,fileId,file(name,trashed))"
    _, body = await get(
        fake, http, "/drive/v3/changes", auth, pageToken=start["startPageToken"], fields=fields, pageSize="2"
    )
    assert "newStartPageToken" not in body and len(body["changes"]) == 2
    _, rest = await get(fake, http, "/drive/v3/changes", auth, pageToken=body["nextPageToken"], fields=fields)
    changes = body["changes"] + rest["changes"]
    assert [c["fileId"] for c in changes] == [seeded.doc, seeded.slides, seeded.pdf], (
        "each file's last change"
    )
    assert changes[1]["file"] == {"name": "Onboarding deck", "trashed": True}
    assert changes[2] == {"changeType": "file", "removed": True, "fileId": seeded.pdf}
    fake.edit(seeded.drive_doc, "# Deploys\n\nWednesdays now.\n")
    _, user_log = await get(fake, http, "/drive/v3/changes", auth, pageToken=rest["newStartPageToken"])
    assert user_log["changes"] == [], "a shared drive's changes are in its own log"
    status, body = await get(
        fake,
        http,
        "/drive/v3/changes",
        auth,
        pageToken=rest["newStartPageToken"],
        driveId=seeded.drive,
        supportsAllDrives="true",
        includeItemsFromAllDrives="true",
    )
    assert status == 200 and [c["fileId"] for c in body["changes"]] == [seeded.drive_doc]
    status, body = await get(fake, http, "/drive/v3/changes", auth, pageToken="not-a-token")
    assert status == 400


async def test_quota_errors_and_failures_have_googles_shape(google: Any) -> None:
    fake, _, http = google
    auth = await bearer(fake, http)
    fake.rate_limit(1, after=1)
    fake.rate_limit(1, status=429)
    assert (await get(fake, http, "/drive/v3/about", auth, fields="user"))[0] == 200
    status, body = await get(fake, http, "/drive/v3/about", auth)
    assert status == 403 and body["error"]["code"] == 403
    assert body["error"]["errors"][0] == {
        "domain": "usageLimits",
        "reason": "userRateLimitExceeded",
        "message": "User Rate Limit Exceeded",
    }
    status, body = await get(fake, http, "/drive/v3/about", auth)
    assert status == 429 and body["error"]["errors"][0]["reason"] == "rateLimitExceeded"
    status, body = await get(fake, http, "/drive/v3/about", {"Authorization": "Bearer ya29.forged"})
    assert status == 401 and body["error"]["errors"][0]["reason"] == "authError"
    fake.fail("/drive/v3/about", times=1)
    assert (await get(fake, http, "/drive/v3/about", auth))[0] == 500
    status, body = await get(fake, http, "/drive/v3/about", auth, fields="user(emailAddress)")
    assert (status, body) == (200, {"user": {"emailAddress": ADA}})


async def test_the_directory_lists_members_for_an_admin_with_its_scopes(google: Any) -> None:
    fake, _, http = google
    drive_only = await bearer(fake, http)
    status, body = await get(fake, http, f"/admin/directory/v1/groups/eng@{DOMAIN}/members", drive_only)
    assert status == 403 and body["error"]["details"][0]["reason"] == "ACCESS_TOKEN_SCOPE_INSUFFICIENT"
    key = fake.service_account_key()
    for user, expected in ((BOB, 403), (ADA, 200)):
        form = {"grant_type": JWT_BEARER, "assertion": assertion(key, user, " ".join(DIRECTORY_SCOPES))}
        _, granted = await token(fake, http, form)
        auth = {"Authorization": f"Bearer {granted['access_token']}"}
        status, body = await get(
            fake,
            http,
            f"/admin/directory/v1/groups/eng@{DOMAIN}/members",
            auth,
            includeDerivedMembership="true",
        )
        assert status == expected, "only an admin reads the Directory"
    assert body["kind"] == "admin#directory#members"
    assert sorted(m["email"] for m in body["members"]) == [BOB, f"cy@{DOMAIN}"], "nested groups expanded"


async def test_permissions_list_pages_with_the_fields_drive_documents(google: Any) -> None:
    """Drive v3 `permissions.list`: `pageSize` 1–100 with `nextPageToken`; each `Permission`
    with `kind`, `id`, `type`, `role`, `emailAddress` / `domain`, `allowFileDiscovery` for a
    domain or anyone, `deleted` for users and groups, `pendingOwner` when offered ownership,
    and `permissionDetails` (`inheritedFrom` for a shared drive's items only)."""
    fake, seeded, http = google
    auth = await bearer(fake, http)
    fake.share(seeded.private_doc, Permission("user", "writer", f"cy@{DOMAIN}", pending_owner=True))
    fake.share(seeded.private_doc, Permission("user", "reader", f"gone@{DOMAIN}", deleted=True))
    fake.share(seeded.private_doc, Permission("domain", "commenter", domain=DOMAIN))
    path = f"/drive/v3/files/{seeded.private_doc}/permissions"
    fields = "nextPageToken,permissions(id,type,role,emailAddress,domain,allowFileDiscovery,deleted,pendingOwner,permissionDetails)"
    listed: list[Any] = []
    token = ""
    for _ in range(10):
        status, body = await get(fake, http, path, auth, pageSize="2", fields=fields, pageToken=token)
        assert status == 200 and len(body["permissions"]) <= 2
        listed += body["permissions"]
        token = body.get("nextPageToken", "")
        if not token:
            break
    by_email = {p.get("emailAddress") or p.get("domain"): p for p in listed}
    assert set(by_email) == {ADA, BOB, f"cy@{DOMAIN}", f"gone@{DOMAIN}", DOMAIN}
    assert by_email[ADA]["role"] == "owner" and by_email[ADA]["deleted"] is False
    assert by_email[f"cy@{DOMAIN}"]["pendingOwner"] is True and "pendingOwner" not in by_email[BOB]
    assert by_email[f"gone@{DOMAIN}"]["deleted"] is True
    assert by_email[DOMAIN] == {
        "id": by_email[DOMAIN]["id"],
        "type": "domain",
        "role": "commenter",
        "domain": DOMAIN,
        "allowFileDiscovery": False,
        "permissionDetails": [{"permissionType": "file", "role": "commenter", "inherited": False}],
    }
    status, body = await get(fake, http, path, auth, pageSize="101")
    assert status == 400 and body["error"]["errors"][0]["location"] == "pageSize"

    _, inherited = await get(fake, http, f"/drive/v3/files/{seeded.pdf}/permissions", auth)
    assert all("inheritedFrom" not in d for p in inherited["permissions"] for d in p["permissionDetails"])
    _, member = await get(
        fake, http, f"/drive/v3/files/{seeded.drive_doc}/permissions", auth, supportsAllDrives="true"
    )
    [detail] = next(p for p in member["permissions"] if p["emailAddress"] == ADA)["permissionDetails"]
    assert detail == {
        "permissionType": "member",
        "role": "organizer",
        "inherited": True,
        "inheritedFrom": seeded.drive,
    }

    fake.unshare(seeded.private_doc, BOB)
    _, after = await get(fake, http, path, auth, fields=fields)
    assert BOB not in {p.get("emailAddress") for p in after["permissions"]}
    _, changes = await get(fake, http, "/drive/v3/changes", auth, pageToken="100", fields="changes(fileId)")
    assert changes["changes"][-1] == {"fileId": seeded.private_doc}, "a share taken back is a change"


async def test_the_directory_pages_members_and_lists_nested_groups_as_groups(google: Any) -> None:
    """Admin SDK `members.list`: `maxResults` up to 200 with `nextPageToken`; each `Member`
    with `kind`, `etag`, `id`, `email`, `role`, `type` (USER, GROUP) and `status`; a nested
    group listed as a member unless `includeDerivedMembership`; 404 for an unknown group."""
    fake, _, http = google
    key = fake.service_account_key()
    form = {"grant_type": JWT_BEARER, "assertion": assertion(key, ADA, " ".join(DIRECTORY_SCOPES))}
    _, granted = await token(fake, http, form)
    auth = {"Authorization": f"Bearer {granted['access_token']}"}
    fake.suspended.add(BOB)
    members: list[Any] = []
    page = ""
    for _ in range(5):
        status, body = await get(
            fake,
            http,
            f"/admin/directory/v1/groups/eng@{DOMAIN}/members",
            auth,
            maxResults="1",
            pageToken=page,
        )
        assert status == 200 and body["kind"] == "admin#directory#members" and len(body["members"]) == 1
        members += body["members"]
        page = body.get("nextPageToken", "")
        if not page:
            break
    assert [(m["email"], m["type"], m["status"]) for m in members] == [
        (BOB, "USER", "SUSPENDED"),
        (f"leads@{DOMAIN}", "GROUP", "ACTIVE"),
    ]
    assert set(members[0]) == {"kind", "etag", "id", "email", "role", "type", "status"}
    status, body = await get(fake, http, f"/admin/directory/v1/groups/nobody@{DOMAIN}/members", auth)
    assert status == 404 and body["error"]["errors"][0]["reason"] == "notFound"


async def test_who_may_not_share_a_file_may_not_list_its_permissions(google: Any) -> None:
    fake, seeded, http = google
    bob = await bearer(fake, http, BOB)
    status, body = await get(
        fake, http, f"/drive/v3/files/{seeded.private_doc}", bob, fields="id,permissions"
    )
    assert status == 200 and body == {"id": seeded.private_doc}, "a reader is not given the permissions"
    status, body = await get(fake, http, f"/drive/v3/files/{seeded.private_doc}/permissions", bob)
    assert status == 403 and body["error"]["errors"][0]["reason"] == "insufficientFilePermissions"
