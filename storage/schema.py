"""What the schema holds besides the models: the keyword index's own objects
(`storage.keyword`) and the tables of Slack's installations, which slack_sdk's SQLAlchemy
installation and OAuth state stores read and write (`bot.slack.installs` builds the stores
on Lore's engine; migration 0013 made the tables, with room for sealed tokens). storage/
never imports slack_sdk: it names the tables, for the schema check and for removing a
workspace's rows."""

from __future__ import annotations

from storage import keyword

SLACK_INSTALLATIONS = "slack_installations"
SLACK_BOTS = "slack_bots"
SLACK_OAUTH_STATES = "slack_oauth_states"
SLACK_TABLES = frozenset({SLACK_INSTALLATIONS, SLACK_BOTS, SLACK_OAUTH_STATES})


def described_by_models(obj: object, name: str | None, type_: str, reflected: bool, other: object) -> bool:
    """Alembic `include_object` hook: False for the schema objects the models do not
    describe (Slack's installation tables and their indexes, the keyword index's objects)."""
    table = getattr(getattr(obj, "table", None), "name", None)
    if (type_ == "table" and name in SLACK_TABLES) or table in SLACK_TABLES:
        return False
    return keyword.described_by_models(obj, name, type_, reflected, other)
