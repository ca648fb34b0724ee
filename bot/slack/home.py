"""The Home tab: published (`views.publish`) when someone opens it, and again after each
action taken from it, with a line saying what happened. What it shows and what its
buttons do are the use cases in `bot.app.actions.home`, which check the permission table;
this module reads Slack's payloads and renders.

The channels a person acts on from the Home are only those Slack says they share with
Lore (`users.conversations`), so nobody changes a channel they are not in.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.app.actions import AddOutcome
from bot.app.conversations import place_of
from bot.chat import messages
from bot.chat.router import outcome_line
from bot.chat.runtime import Runtime
from bot.slack.events import SlackEvents
from bot.slack.home_view import (
    ADD_URL,
    DISABLE,
    ENABLE,
    REFRESH_JOB,
    SITE,
    STOP_JOB,
    VERIFIED_FORM,
    VERIFIED_MENU,
    add_url_modal,
    channel_choice,
    home_view,
    partner_view,
    target_of,
    verified_choice,
    verified_modal,
)
from bot.slack.people import People, Who
from knowledge import KnowledgeError
from storage.records import NotFound

log = logging.getLogger(__name__)
Json = dict[str, Any]


async def _home_tab(event: Json) -> bool:
    return event.get("tab") == "home"


class AppHome:
    def __init__(self, runtime: Runtime, events: SlackEvents) -> None:
        self._runtime = runtime
        self._home = runtime.services.actions.home
        self._helping = runtime.services.actions.helping
        self._events = events

    def register(self, app: AsyncApp) -> None:
        app.event("app_home_opened", matchers=[_home_tab])(self.opened)
        app.action(ADD_URL)(self.open_add_url)
        app.view(ADD_URL)(self.add_url)
        app.action(ENABLE)(self.enable)
        app.action(DISABLE)(self.disable)
        app.action(REFRESH_JOB)(self._job_button(self.refresh_job))
        app.action(STOP_JOB)(self._job_button(self.stop_job))
        app.action(VERIFIED_MENU)(self.verified_menu)
        app.view(VERIFIED_FORM)(self.verified_edited)

    async def opened(self, client: AsyncWebClient, who: Who | None, people: People) -> None:
        if who is not None:
            self._events.spawn(self.publish(client, who, people))

    async def publish(
        self, client: AsyncWebClient, who: Who, people: People, notice: str | None = None
    ) -> None:
        """Build the viewer's Home and publish it."""
        try:
            user = await people.user(who)
            if place_of(self._runtime.services, user).partner:
                await client.views_publish(user_id=who.user, view=partner_view())
                return
            member_of = await people.member_of(who)
            home = await self._home.home(user, member_of)
            verified = await self._helping.listing(user, member_of, people.group_members)
            await client.views_publish(user_id=who.user, view=home_view(home, notice, verified))
        except SlackApiError as exc:
            log.warning("could not publish the Home of %s: %s", who.user, exc.response.get("error"))
        except Exception:
            log.exception("could not build the Home of %s", who.user)

    # -- adding a page -------------------------------------------------------------------------

    async def open_add_url(
        self, ack: Any, body: Json, client: AsyncWebClient, who: Who | None, people: People
    ) -> None:
        await ack()
        if who is None:
            return
        user = await people.user(who)
        home = await self._home.home(user, await people.member_of(who))
        await client.views_open(trigger_id=body["trigger_id"], view=add_url_modal(home.targets))

    async def add_url(
        self, ack: Any, view: Json, client: AsyncWebClient, who: Who | None, people: People
    ) -> None:
        values = (view.get("state") or {}).get("values") or {}
        url = str(((values.get("url") or {}).get("value") or {}).get("value") or "").strip()
        if not url.lower().startswith(("https://", "http://")):
            await ack(response_action="errors", errors={"url": messages.HOME_FORM_BAD_URL})
            return
        await ack()
        chosen = ((values.get("index") or {}).get("value") or {}).get("selected_option") or {}
        target = target_of(str(chosen.get("value") or ""))
        ticked = ((values.get(SITE) or {}).get("value") or {}).get("selected_options") or []
        if who is None or target is None:
            return
        whole_site = any(o.get("value") == SITE for o in ticked)
        self._events.spawn(self._add_url(client, who, people, url, target, whole_site))

    async def _add_url(
        self,
        client: AsyncWebClient,
        who: Who,
        people: People,
        url: str,
        target: tuple[int, str | None],
        whole_site: bool,
    ) -> None:
        index_id, channel = target

        async def act() -> str:
            index, done = await self._home.add_url(
                await people.user(who),
                index_id,
                channel,
                url,
                whole_site=whole_site,
                member_of=await people.member_of(who),
                fetcher=self._runtime.fetcher,
            )
            if isinstance(done, AddOutcome):
                return outcome_line(done, index)
            if done.already_running:
                return messages.job_already_running(done.source.name)
            return messages.home_crawling(done.source.name, index.name)

        await self._act(client, who, people, act)

    # -- a channel's indexes -----------------------------------------------------------------

    async def enable(
        self, ack: Any, action: Json, client: AsyncWebClient, who: Who | None, people: People
    ) -> None:
        await ack()
        await self._toggle(action, client, who, people, on=True)

    async def disable(
        self, ack: Any, action: Json, client: AsyncWebClient, who: Who | None, people: People
    ) -> None:
        await ack()
        await self._toggle(action, client, who, people, on=False)

    async def _toggle(
        self, action: Json, client: AsyncWebClient, who: Who | None, people: People, *, on: bool
    ) -> None:
        choice = channel_choice(str((action.get("selected_option") or {}).get("value") or ""))
        if who is None or choice is None:
            return
        channel, index_id = choice

        async def act() -> str:
            user = await people.user(who)
            index, changed, where = await self._home.set_enabled(
                user, channel, index_id, on, await people.member_of(who)
            )
            return messages.home_enabled(index.name, where.name or where.external_id, on, changed)

        self._events.spawn(self._act(client, who, people, act))

    # -- jobs ---------------------------------------------------------------------------------

    def _job_button(
        self, act: Callable[[People, Who, int], Awaitable[str]]
    ) -> Callable[..., Awaitable[None]]:
        """A Bolt listener for a job's button: acknowledge, read which job from the button's
        value, and `act` on it as the person who pressed (in the background)."""

        async def pressed(
            ack: Any, action: Json, client: AsyncWebClient, who: Who | None, people: People
        ) -> None:
            await ack()
            job_id = _job_id(action)
            if who is None or job_id is None:
                return

            async def done() -> str:
                return await act(people, who, job_id)

            self._events.spawn(self._act(client, who, people, done))

        return pressed

    async def refresh_job(self, people: People, who: Who, job_id: int) -> str:
        attached = await self._home.refresh_job(await people.user(who), job_id, await people.member_of(who))
        if attached.already_running:
            return messages.job_already_running(attached.source.name)
        return messages.home_refreshing(attached.source.name)

    async def stop_job(self, people: People, who: Who, job_id: int) -> str:
        job = await self._home.stop_job(await people.user(who), job_id, await people.member_of(who))
        return messages.stop_requested(f"job {job.id}")

    # -- verified answers -----------------------------------------------------------------

    async def verified_menu(
        self, ack: Any, body: Json, action: Json, client: AsyncWebClient, who: Who | None, people: People
    ) -> None:
        """Edit (a form), set aside for review, verify again or remove a verified answer."""
        await ack()
        choice = verified_choice(str((action.get("selected_option") or {}).get("value") or ""))
        if who is None or choice is None:
            return
        what, verified_id = choice
        helping = self._helping
        if what == "edit":
            await self._open_edit(client, body, who, people, verified_id)
            return

        async def act() -> str:
            user, member_of = await people.user(who), await people.member_of(who)
            if what == "expire":
                done = await helping.expire(user, verified_id, member_of, people.group_members)
                return messages.verified_expired(done.question)
            if what == "renew":
                done = await helping.renew(user, verified_id, member_of, people.group_members)
                return messages.verified_renewed(done.question)
            done = await helping.remove(user, verified_id, member_of, people.group_members)
            return messages.verified_removed(done.question)

        self._events.spawn(self._act(client, who, people, act))

    async def _open_edit(
        self, client: AsyncWebClient, body: Json, who: Who, people: People, verified_id: int
    ) -> None:
        """The form, for someone who may edit it (checked again when it is sent)."""
        try:
            user = await people.user(who)
            listed = await self._helping.listing(user, await people.member_of(who), people.group_members)
            found = next((v for v in listed if v.verified.id == verified_id and v.manageable), None)
            if found is None:
                raise KnowledgeError(messages.NOT_SHOWN_HERE)
            await client.views_open(trigger_id=body["trigger_id"], view=verified_modal(found.verified))
        except KnowledgeError as exc:
            await self.publish(client, who, people, messages.failed_file(str(exc)))

    async def verified_edited(
        self, ack: Any, view: Json, client: AsyncWebClient, who: Who | None, people: People
    ) -> None:
        await ack()
        verified_id = str(view.get("private_metadata") or "")
        values = (view.get("state") or {}).get("values") or {}
        text = str(((values.get("answer") or {}).get("value") or {}).get("value") or "")
        question = str(((values.get("question") or {}).get("value") or {}).get("value") or "")
        if who is None or not verified_id.isdigit():
            return

        async def act() -> str:
            user, member_of = await people.user(who), await people.member_of(who)
            done = await self._helping.edit(
                user, int(verified_id), text, member_of, people.group_members, question=question
            )
            return messages.verified_edited(done.question)

        self._events.spawn(self._act(client, who, people, act))

    async def _act(self, client: AsyncWebClient, who: Who, people: People, act: Any) -> None:
        """Do it, then publish the Home again with what happened (or why not)."""
        try:
            notice = await act()
        except NotFound:
            notice = messages.INDEX_GONE
        except KnowledgeError as exc:
            notice = messages.failed_file(str(exc))
        except Exception:
            log.exception("a Home action of %s failed", who.user)
            notice = messages.internal_error()
        await self.publish(client, who, people, notice)


def _job_id(action: Json) -> int | None:
    """The job a Home tab button names (its value), if it names one."""
    value = str(action.get("value") or "")
    return int(value) if value.isdigit() else None
