"""The one `Settings` object: every layer's settings plus Slack's, read at the entry point.

`load_settings()` is called once by the CLI; everything below receives the object it
returns. Invalid values become one clear line naming the variable (`SettingsError`).
"""

from __future__ import annotations

from pydantic import Field, SecretStr, ValidationError, field_validator

from bot.app.masking import mask_text, mask_url, url_secrets
from knowledge import KnowledgeSettings
from storage.access import PartnerPolicy

SECRET_FIELDS = frozenset(
    {
        "openai_api_key",
        "slack_bot_token",
        "slack_app_token",
        "slack_signing_secret",
        "slack_client_secret",
        "lore_secret_key",
    }
)
HIDDEN_FIELDS = frozenset({"lore_secret_key"})
"""Secrets shown as set or unset only: not even their first characters."""


class SettingsError(Exception):
    """A setting is invalid; the message names the variable and what is wrong."""


class Settings(KnowledgeSettings):
    """Everything Lore can be configured with. Defaults run Lore with nothing configured."""

    slack_bot_token: SecretStr | None = Field(default=None, description="xoxb-… bot token.")
    slack_app_token: SecretStr | None = Field(
        default=None, description="xapp-… app-level token; set to use Socket Mode."
    )
    slack_signing_secret: SecretStr | None = Field(
        default=None, description="Verifies HTTP-mode requests from Slack."
    )
    slack_client_id: str | None = Field(
        default=None,
        description="The Slack app's Client ID: with SLACK_CLIENT_SECRET (and LORE_SECRET_KEY), Lore "
        "installs into any workspace from /slack/install (OAuth), instead of SLACK_BOT_TOKEN's one.",
    )
    slack_client_secret: SecretStr | None = Field(
        default=None, description="The Slack app's Client Secret (OAuth installs)."
    )
    slack_redirect_uri: str | None = Field(
        default=None,
        description="OAuth installs: this server's https://<host>/slack/oauth_redirect, as listed in "
        "the app's Redirect URLs (unset: Slack uses the app's only one).",
    )
    slack_api_url: str = Field(default="https://slack.com/api/", description="Slack Web API base URL.")
    lore_uninstall_grace_hours: float = Field(
        default=72.0,
        ge=0,
        description="When Lore is uninstalled from a workspace (or its bot token revoked), its tokens "
        "are dropped at once and its data (documents, vectors, answers, credentials) this many hours "
        "later; installing Lore there again before then keeps it.",
    )
    lore_answer_concurrency: int = Field(
        default=4,
        ge=1,
        le=64,
        description="Messages worked on at once; more wait their turn, acknowledged and marked as being worked on.",
    )
    lore_ingest_concurrency: int = Field(
        default=2,
        ge=1,
        le=16,
        description="Uploads (files, saved threads) ingested at once in Slack, apart from answers: "
        "a big upload never holds up a question.",
    )
    lore_slack_freshen_seconds: float = Field(
        default=10.0,
        ge=0,
        description="How long after a message, edit or deletion in a learned channel its thread "
        "(or day) is read again, so a burst of messages is read once.",
    )
    lore_learn_max_messages: int = Field(
        default=50_000,
        ge=1,
        description="The most messages (replies included) a learned channel keeps: a sync reads "
        "the newest this many, and past it the oldest are forgotten as new ones arrive; the channel "
        "is told so when it first reaches it.",
    )
    lore_jobs_in_process: bool = Field(
        default=True,
        description="Run indexing jobs inside the bot; false when `lore worker` processes run them.",
    )
    lore_job_workers: int = Field(
        default=2, ge=1, le=16, description="Indexing jobs run at once per process."
    )
    lore_job_stale_seconds: float = Field(
        default=30.0, gt=0, description="A running job whose worker is silent this long is resumed elsewhere."
    )
    lore_refresh_check_minutes: float = Field(
        default=10.0, gt=0, description="How often the scheduler looks for sources due a refresh."
    )
    lore_progress_seconds: float = Field(
        default=3.0, gt=0, description="How often a job's progress message is updated in the thread."
    )
    lore_help_confidence: float = Field(
        default=0.96,
        ge=0,
        le=1,
        description="How confident Lore must be to answer a question in a help channel, where nobody "
        "asked it (0 to 1; stricter than a mention, which answers above the calibrated threshold, "
        "about 0.44). A channel's admin may set its own (`answer questions here when 80% sure`).",
    )
    lore_verified_review_days: int = Field(
        default=90,
        ge=0,
        le=3650,
        description="Days after which a verified answer is set aside for review (no longer answered "
        "with until an expert verifies it again); 0: never. A change to a document it cites does "
        "the same at once.",
    )
    lore_mcp_max_chars: int = Field(
        default=40_000,
        ge=2_000,
        le=1_000_000,
        description="Most characters of text one MCP tool result or resource carries (passages, an "
        "answer's quotes, a document's text); what is cut says so.",
    )
    lore_connector_admins: str = Field(
        default="",
        description="Comma-separated Slack user ids who may connect doc sources (Confluence, GitHub) "
        "besides the workspace's admins.",
    )
    lore_slack_connect: PartnerPolicy = Field(
        default=PartnerPolicy.CHANNEL_ONLY,
        description="What people of other organisations in Slack Connect channels get: `off` (Lore "
        "does not answer them), `channel-only` (they read the shared channel's own index; that "
        "channel searches nothing else) or `trusted` (they act as members of the workspace).",
    )

    lore_retention_days: int = Field(
        default=365,
        ge=0,
        description="Questions, answers, the feedback on them and what is logged about them are removed "
        "this many days after they were asked (0 keeps them; a workspace's admins may set their own in "
        "the console). Checked every hour.",
    )
    lore_coverage_gaps_hours: float = Field(
        default=6.0,
        gt=0,
        description="How often the coverage-gap job groups each workspace's unanswered and unhelpful "
        "questions by meaning (the console can run it at once).",
    )
    lore_console_url: str | None = Field(
        default=None,
        description="The admin console's public address (https://lore.example.com): Sign in with Slack "
        "sends people back to <this>/console/auth/slack, which must be one of the app's Redirect URLs. "
        "Unset: links from `lore admin link` use the address the request came to.",
    )
    lore_console_session_hours: float = Field(
        default=12.0, gt=0, le=24 * 30, description="How long a console sign-in lasts."
    )

    @field_validator(
        "slack_bot_token",
        "slack_app_token",
        "slack_signing_secret",
        "slack_client_id",
        "slack_client_secret",
        "slack_redirect_uri",
        "lore_console_url",
        mode="before",
    )
    @classmethod
    def _blank_slack_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("slack_bot_token")
    @classmethod
    def _bot_token_shape(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().startswith("xoxb-"):
            raise ValueError("must be a bot token starting with xoxb-")
        return value

    @field_validator("slack_app_token")
    @classmethod
    def _app_token_shape(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().startswith("xapp-"):
            raise ValueError("must be an app-level token starting with xapp-")
        return value

    @field_validator("slack_api_url")
    @classmethod
    def _slash_terminated(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must be an http(s) URL")
        return value if value.endswith("/") else value + "/"

    @field_validator("slack_redirect_uri")
    @classmethod
    def _redirect_is_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must be an http(s) URL, this server's /slack/oauth_redirect")
        return value

    @field_validator("lore_console_url")
    @classmethod
    def _console_is_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must be an http(s) URL, the console's public address")
        return value.rstrip("/") if value is not None else None

    @property
    def slack_configured(self) -> bool:
        return self.slack_bot_token is not None or self.slack_oauth

    @property
    def slack_oauth(self) -> bool:
        """Installs into any workspace (OAuth), rather than one bot token's workspace."""
        return self.slack_client_id is not None and self.slack_client_secret is not None

    @property
    def connector_admins(self) -> frozenset[str]:
        """Slack user ids allowed to connect sources, besides workspace admins."""
        return frozenset(item.strip() for item in self.lore_connector_admins.split(",") if item.strip())

    def masked(self) -> dict[str, str]:
        """Every setting as text, secrets reduced to their first characters, URLs without
        their passwords or secret query values (DATABASE_URL, OPENAI_BASE_URL …)."""
        shown: dict[str, str] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if value is None:
                shown[name.upper()] = "(unset)"
            elif name in HIDDEN_FIELDS:
                shown[name.upper()] = "(set)"
            elif name in SECRET_FIELDS:
                shown[name.upper()] = mask_secret(value.get_secret_value())
            else:
                shown[name.upper()] = mask_url(str(value)) if "://" in str(value) else str(value)
        return shown

    def secret_values(self) -> list[str]:
        """Every secret this configuration holds, to be masked wherever text is printed:
        the secret settings and the credentials inside DATABASE_URL and OPENAI_BASE_URL."""
        found = [getattr(self, name).get_secret_value() for name in SECRET_FIELDS if getattr(self, name)]
        return [*found, *url_secrets(self.database_url), *url_secrets(self.openai_base_url)]


def mask_secret(secret: str) -> str:
    """`xoxb-12…(58 chars)`: enough to recognise a secret, never enough to use it."""
    visible = 7 if len(secret) >= 20 else 0
    return f"{secret[:visible]}…({len(secret)} chars)"


def load_settings(env_file: str | None = ".env") -> Settings:
    """Read settings from the environment and an optional `.env`; raise `SettingsError`."""
    try:
        return Settings(_env_file=env_file)
    except ValidationError as exc:
        raise SettingsError(describe_validation_error(exc)) from None


def describe_validation_error(exc: ValidationError) -> str:
    """One line per problem: `LORE_MAX_FILE_MB: Input should be a valid integer (got 'x')`;
    secrets are never shown, and credentials in a URL are masked."""
    lines = []
    for error in exc.errors():
        variable = ".".join(str(part) for part in error["loc"]).upper() or "settings"
        value = error.get("input")
        shown = "" if variable.lower() in SECRET_FIELDS else f" (got {mask_text(repr(value))})"
        lines.append(f"{variable}: {error['msg']}{shown}")
    return "; ".join(lines)
