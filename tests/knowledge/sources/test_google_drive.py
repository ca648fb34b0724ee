"""The Google Drive connector's values, without a server: how folders are written, the
attachment's options, Google keys checked before anything is sent (and never printed), what a
Drive file is read as, how its permissions are recorded and who they let read it, ids kept
inside their path."""

from __future__ import annotations

import json

import pytest

from knowledge.sources.connectors import FolderSpec
from knowledge.sources.connectors.drive_access import access_of, workspace_of
from knowledge.sources.connectors.drive_api import reasons
from knowledge.sources.connectors.drive_files import DriveFile, Grant, Kind, file_path
from knowledge.sources.connectors.google_drive import check_options, parse_folder
from knowledge.sources.connectors.google_keys import (
    oauth_client,
    read_key,
    service_account,
    token_origin_allowed,
)
from knowledge.sources.connectors.permissions import SourceAccess

PEM = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"
KEY = {
    "type": "service_account",
    "client_email": "lore@acme.iam.gserviceaccount.com",
    "private_key": PEM,
    "token_uri": "https://oauth2.googleapis.com/token",
    "client_id": "1234",
}


@pytest.mark.parametrize(
    ("typed", "key"),
    [
        ("https://drive.google.com/drive/folders/1AbCdEfGhIjKlMnOp", "1AbCdEfGhIjKlMnOp"),
        ("https://drive.google.com/drive/u/1/folders/1AbCdEfGhIjKlMnOp?usp=sharing", "1AbCdEfGhIjKlMnOp"),
        ("drive.google.com/drive/my-drive", "my-drive"),
        ("My Drive", "my-drive"),
        ("files shared with me", "shared-with-me"),
        ("  “Team   Handbook” ", "Team Handbook"),
        ("0ASkTcFTZCBKgP6A6QOUVcw", "0ASkTcFTZCBKgP6A6QOUVcw"),
    ],
)
def test_folders_are_read_from_links_ids_names_and_words(typed: str, key: str) -> None:
    assert parse_folder(typed) == FolderSpec(key)


@pytest.mark.parametrize("typed", ["", "   ", "x" * 201, "bad\x00name"])
def test_what_is_no_folder_is_refused(typed: str) -> None:
    with pytest.raises(ValueError, match="is not a Drive folder"):
        parse_folder(typed)


def test_link_sharing_is_the_domain_unless_an_admin_says_public() -> None:
    assert check_options({}) == {"link_sharing": "domain"}
    assert check_options({"link_sharing": "PUBLIC"}) == {"link_sharing": "public"}
    with pytest.raises(ValueError, match=r"domain .* or public"):
        check_options({"link_sharing": "world"})
    with pytest.raises(ValueError, match="takes no parts"):
        check_options({"parts": ["docs"]})


def test_a_service_account_key_is_checked_and_never_printed() -> None:
    credentials = service_account(json.dumps(KEY), "docs-bot@acme.com")
    assert credentials.hint() == (
        "service account lore@acme.iam.gserviceaccount.com acting as docs-bot@acme.com (private key sealed)"
    )
    assert "MIIEvQ" not in repr(credentials) and "MIIEvQ" not in credentials.hint()
    key = read_key(credentials)
    assert key.is_service_account and key.subject == "docs-bot@acme.com"
    assert key.token_uri == "https://oauth2.googleapis.com/token"
    for broken, said in [
        ("not json", "not JSON"),
        ("[1, 2]", "not a JSON object"),
        (json.dumps({**KEY, "type": "authorized_user"}), "not a service account key"),
        (json.dumps({**KEY, "private_key": ""}), "has no private_key"),
        (json.dumps({**KEY, "private_key": "secret"}), "not a PEM key"),
        (json.dumps({**KEY, "token_uri": "ftp://x/token"}), "not an http\\(s\\) address"),
        ("{" + " " * 20_000 + "}", "too long"),
    ]:
        with pytest.raises(ValueError, match=said):
            service_account(broken, "docs-bot@acme.com")
    with pytest.raises(ValueError, match="email address"):
        service_account(json.dumps(KEY), "docs-bot")


def test_an_oauth_client_keeps_its_refresh_token_sealed() -> None:
    credentials = oauth_client(" 1234.apps.googleusercontent.com ", "GOCSPX-secret", "1//0refresh-wxyz")
    assert credentials.hint() == "OAuth client 1234.apps.googleusercontent.com, refresh token …wxyz"
    assert "GOCSPX" not in repr(credentials) + credentials.hint()
    key = read_key(credentials)
    assert not key.is_service_account and key.info["client_id"] == "1234.apps.googleusercontent.com"
    with pytest.raises(ValueError, match="needs its client secret, refresh token"):
        oauth_client("1234", " ", "")


