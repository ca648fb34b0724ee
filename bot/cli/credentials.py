"""Connector credentials from `lore source add`'s options, never from the command line itself.

Secrets never come from the command line, where shell history and `ps` would keep them:
`--token-env VAR` / `--pat-env VAR` / `--client-secret-env VAR` / `--refresh-token-env VAR`
name an environment variable that holds them, a GitHub App's private key is read from
`--private-key-file` and a Google service account's key from `--key-file`, and without any
of them the token is asked for at a prompt that does not echo.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import typer

from knowledge import CONNECTORS, Credentials

MAX_KEY_BYTES = 64 * 1024


@dataclass(frozen=True)
class Options:
    """The credential options `lore source add` was given (none of them a secret)."""

    email: str | None = None
    token_env: str | None = None
    pat_env: str | None = None
    app_id: str | None = None
    installation_id: str | None = None
    private_key_file: Path | None = None
    key_file: Path | None = None
    act_as: str | None = None
    client_id: str | None = None
    client_secret_env: str | None = None
    refresh_token_env: str | None = None
    token_uri: str | None = None


def credentials_from(kind: str, given: Options) -> Credentials:
    """The credentials the options say, for a connector of `kind`: Google Drive's (a service
    account or an OAuth client), a GitHub App's, or a token (from a variable or a prompt)."""
    g = given
    google = (g.key_file, g.act_as, g.client_id, g.client_secret_env, g.refresh_token_env, g.token_uri)
    if kind == "google-drive" or any(google):
        found = _google_credentials(kind, g)
        if g.email or g.token_env or g.pat_env or g.app_id or g.installation_id or g.private_key_file:
            raise typer.BadParameter(
                "Google Drive takes --key-file with --act-as (a service account), or --client-id, "
                "--client-secret-env and --refresh-token-env (one user's OAuth client)"
            )
        return found
    if g.app_id or g.installation_id or g.private_key_file:
        return _app_credentials(
            kind, g.app_id, g.installation_id, g.private_key_file, g.email, g.token_env, g.pat_env
        )
    return _credentials(kind, g.email, g.token_env, g.pat_env)


def _credentials(kind: str, email: str | None, token_env: str | None, pat_env: str | None) -> Credentials:
    """Credentials from the environment variable named, or from an unechoed prompt."""
    if kind in ("github", "notion"):
        label = CONNECTORS[kind].label
        if email or (token_env and pat_env):
            raise typer.BadParameter(f"{label} takes one token: --token-env VAR (no --email)")
        return _token(token_env or pat_env, f"{label} token", None)
    if pat_env and (email or token_env):
        raise typer.BadParameter("use --pat-env alone (Data Center), or --email with --token-env (Cloud)")
    if token_env and not email:
        raise typer.BadParameter("--token-env goes with --email (Cloud); for Data Center use --pat-env")
    return _token(pat_env or token_env, "API token" if email else "Personal access token", email)


def _token(variable: str | None, prompt: str, email: str | None) -> Credentials:
    if variable:
        token = os.environ.get(variable, "")  # named by the user at the entry point: not a setting
        if not token.strip():
            raise typer.BadParameter(f"the environment variable {variable} is empty or unset")
    else:
        token = typer.prompt(prompt, hide_input=True)
    try:
        return Credentials(token.strip(), email)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def _app_credentials(
    kind: str,
    app_id: str | None,
    installation_id: str | None,
    key_file: Path | None,
    *others: str | None,
) -> Credentials:
    if kind != "github":
        raise typer.BadParameter("--app-id, --installation-id and --private-key-file are for a GitHub App")
    if any(others):
        raise typer.BadParameter(
            "a GitHub App signs in with its key alone: no --email, --token-env or --pat-env"
        )
    if not (app_id and installation_id and key_file):
        raise typer.BadParameter("a GitHub App needs --app-id, --installation-id and --private-key-file")
    try:
        if key_file.stat().st_size > MAX_KEY_BYTES:
            raise typer.BadParameter(
                f"{key_file} is too large to be a private key", param_hint="--private-key-file"
            )
        key = key_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise typer.BadParameter(f"can't read {key_file}: {exc}", param_hint="--private-key-file") from None
    try:
        return Credentials(key, app_id=app_id.strip(), installation_id=installation_id.strip())
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def _google_credentials(kind: str, given: Options) -> Credentials:
    """A service account's key (read from its file) acting as a user, or an OAuth client's
    id with its secret and a refresh token from the environment variables named."""
    if kind != "google-drive":
        raise typer.BadParameter(
            "--key-file, --act-as, --client-id, --client-secret-env, --refresh-token-env and --token-uri "
            "are for Google Drive"
        )
    try:
        if given.key_file is not None:
            return _service_account(given.key_file, given)
        return _oauth_client(given)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def _service_account(key_file: Path, given: Options) -> Credentials:
    if any((given.client_id, given.client_secret_env, given.refresh_token_env, given.token_uri)):
        raise typer.BadParameter("give a service account's --key-file, or an OAuth client: not both")
    if not given.act_as:
        raise typer.BadParameter(
            "a service account acts as a Workspace user: --act-as you@your-domain",
            param_hint="--act-as",
        )
    return _google({"key": _read_small(key_file, "--key-file"), "act_as": given.act_as})


def _oauth_client(given: Options) -> Credentials:
    if given.act_as:
        raise typer.BadParameter("--act-as goes with a service account's --key-file")
    client_id, secret_env, refresh_env = given.client_id, given.client_secret_env, given.refresh_token_env
    if not (client_id and secret_env and refresh_env):
        raise typer.BadParameter(
            "connect Google Drive with --key-file KEY.json --act-as USER (a service account), or with "
            "--client-id, --client-secret-env and --refresh-token-env (one user's OAuth client)"
        )
    secret = _secret(secret_env)
    refresh = _secret(refresh_env)
    return _google(
        {
            "client_id": client_id,
            "client_secret": secret,
            "refresh_token": refresh,
            "token_uri": given.token_uri or "",
        }
    )


def _google(fields: dict[str, str]) -> Credentials:
    read = CONNECTORS["google-drive"].read_credentials
    assert read is not None  # Google Drive reads its own credentials
    return read(fields)


def _secret(variable: str) -> str:
    value = os.environ.get(variable, "")  # named by the user at the entry point: not a setting
    if not value.strip():
        raise typer.BadParameter(f"the environment variable {variable} is empty or unset")
    return value.strip()


def _read_small(path: Path, hint: str) -> str:
    try:
        if path.stat().st_size > MAX_KEY_BYTES:
            raise typer.BadParameter(f"{path} is too large to be a key", param_hint=hint)
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise typer.BadParameter(f"can't read {path}: {exc}", param_hint=hint) from None
