"""The middleware that reads who and where once per request: `context["who"]` (a `Who`),
`context["workspace"]` (what Lore keeps for the workspace, `bot.slack.workspaces`) and
`context["people"]` (to turn the `Who` into an actor), which listeners receive by parameter
name.

The tenant is the workspace the app is installed in: Bolt's authorization (`auth.test` of the
bot token, cached) names it, then `authorizations[0].team_id`; never the envelope's `team_id`
or a partner's team, which in a Slack Connect channel belong to another organisation. An
org-wide install's token belongs to the organisation (`auth.test` names the organisation):
there the tenant is the request's own workspace, as Bolt reads it (`authorizations[0]`, the
payload's team), so each workspace of an organisation keeps its own memory.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext

from bot.app.audit import Origin, Surface, attribute_to
from bot.app.removals import WorkspaceRemovals
from bot.slack.people import Who
from bot.slack.workspaces import Workspaces


def read_who(body: Mapping[str, Any], context: AsyncBoltContext) -> Who | None:
    """Who acts and where, or None for a request with no person behind it."""
    event = body.get("event") or {}
    user = context.actor_user_id or context.user_id
    if not user:
        return None
    tenant = installation_team(body, context)
    channel = context.channel_id or _str(event.get("channel"))
    channel_type = event.get("channel_type") or (body.get("channel") or {}).get("name")
    is_dm = channel_type == "im" or (channel or "").startswith("D")
    # The user's own team first: for interactions Bolt's actor team is the installation's.
    user_team = (
        _str(event.get("user_team")) or _str((body.get("user") or {}).get("team_id")) or context.actor_team_id
    )
    return Who(
        tenant=tenant,
        user=str(user),
        channel=channel,
        user_team=user_team,
        is_dm=is_dm,
        shared_externally=bool(
            body.get("is_ext_shared_channel") or (body.get("channel") or {}).get("is_ext_shared")
        ),
    )


def installation_team(body: Mapping[str, Any], context: AsyncBoltContext) -> str:
    if context.is_enterprise_install:
        return str(context.team_id or "")
    authorized = context.authorize_result
    if authorized is not None and authorized.team_id:
        return authorized.team_id
    authorizations = body.get("authorizations") or []
    if authorizations and authorizations[0].get("team_id"):
        return str(authorizations[0]["team_id"])
    return str(context.team_id or body.get("team_id") or "")


def people_middleware(workspaces: Workspaces, removals: WorkspaceRemovals) -> Callable[..., Awaitable[None]]:
    noted: set[str] = set()
    """Workspaces whose organisation is on record (once per process)."""

    async def attach_who(
        body: dict[str, Any], context: AsyncBoltContext, next: Callable[[], Awaitable[None]]
    ) -> None:
        who = read_who(body, context)
        tenant = who.tenant if who is not None else installation_team(body, context)
        space = workspaces.of(tenant, context.bot_token, org_wide=bool(context.is_enterprise_install))
        if who is not None and (space is None or not who.tenant):
            who = None  # nobody to answer for: no workspace (no token) or no tenant known
        if space is not None and context.enterprise_id and tenant and tenant not in noted:
            await removals.reached_through(tenant, context.enterprise_id)
            noted.add(tenant)
        context["who"] = who
        context["workspace"] = space
        context["people"] = space.people if space is not None else None
        where = (who.channel or "") if who is not None and not who.is_dm else "DM"
        attribute_to(Origin(Surface.SLACK, where=where if who is not None else ""))
        await next()

    return attach_who


def _str(value: object) -> str | None:
    return str(value) if value else None
