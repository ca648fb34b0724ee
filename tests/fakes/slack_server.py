"""A fake Slack Web API: records every call, keeps a tiny workspace, serves private files.

    async with FakeSlack() as slack:
        client = AsyncWebClient(token="xoxb-test", base_url=slack.api_url)
        ...
        [post] = await slack.wait_for("chat.postMessage")

Methods are answered from an in-memory workspace (channels, users, files, messages, views)
that tests fill with `add_*`; unknown methods answer `{"ok": true}`. Calls with a token the
fake did not issue get `invalid_auth`, exactly as Slack answers them: HTTP 200 with `ok:
false`. Besides the bot token it starts with, the fake grants tokens through Slack's OAuth
v2 flow, for other workspaces and for Enterprise Grid organisations (`slack.installs`,
`tests.fakes.slack_oauth`); what a bot posts is posted as the bot of the token used.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import hashlib
import hmac
import itertools
import json
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from . import LoopbackServer, Recorder, copy_headers
from .slack_oauth import Grant, OAuthError, SlackInstalls
from .slack_openid import SlackOpenID

Json = dict[str, Any]
Handler = Callable[[Json], Json]

# Form-encoded and query parameters carry these as JSON text; JSON bodies carry them as is.
_STRUCTURED = frozenset(
    {"blocks", "attachments", "chunks", "metadata", "view", "unfurls", "prompts", "loading_messages"}
)
_FIRST_TS = 1_700_000_000
RESPONSE_URL = "response_url"
RESPONSE_URL_USES = 5
_LOGIN_PAGE = (
    '<!DOCTYPE html><html lang="en"><head><title>Slack</title></head><body>'
    '<h1>Sign in to your workspace</h1><form action="/signin"></form></body></html>'
)


@dataclass(frozen=True)
class SlackCall:
    """One Web API call: what came in (params from query, form and JSON) and what went out."""

    method: str
    params: Json
    headers: Mapping[str, str]
    received_at: float
    status: int
    response: Json

    @property
    def ok(self) -> bool:
        return self.status == 200 and bool(self.response.get("ok"))


@dataclass(frozen=True)
class Download:
    """One GET of a private file URL; `authorized` says whether the bot token came with it."""

    file_id: str
    name: str
    authorized: bool
    headers: Mapping[str, str]
    received_at: float


def signed_headers(body: str, secret: str, timestamp: int | None = None) -> dict[str, str]:
    """The headers Slack sends with a request it signs (v0 signature), at `timestamp` or now."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"v0:{stamp}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": f"v0={digest}"}


class SlackError(Exception):
    """Raised by a method handler to answer `{"ok": false, "error": error}`."""

    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


def _required(params: Json, name: str) -> str:
    value = params.get(name)
    if value is None or value == "":
        raise SlackError("invalid_arguments")
    return str(value)


