"""The use cases, once for every surface: chat (Slack and the shell), slash commands, App
Home, the CLI and the HTTP API call these and only parse input and render output.

Each use case checks the permission table (`storage.access`) itself, so a surface cannot
forget to; refusals are `NotAllowed` (a `KnowledgeError`) with a sentence fit for a user.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.app.actions.access import AccessActions, Explanation, SourceStatus
from bot.app.actions.admin import AdminActions
from bot.app.actions.answers import AnswerActions
from bot.app.actions.connectors import ConnectorActions
from bot.app.actions.coverage import CoverageActions
from bot.app.actions.documents import AddOutcome, DocumentActions
from bot.app.actions.feedback import FeedbackActions, IndexReview, Verdict
from bot.app.actions.helping import HelpActions, MembersOf, VerifiedListing, no_groups
from bot.app.actions.home import Home, HomeActions
from bot.app.actions.indexes import IndexActions
from bot.app.actions.inventory import InventoryActions
from bot.app.actions.restrictions import Restricted, RestrictionActions, SlackMembers
from bot.app.actions.search import DocumentText, SearchActions
from bot.app.actions.settings import SettingActions
from bot.app.actions.sources import Attached, SourceActions
from bot.app.actions.threads import ThreadActions

if TYPE_CHECKING:
    from bot.app.services import Services

__all__ = [
    "AccessActions",
    "Actions",
    "AddOutcome",
    "AdminActions",
    "AnswerActions",
    "Attached",
    "ConnectorActions",
    "CoverageActions",
    "DocumentActions",
    "DocumentText",
    "Explanation",
    "FeedbackActions",
    "HelpActions",
    "Home",
    "HomeActions",
    "IndexActions",
    "IndexReview",
    "InventoryActions",
    "MembersOf",
    "Restricted",
    "RestrictionActions",
    "SearchActions",
    "SettingActions",
    "SlackMembers",
    "SourceActions",
    "SourceStatus",
    "ThreadActions",
    "Verdict",
    "VerifiedListing",
    "no_groups",
]


class Actions:
    """Every use case, grouped by what it acts on."""

    def __init__(self, services: Services) -> None:
        self.access = AccessActions(services)
        self.restrictions = RestrictionActions(services)
        self.indexes = IndexActions(services)
        self.documents = DocumentActions(services, self.indexes)
        self.sources = SourceActions(services)
        self.connectors = ConnectorActions(services, self.indexes, self.sources)
        self.settings = SettingActions(services)
        self.answers = AnswerActions(services, self.access)
        self.search = SearchActions(services, self.access)
        self.feedback = FeedbackActions(services)
        self.home = HomeActions(services, self.indexes, self.documents, self.sources, self.feedback)
        self.threads = ThreadActions(services, self.indexes, self.sources)
        self.helping = HelpActions(services)
        self.admin = AdminActions(services)
        self.inventory = InventoryActions(services, self.admin, self.indexes, self.documents, self.sources)
        self.coverage = CoverageActions(services, self.admin, self.indexes, self.documents)
