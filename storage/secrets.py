"""Credentials at rest: sealed with Fernet (AES-128-CBC with an HMAC-SHA256, from
`cryptography`) under the key in `LORE_SECRET_KEY`, and masked whenever they are shown.

Without a key Lore stores no credentials at all (`MissingSecretKey` says how to make one);
with another key than the one that sealed them, stored credentials cannot be read
(`SecretUnreadable`), and the source has to be connected again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from cryptography.fernet import Fernet, InvalidToken

from storage.records import StorageError

MAKE_KEY = 'python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'


class MissingSecretKey(StorageError):
    def __init__(self) -> None:
        super().__init__(
            "Lore keeps credentials only encrypted, and LORE_SECRET_KEY is not set. "
            f"Make a key with `{MAKE_KEY}`, put it in LORE_SECRET_KEY (in .env or the "
            "environment) and restart Lore; keep it safe, since stored credentials can only be "
            "read with it"
        )


class SecretUnreadable(StorageError):
    """Sealed with another key (LORE_SECRET_KEY changed), or damaged."""


def valid_key(key: str) -> bool:
    """Whether `key` is a Fernet key: 32 bytes, URL-safe base64."""
    try:
        Fernet(key.encode())
    except (ValueError, TypeError):
        return False
    return True


class SecretBox:
    """Seals a mapping of strings into one opaque text, and opens it again."""

    def __init__(self, key: str) -> None:
        self._fernet = Fernet(key.encode())

    def seal(self, values: Mapping[str, str]) -> str:
        return self._fernet.encrypt(json.dumps(dict(values)).encode()).decode()

    def open(self, sealed: str) -> dict[str, str]:
        try:
            values = json.loads(self._fernet.decrypt(sealed.encode()))
        except (InvalidToken, ValueError) as exc:
            raise SecretUnreadable(
                "the stored credentials can't be read with the current LORE_SECRET_KEY "
                "(was the key changed?); connect the source again"
            ) from exc
        return {str(k): str(v) for k, v in values.items()}


def mask(secret: str) -> str:
    """`…wxyz`: at most the last 4 characters, and none of a short secret."""
    return f"…{secret[-4:]}" if len(secret) >= 16 else "…"