def _decoded(name: str, value: str) -> Any:
    if name in _STRUCTURED and value[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


async def _read_params(request: web.Request) -> Json:
    """Query string, then form or JSON body, into one dict (later sources win)."""
    params: Json = {k: _decoded(k, v) for k, v in request.query.items()}
    if request.content_type == "application/json":
        with suppress(ValueError):  # unparsable counts as empty; methods then lack arguments
            body = await request.json()
            params.update(body if isinstance(body, dict) else {})
    elif request.can_read_body:
        form = await request.post()
        params.update({k: _decoded(k, v) for k, v in form.items() if isinstance(v, str)})
    return params


def _recorded_only(params: Json) -> Json:
    return {}


def _needs(params: Json, *names: str) -> Json:
    """Answer `{}` once the required arguments are there (`invalid_arguments` otherwise)."""
    for name in names:
        _required(params, name)
    return {}


def _stream_text(params: Json) -> str:
    chunks = params.get("chunks") or []
    texts = [c.get("text", "") for c in chunks if c.get("type") == "markdown_text"]
    return str(params.get("markdown_text") or "") + "".join(texts)


def _kind(channel: Json) -> str:
    if channel.get("is_im"):
        return "im"
    if channel.get("is_mpim"):
        return "mpim"
    return "private_channel" if channel.get("is_private") else "public_channel"


def _cursor(offset: int) -> str:
    return base64.b64encode(f"next_offset:{offset}".encode()).decode()


def _offset(cursor: str | None) -> int:
    if not cursor:
        return 0
    try:
        return int(base64.b64decode(cursor).decode().removeprefix("next_offset:"))
    except ValueError:
        raise SlackError("invalid_cursor") from None


class FakeSlack(LoopbackServer):
    """Slack Web API on loopback; pass `api_url` as slack_sdk's `base_url`."""

    def __init__(
        self,
        bot_token: str = "xoxb-test",
        team_id: str = "T0001",
        bot_user_id: str = "UBOT",
        *,
        bot_id: str = "B0001",
        team_name: str = "Lore Test",
        bot_name: str = "lore",
    ) -> None:
        super().__init__()
        self.bot_token, self.team_id, self.bot_user_id = bot_token, team_id, bot_user_id
        self.bot_id, self.team_name, self.bot_name = bot_id, team_name, bot_name
        self._calls: Recorder[SlackCall] = Recorder(lambda c: c.method)
        self._downloads: Recorder[Download] = Recorder(lambda d: d.name)
        self._channels: dict[str, Json] = {}
        self._users: dict[str, Json] = {}
        self._files: dict[str, tuple[Json, bytes]] = {}
        self._messages: dict[tuple[str, str], Json] = {}
        self._streaming: set[tuple[str, str]] = set()
        self._views: dict[str, Json] = {}
        self._members: dict[str, set[str]] = {}
        """Who is in each channel: whoever posted there, and whoever `join()` added."""
        self._rate_limits: dict[str, int] = {}
        self._response_urls: dict[str, int] = {}
        """Uses left of each response_url handed out (Slack allows five)."""
        self.granted_scopes: tuple[str, ...] | None = None
        """What auth.test reports in `x-oauth-scopes` (None: no header)."""
        self._groups: dict[str, list[str]] = {}
        """User groups (S…) and their members, for usergroups.users.list."""
        self._failures: dict[str, list[str]] = {}
        self._download_delays: dict[str, float] = {}
        self._serial = itertools.count(1)
        self._methods = self._handlers()
        self.installs = SlackInstalls(bot_token, team_id, bot_user_id, bot_id)
        """Tokens the fake accepts, and the OAuth flow that grants more."""
        self.installs.names[team_id] = team_name
        self.openid = SlackOpenID(self.installs, self.installs.names)
        """Sign in with Slack (OpenID Connect): who signs in next, and the tokens it grants."""
        self._grant: Grant = self.installs.grants[bot_token]
        """The grant of the call being answered (calls are answered one at a time)."""
        self.add_user(bot_user_id, bot_name, is_bot=True)

    # -- what tests read ------------------------------------------------------------------

    @property
    def api_url(self) -> str:
        return f"{self.base_url}/api/"

    @property
    def calls(self) -> list[SlackCall]:
        return self._calls.snapshot()

    @property
    def downloads(self) -> list[Download]:
        return self._downloads.snapshot()

    @property
    def views(self) -> dict[str, Json]:
        return copy.deepcopy(self._views)

    def calls_to(self, method: str) -> list[SlackCall]:
        return [c for c in self.calls if c.method == method]

    def message(self, channel: str, ts: str) -> Json | None:
        found = self._messages.get((channel, ts))
        return self._public(found) if found is not None else None

    def thread(self, channel: str, thread_ts: str) -> list[Json]:
        """The parent and its replies, oldest first, as conversations.replies returns them."""
        found = [
            m
            for (c, ts), m in list(self._messages.items())
            if c == channel and (ts == thread_ts or m.get("thread_ts") == thread_ts)
        ]
        return [self._public(m) for m in sorted(found, key=lambda m: float(m["ts"]))]

    def file(self, file_id: str) -> Json:
        """A registered file as files.info shows it, `url_private*` pointing at this server."""
        meta = self._files[file_id][0]
        url = f"{self.base_url}/files/{file_id}"
        private = {"url_private": f"{url}/{meta['name']}"}
        return {**meta, **private, "url_private_download": f"{url}/download/{meta['name']}"}

    async def wait_for(
        self,
        method: str,
        count: int = 1,
        timeout: float = 5.0,  # noqa: ASYNC109 - on expiry, the error lists what did arrive
    ) -> list[SlackCall]:
        """Wait until `count` calls to `method` were answered; return the calls to it."""
        what = f"call(s) to {method}"
        return await self._calls.wait_for(lambda c: c.method == method, count, timeout, what)

    async def wait_until(
        self,
        match: Callable[[SlackCall], bool],
        timeout: float = 5.0,  # noqa: ASYNC109 - on expiry, the error lists what did arrive
        what: str = "matching call",
    ) -> SlackCall:
        """Wait for the first call that `match` accepts; return it."""
        return (await self._calls.wait_for(match, 1, timeout, what))[0]

    async def wait_for_download(
        self,
        file_id: str,
        timeout: float = 5.0,  # noqa: ASYNC109 - on expiry, the error lists what did arrive
    ) -> Download:
        """Wait until a download of `file_id` has begun (it is recorded as it arrives)."""
        what = f"a download of {file_id}"
        return (await self._downloads.wait_for(lambda d: d.file_id == file_id, 1, timeout, what))[0]

    def wait_for_sync(self, method: str, count: int = 1, timeout: float = 5.0) -> list[SlackCall]:
        """Blocking `wait_for`, for a server started with `with` / `start_in_thread()`."""
        what = f"call(s) to {method}"
        return self._calls.wait_for_sync(lambda c: c.method == method, count, timeout, what)

    # -- what tests script ----------------------------------------------------------------

    def add_channel(
        self,
        id: str,
        name: str,
        is_private: bool = False,
        is_im: bool = False,
        *,
        is_mpim: bool = False,
        is_ext_shared: bool = False,
        user: str | None = None,
    ) -> Json:
        """A conversation as conversations.info describes it (a group DM reports `is_mpim`
        and, like Slack's, not `is_private`; a Slack Connect channel `is_ext_shared`; a DM
        with the bot names its `user`)."""
        channel = {
            "id": id, "name": name, "is_channel": not (is_private or is_im or is_mpim),
            "is_group": is_private, "is_im": is_im, "is_mpim": is_mpim, "is_private": is_private or is_im,
            "is_member": True, "is_archived": False, "context_team_id": self.team_id,
            "is_ext_shared": is_ext_shared, "is_shared": is_ext_shared,
        }  # fmt: skip
        if is_im and user is not None:
            channel["user"] = user
        self._channels[id] = channel
        return channel

    def add_user(
        self,
        id: str,
        name: str,
        is_admin: bool = False,
        is_bot: bool = False,
        *,
        team_id: str | None = None,
        is_restricted: bool = False,
        is_stranger: bool = False,
        enterprise_teams: Sequence[str] | None = None,
        display_name: str | None = None,
        real_name: str | None = None,
        email: str | None = None,
        email_confirmed: bool = True,
    ) -> Json:
        """A user as users.info describes them. `team_id` another organisation's for a Slack
        Connect partner: Slack then shows a narrower object (their own team's id, a profile
        without email or local roles, no time zone); `is_stranger` for someone Slack says
        belongs to another workspace; `enterprise_teams` the workspaces of an Enterprise
        Grid organisation they belong to (`enterprise_user.teams`); `is_restricted` for a
        guest. `display_name` and `real_name` default to `name` (\"\" leaves one unset, as
        Slack leaves an empty display name). `email` in their profile (as `users:read.email`
        shows it, never to another organisation), `email_confirmed` what `is_email_confirmed`
        says of it."""
        team = team_id or self.team_id
        shown = name if display_name is None else display_name
        real = name if real_name is None else real_name
        profile = {"real_name": real, "real_name_normalized": real, "display_name": shown,
                   "display_name_normalized": shown, "team": team}  # fmt: skip
        user: Json = {"id": id, "team_id": team, "name": name, "deleted": False, "is_bot": is_bot,
                      "is_app_user": False, "updated": _FIRST_TS, "profile": profile}  # fmt: skip
        if team == self.team_id or enterprise_teams:
            user.update(
                real_name=real, is_admin=is_admin, is_owner=False, is_primary_owner=False,
                is_restricted=is_restricted, is_ultra_restricted=False, tz="UTC", tz_label="UTC", tz_offset=0,
                is_email_confirmed=email_confirmed,
            )  # fmt: skip
            if email is not None:
                profile["email"] = email
        if is_stranger:
            user["is_stranger"] = True
        if enterprise_teams:
            user["enterprise_user"] = {
                "id": id, "enterprise_id": "E0ORG", "enterprise_name": "Org", "is_admin": is_admin,
                "is_owner": False, "is_primary_owner": False, "teams": list(enterprise_teams),
            }  # fmt: skip
        self._users[id] = user
        return user

    def add_file(
        self,
        id: str,
        name: str,
        content: bytes,
        mimetype: str = "text/plain",
        filetype: str = "text",
    ) -> None:
        """Register a file; downloading it needs the bot token (see `file()` for its URLs)."""
        meta = {
            "id": id, "name": name, "title": name, "mimetype": mimetype, "filetype": filetype,
            "size": len(content), "user": self.bot_user_id, "created": _FIRST_TS,
        }  # fmt: skip
        self._files[id] = (meta, content)

    def add_message(
        self,
        channel: str,
        ts: str,
        text: str,
        user: str,
        thread_ts: str | None = None,
        files: Sequence[str | Mapping[str, Any]] | None = None,
    ) -> Json:
        """Register a message; `files` are ids from `add_file` or whole file objects."""
        self.join(channel, user)
        message: Json = {"type": "message", "user": user, "text": text, "ts": ts}
        if thread_ts is not None:
            message["thread_ts"] = thread_ts
        if files:
            # Ids stay ids until shown, so files may be added before the server has a port.
            message["files"] = [f if isinstance(f, str) else dict(f) for f in files]
        self._store(channel, message)
        return message

    def add_usergroup(self, id: str, users: Sequence[str]) -> None:
        """A user group (`<!subteam^S…>`) and who is in it."""
        self._groups[id] = list(users)

    def response_url(self) -> str:
        """A new response_url, as slash commands and interactions carry: POSTing a message
        to it is recorded as a `response_url` call (its JSON body, and `url` naming it)."""
        key = f"R{next(self._serial):06d}"
        self._response_urls[key] = RESPONSE_URL_USES
        return f"{self.base_url}/response/{key}"

    def join(self, channel: str, *users: str) -> None:
        """Make `users` members of `channel` (users.conversations lists it for them)."""
        self._members.setdefault(channel, set()).update(users)

    def edit_message(self, channel: str, ts: str, text: str, editor: str | None = None) -> Json:
        """Change a stored message's text as its author's edit would (Slack marks it `edited`)."""
        message = self._messages[(channel, ts)]
        message["text"] = text
        message["edited"] = {"user": editor or message.get("user", ""), "ts": self._next_ts()}
        return self._public(message)

    def delete_message(self, channel: str, ts: str) -> Json:
        """Remove a stored message; the message as it was."""
        return self._public(self._messages.pop((channel, ts)))

    def slow_download(self, file_id: str, seconds: float) -> None:
        """Hold every download of `file_id` for `seconds` before answering (a big file on a
        slow link)."""
        self._download_delays[file_id] = seconds

    def rate_limit(self, method: str, times: int = 1) -> None:
        """Answer the next `times` calls to `method` with HTTP 429 and `Retry-After: 0`."""
        self._rate_limits[method] = self._rate_limits.get(method, 0) + times

    def fail(self, method: str, error: str, times: int = 1) -> None:
        """Answer the next `times` calls to `method` with `{"ok": false, "error": error}`."""
        self._failures.setdefault(method, []).extend([error] * times)

    def recover(self, method: str) -> None:
        """Forget the failures still scripted for `method`: it answers normally again."""
        self._failures.pop(method, None)

    # -- the server -----------------------------------------------------------------------

    def build_app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_get("/oauth/v2/authorize", self.installs.authorize)
        app.router.add_get("/openid/connect/authorize", self.openid.authorize)
        app.router.add_post("/response/{key}", self._respond)
        app.router.add_get("/files/{file_id}/{name}", self._download)
        app.router.add_get("/files/{file_id}/download/{name}", self._download)
        return app

    async def _api(self, request: web.Request) -> web.Response:
        received = time.monotonic()
        method = request.match_info["method"]
        params = await _read_params(request)
        token = params.pop("token", None)
        auth = request.headers.get("Authorization", "")
        if method == "oauth.v2.access":
            status, body, headers = self._oauth(params, auth)
        elif method.startswith("openid.connect."):
            status, body, headers = self._openid(method, params, auth, token)
        else:
            status, body, headers = self._answer(method, params, auth.removeprefix("Bearer ") or token)
        if method == "auth.test" and status == 200 and self.granted_scopes is not None:
            headers = {**headers, "x-oauth-scopes": ",".join(self.granted_scopes)}
        call = SlackCall(method, params, copy_headers(request), received, status, copy.deepcopy(body))
        self._calls.append(call)
        return web.json_response(body, status=status, headers=headers)

    def _answer(self, method: str, params: Json, token: str | None) -> tuple[int, Json, Json]:
        if self._rate_limits.get(method, 0) > 0:
            self._rate_limits[method] -= 1
            return 429, {"ok": False, "error": "ratelimited"}, {"Retry-After": "0"}
        if self._failures.get(method):
            return 200, {"ok": False, "error": self._failures[method].pop(0)}, {}
        handler = self._methods.get(method, _recorded_only)
        try:
            try:
                self._grant = self.installs.grant(token)
            except OAuthError as exc:
                raise SlackError(exc.error) from None
            return 200, {"ok": True, **handler(params)}, {}
        except SlackError as err:
            return 200, {"ok": False, "error": err.error}, {}

    def _oauth(self, params: Json, authorization: str) -> tuple[int, Json, Json]:
        """oauth.v2.access needs no token: the app's client credentials instead."""
        if self._failures.get("oauth.v2.access"):
            return 200, {"ok": False, "error": self._failures["oauth.v2.access"].pop(0)}, {}
        try:
            return 200, {"ok": True, **self.installs.access(params, authorization)}, {}
        except OAuthError as err:
            return 200, {"ok": False, "error": err.error}, {}

    def _openid(
        self, method: str, params: Json, authorization: str, token: str | None
    ) -> tuple[int, Json, Json]:
        """Sign in with Slack: the token method takes the app's credentials, userInfo a user
        token it granted."""
        try:
            if method == "openid.connect.token":
                return 200, {"ok": True, **self.openid.token(params, authorization)}, {}
            if method == "openid.connect.userInfo":
                bearer = (
                    authorization.removeprefix("Bearer ") if authorization.startswith("Bearer ") else None
                )
                return 200, {"ok": True, **self.openid.user_info(bearer or token)}, {}
            return 200, {"ok": False, "error": "unknown_method"}, {}
        except OAuthError as err:
            return 200, {"ok": False, "error": err.error}, {}

    async def _respond(self, request: web.Request) -> web.Response:
        """A POST to a response_url: Slack answers `ok`, or 404 with `expired_url` /
        `used_url` (five uses each), or what `fail("response_url", …)` scripted."""
        received = time.monotonic()
        key = request.match_info["key"]
        params = await _read_params(request)
        params["url"] = key
        status, error = 200, ""
        if self._failures.get(RESPONSE_URL):
            status, error = 404, self._failures[RESPONSE_URL].pop(0)
        elif key not in self._response_urls:
            status, error = 404, "expired_url"
        elif self._response_urls[key] <= 0:
            status, error = 404, "used_url"
        else:
            self._response_urls[key] -= 1
        body = {"ok": True} if status == 200 else {"ok": False, "error": error}
        self._calls.append(SlackCall(RESPONSE_URL, params, copy_headers(request), received, status, body))
        return web.Response(status=status, text="ok" if status == 200 else error)

    async def _download(self, request: web.Request) -> web.Response:
        file_id, name = request.match_info["file_id"], request.match_info["name"]
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        authorized = token in self.installs.grants
        headers = copy_headers(request)
        self._downloads.append(Download(file_id, name, authorized, headers, time.monotonic()))
        if not authorized:
            # Slack answers a tokenless file URL with its sign-in page, and a 200.
            return web.Response(text=_LOGIN_PAGE, content_type="text/html")
        if file_id not in self._files:
            raise web.HTTPNotFound()
        if delay := self._download_delays.get(file_id):
            await asyncio.sleep(delay)
        file, content = self._files[file_id]
        return web.Response(body=content, content_type=file["mimetype"])

    def _handlers(self) -> dict[str, Handler]:
        return {
            "auth.test": self._auth_test,
            "chat.postMessage": self._post_message,
            "chat.update": self._update,
            "chat.delete": self._delete,
            "chat.postEphemeral": self._post_ephemeral,
            "chat.startStream": self._start_stream,
            "chat.appendStream": self._append_stream,
            "chat.stopStream": self._stop_stream,
            "reactions.add": lambda p: self._react(p, adding=True),
            "reactions.remove": lambda p: self._react(p, adding=False),
            "assistant.threads.setStatus": self._set_status,
            "assistant.threads.setTitle": lambda p: _needs(p, "channel_id", "thread_ts", "title"),
            "assistant.threads.setSuggestedPrompts": self._suggested_prompts,
            "chat.getPermalink": self._permalink,
            "conversations.history": self._history,
            "conversations.info": lambda p: {"channel": self._known(self._channels, p, "channel")},
            "conversations.replies": self._replies,
            "users.info": lambda p: {"user": self._known(self._users, p, "user")},
            "users.conversations": self._user_conversations,
            "usergroups.users.list": self._group_users,
            "conversations.members": self._channel_members,
            "files.info": self._files_info,
            "views.open": self._open_view,
            "views.update": self._update_view,
            "views.publish": lambda p: self._put_view(p.get("view"), _required(p, "user_id")),
        }

    # -- method handlers ------------------------------------------------------------------

    def _next_ts(self) -> str:
        micros = 100 * next(self._serial)
        return f"{_FIRST_TS + micros // 1_000_000}.{micros % 1_000_000:06d}"

    def _store(self, channel: str, message: Json) -> None:
        self._messages[(channel, message["ts"])] = message
        parent = self._messages.get((channel, message.get("thread_ts", "")))
        if parent is not None and parent is not message:
            parent["thread_ts"] = parent["ts"]
            parent["reply_count"] = parent.get("reply_count", 0) + 1

    def _public(self, message: Json) -> Json:
        """A copy of a stored message as Slack shows it, with its file ids expanded."""
        shown = copy.deepcopy(message)
        if "files" in shown:
            shown["files"] = [self.file(f) if isinstance(f, str) else f for f in shown["files"]]
        return shown

    def _existing(self, params: Json, ts_name: str = "ts") -> Json:
        key = (_required(params, "channel"), _required(params, ts_name))
        if key not in self._messages:
            raise SlackError("message_not_found")
        return self._messages[key]

    @staticmethod
    def _known(registry: dict[str, Json], params: Json, name: str) -> Json:
        if (found := registry.get(_required(params, name))) is None:
            raise SlackError(f"{name}_not_found")
        return found

    def _auth_test(self, params: Json) -> Json:
        answer = self.installs.auth_test(self._grant, self.team_name.lower().replace(" ", "-"))
        return {**answer, "user": self.bot_name}

    def _bot_message(self, params: Json, text: str) -> Json:
        message = {"type": "message", "user": self._grant.bot_user_id, "bot_id": self._grant.bot_id}
        message.update(text=text, ts=self._next_ts(), team=self._grant.team_id or self.team_id)
        for name in ("thread_ts", "blocks", "attachments", "metadata"):
            if params.get(name):
                message[name] = params[name]
        return message

    def _post_message(self, params: Json) -> Json:
        channel = _required(params, "channel")
        if not any(params.get(k) for k in ("text", "blocks", "attachments", "markdown_text")):
            raise SlackError("no_text")
        text = str(params.get("text") or params.get("markdown_text") or "")
        message = self._bot_message(params, text)
        self._store(channel, message)
        return {"channel": channel, "ts": message["ts"], "message": self._public(message)}

    def _update(self, params: Json) -> Json:
        message = self._existing(params)
        for name in ("text", "blocks", "attachments", "metadata"):
            if name in params:
                message[name] = params[name]
        message["edited"] = {"user": self.bot_user_id, "ts": self._next_ts()}
        reply = {"channel": params["channel"], "ts": message["ts"], "text": message["text"]}
        return {**reply, "message": message}

    def _delete(self, params: Json) -> Json:
        self._existing(params)
        del self._messages[(params["channel"], params["ts"])]
        return {"channel": params["channel"], "ts": params["ts"]}

    def _start_stream(self, params: Json) -> Json:
        channel, _ = _required(params, "channel"), _required(params, "thread_ts")
        message = self._bot_message(params, _stream_text(params))
        self._store(channel, message)
        self._streaming.add((channel, message["ts"]))
        return {"channel": channel, "ts": message["ts"]}

    def _streaming_message(self, params: Json) -> Json:
        message = self._existing(params)
        if (params["channel"], params["ts"]) not in self._streaming:
            raise SlackError("message_not_in_streaming_state")
        message["text"] += _stream_text(params)
        return message

    def _append_stream(self, params: Json) -> Json:
        message = self._streaming_message(params)
        return {"channel": params["channel"], "ts": message["ts"]}

    def _stop_stream(self, params: Json) -> Json:
        message = self._streaming_message(params)
        self._streaming.discard((params["channel"], params["ts"]))
        for name in ("blocks", "metadata"):
            if params.get(name):
                message[name] = params[name]
        return {"channel": params["channel"], "ts": message["ts"], "message": message}

    def _react(self, params: Json, adding: bool) -> Json:
        """Reactions on messages the fake does not know are accepted and only recorded."""
        name = _required(params, "name")
        message = self._messages.get((params.get("channel", ""), params.get("timestamp", "")))
        if message is None:
            return {}
        reactions = message.get("reactions", [])
        if any(r["name"] == name for r in reactions) == adding:
            raise SlackError("already_reacted" if adding else "no_reaction")
        message["reactions"] = [r for r in reactions if r["name"] != name]
        if adding:
            message["reactions"].append({"name": name, "users": [self.bot_user_id], "count": 1})
        return {}

    def _replies(self, params: Json) -> Json:
        thread = self.thread(_required(params, "channel"), _required(params, "ts"))
        if not thread:
            raise SlackError("thread_not_found")
        start, limit = _offset(params.get("cursor")), int(params.get("limit") or 1000)
        more = start + limit < len(thread)
        next_cursor = _cursor(start + limit) if more else ""
        page = thread[start : start + limit]
        return {
            "messages": page,
            "has_more": more,
            "response_metadata": {"next_cursor": next_cursor},
        }

    def _user_conversations(self, params: Json) -> Json:
        """The known conversations `user` is a member of, of the kinds `types` asks for
        (public_channel by default), paged like Slack's."""
        user = _required(params, "user")
        kinds = set(str(params.get("types") or "public_channel").split(","))
        found = [
            channel
            for channel_id, channel in sorted(self._channels.items())
            if user in self._members.get(channel_id, set()) and _kind(channel) in kinds
        ]
        start, limit = _offset(params.get("cursor")), int(params.get("limit") or 100)
        more = start + limit < len(found)
        return {
            "channels": found[start : start + limit],
            "response_metadata": {"next_cursor": _cursor(start + limit) if more else ""},
        }

    def _channel_members(self, params: Json) -> Json:
        """conversations.members: the channel's members' ids, `limit` a page (Slack's default
        100, at most 1000), the next page's cursor in `response_metadata.next_cursor` ("" on
        the last page); `channel_not_found` for a channel it does not know."""
        channel = _required(params, "channel")
        if channel not in self._channels:
            raise SlackError("channel_not_found")
        members = sorted(self._members.get(channel, set()))
        start, limit = _offset(params.get("cursor")), min(int(params.get("limit") or 100), 1000)
        more = start + limit < len(members)
        return {
            "members": members[start : start + limit],
            "response_metadata": {"next_cursor": _cursor(start + limit) if more else ""},
        }

    def _group_users(self, params: Json) -> Json:
        group = _required(params, "usergroup")
        if group not in self._groups:
            raise SlackError("no_such_subteam")
        return {"users": list(self._groups[group])}

    def _history(self, params: Json) -> Json:
        """conversations.history: the channel's top-level messages (and thread broadcasts),
        newest first, between `oldest` and `latest` (exclusive unless `inclusive`), paged."""
        channel = _required(params, "channel")
        if channel not in self._channels:
            raise SlackError("channel_not_found")
        inclusive = str(params.get("inclusive", "")).lower() in ("1", "true")
        oldest, latest = float(params.get("oldest") or 0), float(params.get("latest") or 10**12)

        def within(ts: float) -> bool:
            return oldest <= ts <= latest if inclusive else oldest < ts < latest

        found = [
            m
            for (c, ts), m in list(self._messages.items())
            if c == channel
            and within(float(ts))
            and (m.get("thread_ts") in (None, ts) or m.get("subtype") == "thread_broadcast")
        ]
        ordered = sorted(found, key=lambda m: float(m["ts"]), reverse=True)
        start, limit = _offset(params.get("cursor")), int(params.get("limit") or 100)
        more = start + limit < len(ordered)
        return {
            "messages": [self._public(m) for m in ordered[start : start + limit]],
            "has_more": more,
            "pin_count": 0,
            "response_metadata": {"next_cursor": _cursor(start + limit) if more else ""},
        }

    def _post_ephemeral(self, params: Json) -> Json:
        """Only in a conversation the fake knows (Slack: `channel_not_found` where the bot
        is not a member)."""
        _required(params, "user")
        self._known(self._channels, params, "channel")
        return {"message_ts": self._next_ts()}

    def _set_status(self, params: Json) -> Json:
        """An empty status clears it (as posting a reply does)."""
        _needs(params, "channel_id", "thread_ts")
        if not isinstance(params.get("status"), str):
            raise SlackError("invalid_arguments")
        return {}

    def _permalink(self, params: Json) -> Json:
        message = self._existing(params, "message_ts")
        channel = params["channel"]
        domain = self.team_name.lower().replace(" ", "-")
        link = f"https://{domain}.slack.com/archives/{channel}/p{message['ts'].replace('.', '')}"
        if message.get("thread_ts") not in (None, message["ts"]):
            link += f"?thread_ts={message['thread_ts']}&cid={channel}"
        return {"channel": channel, "permalink": link}

    def _suggested_prompts(self, params: Json) -> Json:
        _required(params, "channel_id")
        prompts = params.get("prompts")
        if not isinstance(prompts, list) or not prompts or len(prompts) > 4:
            raise SlackError("invalid_arguments")
        if not all(isinstance(p, dict) and p.get("title") and p.get("message") for p in prompts):
            raise SlackError("invalid_arguments")
        return {}

    def _files_info(self, params: Json) -> Json:
        file_id = _required(params, "file")
        if file_id not in self._files:
            raise SlackError("file_not_found")
        return {
            "file": self.file(file_id),
            "comments": [],
            "response_metadata": {"next_cursor": ""},
        }

    def _put_view(self, view: Any, user_id: str | None = None, view_id: str | None = None) -> Json:
        if not isinstance(view, dict):
            raise SlackError("invalid_arguments")
        view_id = view_id or f"V{next(self._serial):010d}"
        stored = {**view, "id": view_id, "team_id": self.team_id, "bot_id": self.bot_id}
        stored.update(hash=f"{time.time():.6f}", state={"values": {}})
        if user_id is not None:
            stored["user_id"] = user_id
        self._views[view_id] = stored
        return {"view": stored}

    def _open_view(self, params: Json) -> Json:
        _required(params, "trigger_id")
        return self._put_view(params.get("view"))

    def _update_view(self, params: Json) -> Json:
        wanted = params.get("view_id") or _required(params, "external_id")
        for view_id, view in self._views.items():
            if wanted in (view_id, view.get("external_id")):
                return self._put_view(params.get("view"), view.get("user_id"), view_id)
        raise SlackError("not_found")