def test_token_requests_go_to_google_or_the_apis_own_origin_only() -> None:
    api = "http://127.0.0.1:8123"
    assert token_origin_allowed("https://oauth2.googleapis.com/token", api)
    assert token_origin_allowed("https://accounts.google.com/o/oauth2/token", api)
    assert token_origin_allowed("http://127.0.0.1:8123/token", api)
    for elsewhere in (
        "https://oauth2.googleapis.com.evil.example/token",
        "http://oauth2.googleapis.com/token",
        "http://127.0.0.1:8124/token",
        "https://evil.example/?https://oauth2.googleapis.com",
        "not a url",
    ):
        assert not token_origin_allowed(elsewhere, api), elsewhere


def test_a_files_kind_version_and_permissions() -> None:
    data = {
        "id": "1a",
        "name": "Plan.pdf",
        "mimeType": "application/pdf",
        "md5Checksum": "abc",
        "version": "7",
        "size": "1024",
        "owners": [{"displayName": "Ada", "emailAddress": "ada@acme.com"}],
        "permissions": [
            {"type": "user", "role": "owner", "emailAddress": "Ada@Acme.com"},
            {"type": "group", "role": "reader", "emailAddress": "eng@acme.com"},
            {"type": "domain", "role": "reader", "domain": "acme.com", "allowFileDiscovery": True},
            {"type": "anyone", "role": "reader", "allowFileDiscovery": False},
            {"type": "user", "role": "reader", "emailAddress": "gone@acme.com", "deleted": True},
        ],
    }
    file = DriveFile.from_json(data)
    assert (file.kind, file.read_as, file.content_version, file.author) == (
        Kind.STORED,
        "application/pdf",
        "md5:abc",
        "Ada",
    )
    assert file.facts(file.grants)["drive_access"] == (
        "anyone (with the link); domain:acme.com; group:eng@acme.com; user:ada@acme.com"
    )
    assert DriveFile.from_json({**data, "permissions": None}).facts(None)["drive_access"] == "unknown"
    doc = DriveFile.from_json(
        {"id": "1b", "name": "Notes", "mimeType": "application/vnd.google-apps.document", "version": "3"}
    )
    assert (doc.kind, doc.read_as, doc.content_version) == (Kind.DOC, "text/markdown", "v3")
    for mime, kind in [
        ("application/vnd.google-apps.form", Kind.OTHER),
        ("image/png", Kind.OTHER),
        ("application/vnd.google-apps.folder", Kind.FOLDER),
        ("application/vnd.google-apps.spreadsheet", Kind.SHEET),
    ]:
        assert DriveFile.from_json({"id": "x", "name": "x", "mimeType": mime}).kind == kind
    assert Grant.from_json({"type": "user", "deleted": True}) is None


def test_ids_stay_inside_their_path_and_errors_are_read() -> None:
    assert file_path("1aB-_c") == "/files/1aB-_c"
    assert file_path("../about?alt=media", "/export") == "/files/..%2Fabout%3Falt%3Dmedia/export"
    body = json.dumps(
        {"error": {"code": 403, "errors": [{"reason": "userRateLimitExceeded"}], "status": "X"}}
    )
    assert reasons(body) == ["userRateLimitExceeded", "X"]
    assert reasons("<html>") == []


def grants(*permissions: dict[str, object]) -> tuple[Grant, ...]:
    return tuple(g for g in map(Grant.from_json, permissions) if g is not None)


def test_drive_permissions_become_grantees_anyone_being_the_workspace_domain() -> None:
    """Every role reads; deleted and pending-owner entries and unknown roles grant nothing;
    `allowFileDiscovery` is irrelevant; "anyone" is the connection's Workspace domain unless
    the attachment says public; permissions Drive would not give: nobody."""
    shared = grants(
        {"type": "user", "role": "owner", "emailAddress": "Ada@Acme.com"},
        {"type": "user", "role": "commenter", "emailAddress": "bob@acme.com"},
        {"type": "group", "role": "writer", "emailAddress": "eng@acme.com"},
        {"type": "domain", "role": "reader", "domain": "partner.example", "allowFileDiscovery": True},
        {"type": "user", "role": "writer", "emailAddress": "cy@acme.com", "pendingOwner": True},
        {"type": "user", "role": "reader", "emailAddress": "gone@acme.com", "deleted": True},
        {"type": "user", "role": "someNewRole", "emailAddress": "eve@acme.com"},
    )
    assert access_of(shared, "acme.com", "domain") == SourceAccess.of(
        [{"user:ada@acme.com", "user:bob@acme.com", "group:eng@acme.com", "domain:partner.example"}]
    )
    for discoverable in (True, False):
        anyone = grants({"type": "anyone", "role": "reader", "allowFileDiscovery": discoverable})
        assert access_of(anyone, "acme.com", "domain") == SourceAccess.of([{"domain:acme.com"}])
        assert access_of(anyone, "acme.com", "public") == SourceAccess.public()
        assert access_of(anyone, None, "domain") == SourceAccess.of([set()]), "a consumer account: nobody"
    assert access_of(None, "acme.com", "public") == SourceAccess.nobody()
    assert access_of((), "acme.com", "domain").document_access(3).readable_by({"3:domain:acme.com"}) is False
    assert (workspace_of("Docs-Bot@ACME.com"), workspace_of("someone@gmail.com"), workspace_of(None)) == (
        "acme.com",
        None,
        None,
    )
