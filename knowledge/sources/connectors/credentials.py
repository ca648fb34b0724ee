"""Credentials for a connector's API, kept out of logs and reprs.

Confluence Cloud signs in with an account's email and an API token (HTTP basic);
Confluence Data Center with a personal access token (a bearer token). A `Credentials`
never prints its token: its repr and its `hint` show at most the last 4 characters.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field

from storage.secrets import mask


@dataclass(frozen=True)
class Credentials:
    token: str = field(repr=False)
    email: str | None = None
    """Set for Cloud (email + API token); None for a Data Center personal access token."""

    def __post_init__(self) -> None:
        if not self.token.strip():
            raise ValueError("the token is empty")
        if self.email is not None and "@" not in self.email:
            raise ValueError("the email is not an email address")

    @property
    def kind(self) -> str:
        return "api_token" if self.email else "personal_access_token"

    def authorization(self) -> str:
        """The `Authorization` header's value."""
        if self.email:
            pair = base64.b64encode(f"{self.email}:{self.token}".encode()).decode()
            return f"Basic {pair}"
        return f"Bearer {self.token}"

    def hint(self) -> str:
        """What may be shown back: the account and the token's last characters at most."""
        if self.email:
            return f"{self.email}, API token {mask(self.token)}"
        return f"personal access token {mask(self.token)}"

    def as_mapping(self) -> dict[str, str]:
        """For sealing at rest."""
        return {"token": self.token, **({"email": self.email} if self.email else {})}

    @classmethod
    def from_mapping(cls, values: Mapping[str, str]) -> Credentials:
        return cls(token=values["token"], email=values.get("email") or None)

    def __repr__(self) -> str:
        return f"Credentials({self.hint()})"
