"""Tenants, users, channels and conversations: who and where Lore is talked to."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, SQLModel, col, select

from storage.db import Database
from storage.models import Channel, Conversation, ConversationKind, Tenant, User
from storage.records import ChannelRef, ConversationRef, NotFound, UserRef
from storage.repositories._rows import channel_ref, conversation_ref, user_ref
from storage.values import LOCAL_TENANT, ResponseMode, Strategy

__all__ = ["LOCAL_TENANT", "Directory"]

Row = TypeVar("Row", bound=SQLModel)


class Directory:
    """Finds or creates the people and places Lore meets; names are refreshed on sight."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def ensure_tenant(self, tenant_id: str, name: str = "") -> str:
        with self._db.session() as session:
            if session.get(Tenant, tenant_id) is None:
                _insert_or_ignore(session, Tenant(id=tenant_id, name=name))
        return tenant_id

    def ensure_user(
        self,
        tenant_id: str,
        external_id: str,
        name: str = "",
        *,
        is_admin: bool | None = None,
        home_team: str | None = None,
        is_guest: bool | None = None,
        email: str | None = None,
    ) -> UserRef:
        """The user, created on first sight; `name`, `is_admin`, `home_team` (a Slack
        Connect partner's organisation) and `email` (confirmed: "" forgets it) refreshed when
        given."""
        self.ensure_tenant(tenant_id)
        updates: dict[str, Any] = {"name": name} if name else {}
        if is_admin is not None:
            updates["is_admin"] = is_admin
        if home_team is not None:
            updates["home_team"] = home_team or None
        if is_guest is not None:
            updates["is_guest"] = is_guest
        if email is not None:
            updates["email"] = email.strip().lower() or None
        row = self._upsert(User, tenant_id, external_id, updates)
        return user_ref(row)

    def find_user(self, tenant_id: str, external_id: str) -> UserRef | None:
        """The user, if Lore has seen them (None otherwise; nothing is created)."""
        with self._db.session() as session:
            row = session.exec(
                select(User).where(User.tenant_id == tenant_id, User.external_id == external_id)
            ).first()
            return user_ref(row) if row is not None else None

    def ensure_channel(
        self,
        tenant_id: str,
        external_id: str,
        name: str = "",
        *,
        is_private: bool | None = None,
        is_shared_externally: bool | None = None,
    ) -> ChannelRef:
        """The channel, created on first sight. Privacy and sharing are only changed by what
        the caller knows (None: unknown, keep what is stored); a channel first seen without
        knowing its privacy is stored as private."""
        self.ensure_tenant(tenant_id)
        updates: dict[str, Any] = {"name": name} if name else {}
        if is_private is not None:
            updates["is_private"] = is_private
        if is_shared_externally is not None:
            updates["is_shared_externally"] = is_shared_externally
        row = self._upsert(Channel, tenant_id, external_id, updates)
        return channel_ref(row)

    def channel_conversation(self, channel: ChannelRef) -> ConversationRef:
        return self._conversation(
            channel.tenant_id, f"channel:{channel.id}", ConversationKind.CHANNEL, channel.id, None
        )

    def dm_conversation(self, user: UserRef) -> ConversationRef:
        return self._conversation(user.tenant_id, f"dm:{user.id}", ConversationKind.DM, None, user.id)

    def conversation(self, conversation_id: int) -> ConversationRef:
        with self._db.session() as session:
            row = session.get(Conversation, conversation_id)
            if row is None:
                raise NotFound(f"conversation {conversation_id}")
            return conversation_ref(row)

    def set_conversation_options(
        self,
        conversation_id: int,
        *,
        response_mode: ResponseMode | None = None,
        rag_strategy: Strategy | None = None,
        settings_locked: bool | None = None,
        require_mention: bool | None = None,
        help_channel: bool | None = None,
        help_confidence: float | None = None,
        default_confidence: bool = False,
        experts: Sequence[str] | None = None,
    ) -> ConversationRef:
        """Change a conversation's response mode, retrieval strategy, settings lock, whether
        Lore needs a mention there, whether it is a help channel (and how confident Lore
        must be to answer there unasked; `default_confidence` goes back to the default), or
        its experts."""
        with self._db.session() as session:
            row = session.get(Conversation, conversation_id)
            if row is None:
                raise NotFound(f"conversation {conversation_id}")
            if response_mode is not None:
                row.response_mode = response_mode.value
            if rag_strategy is not None:
                row.rag_strategy = rag_strategy.value
            if settings_locked is not None:
                row.settings_locked = settings_locked
            if require_mention is not None:
                row.require_mention = require_mention
            if help_channel is not None:
                row.help_channel = help_channel
            if help_confidence is not None or default_confidence:
                row.help_confidence = help_confidence
            if experts is not None:
                row.experts = list(dict.fromkeys(experts))
            session.add(row)
            return conversation_ref(row)

    def channel_conversations(
        self, tenant_id: str, external_ids: Sequence[str]
    ) -> list[tuple[ChannelRef, ConversationRef]]:
        """The conversations Lore has in those channels (by Slack id), by channel name."""
        if not external_ids:
            return []
        with self._db.session() as session:
            rows = session.exec(
                select(Channel, Conversation)
                .where(
                    Channel.tenant_id == tenant_id,
                    col(Channel.external_id).in_(list(external_ids)),
                    Conversation.channel_id == Channel.id,
                )
                .order_by(col(Channel.name), col(Channel.id))
            ).all()
            return [(channel_ref(channel), conversation_ref(conversation)) for channel, conversation in rows]

    def user(self, user_id: int) -> UserRef:
        with self._db.session() as session:
            row = session.get(User, user_id)
            if row is None:
                raise NotFound(f"user {user_id}")
            return user_ref(row)

    def channel(self, channel_id: int) -> ChannelRef:
        with self._db.session() as session:
            row = session.get(Channel, channel_id)
            if row is None:
                raise NotFound(f"channel {channel_id}")
            return channel_ref(row)

    def _upsert(
        self,
        model: type[User] | type[Channel],
        tenant_id: str,
        external_id: str,
        updates: dict[str, Any],
    ) -> Any:
        with self._db.session() as session:
            query = select(model).where(model.tenant_id == tenant_id, model.external_id == external_id)
            row = session.exec(query).first()
            if row is None:
                _insert_or_ignore(session, model(tenant_id=tenant_id, external_id=external_id, **updates))
                row = session.exec(query).one()
            elif any(getattr(row, key) != value for key, value in updates.items()):
                for key, value in updates.items():
                    setattr(row, key, value)
                session.add(row)
            return row

    def _conversation(
        self,
        tenant_id: str,
        key: str,
        kind: ConversationKind,
        channel_id: int | None,
        user_id: int | None,
    ) -> ConversationRef:
        with self._db.session() as session:
            query = select(Conversation).where(Conversation.tenant_id == tenant_id, Conversation.key == key)
            row = session.exec(query).first()
            if row is None:
                _insert_or_ignore(
                    session,
                    Conversation(
                        tenant_id=tenant_id,
                        key=key,
                        kind=kind,
                        channel_id=channel_id,
                        user_id=user_id,
                    ),
                )
                row = session.exec(query).one()
            return conversation_ref(row)


def _insert_or_ignore(session: Session, row: SQLModel) -> None:
    """Insert `row`; if a concurrent writer inserted the same key first, keep theirs."""
    savepoint = session.begin_nested()
    try:
        session.add(row)
        session.flush()
    except IntegrityError:
        savepoint.rollback()
    else:
        savepoint.commit()
