"""Credentials for a connector's API, kept out of logs and reprs.

Three shapes, one value:

- a token alone: a Confluence Data Center personal access token, a GitHub fine-grained
  personal access token (bearer tokens);
- an email and an API token: Confluence Cloud (HTTP basic);
- an app id, an installation id and a private key (PEM) in `token`: a GitHub App, which
  signs a short JWT to get installation tokens (`github_app.py`).

A `Credentials` never prints its secret: its repr and its `hint` show at most a token's last
4 characters, and nothing of a private key.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field

from storage.secrets import mask

PEM_START = "-----BEGIN "


@dataclass(frozen=True)
class Credentials:
    token: str = field(repr=False)
    """The secret: an API token, a personal access token, or a GitHub App's private key."""
    email: str | None = None
    """Set for Confluence Cloud (email + API token)."""
    app_id: str | None = None
    """Set for a GitHub App, with `installation_id`; `token` is then its private key."""
    installation_id: str | None = None

    def __post_init__(self) -> None:
        if not self.token.strip():
            raise ValueError("the token is empty")
        if self.email is not None and "@" not in self.email:
            raise ValueError("the email is not an email address")
        if (self.app_id is None) != (self.installation_id is None):
            raise ValueError("a GitHub App needs both its app id and the installation id")
        if self.app_id is not None:
            self._check_app()

    def _check_app(self) -> None:
        for name, value in (("app id", self.app_id), ("installation id", self.installation_id)):
            if not (value or "").isdigit() or len(value or "") > 20:
                raise ValueError(f"the {name} is a number (GitHub shows it on the app's page)")
        if PEM_START not in self.token or "PRIVATE KEY-----" not in self.token:
            raise ValueError(
                "the private key is not a PEM file; download one from the app's settings "
                "(“Generate a private key”) and give its contents"
            )

    @property
    def kind(self) -> str:
        if self.app_id:
            return "app"
        return "api_token" if self.email else "personal_access_token"

    @property
    def is_app(self) -> bool:
        return self.app_id is not None

    def authorization(self) -> str:
        """The `Authorization` header's value (a GitHub App's is minted by `github_app.py`)."""
        if self.email:
            pair = base64.b64encode(f"{self.email}:{self.token}".encode()).decode()
            return f"Basic {pair}"
        return f"Bearer {self.token}"

    def hint(self, credential_label: str = "personal access token") -> str:
        """What may be shown back: the account and the token's last characters at most
        (a bare token called what its kind calls it)."""
        if self.app_id:
            return f"GitHub App {self.app_id}, installation {self.installation_id} (private key sealed)"
        if self.email:
            return f"{self.email}, API token {mask(self.token)}"
        return f"{credential_label} {mask(self.token)}"

    def as_mapping(self) -> dict[str, str]:
        """For sealing at rest."""
        optional = {"email": self.email, "app_id": self.app_id, "installation_id": self.installation_id}
        return {"token": self.token, **{k: v for k, v in optional.items() if v}}

    @classmethod
    def from_mapping(cls, values: Mapping[str, str]) -> Credentials:
        return cls(
            token=values["token"],
            email=values.get("email") or None,
            app_id=values.get("app_id") or None,
            installation_id=values.get("installation_id") or None,
        )

    def __repr__(self) -> str:
        return f"Credentials({self.hint()})"
