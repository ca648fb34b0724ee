"""Settings: defaults that run with nothing configured, one clear line when a value is wrong."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.app.logs import RedactSecrets
from bot.app.settings import Settings, SettingsError, load_settings


def test_defaults_need_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    settings = load_settings()
    assert settings.effective_database_url == f"sqlite:///{tmp_path / '.lore' / 'lore.db'}"
    assert settings.chroma_host is None and settings.chroma_path == Path(".lore/chroma")
    assert settings.embedding_model == "local:all-MiniLM-L6-v2"
    assert not settings.llm_configured and not settings.slack_configured


def test_environment_and_dotenv_are_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("LLM_MODEL=llama3\nOPENAI_BASE_URL=http://127.0.0.1:11434/v1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DATABASE_URL", "postgres://lore:pw@127.0.0.1/lore")
    monkeypatch.setenv("CHROMA_HOST", "127.0.0.1")
    settings = load_settings()
    assert settings.database_url == "postgresql+psycopg://lore:pw@127.0.0.1/lore"
    assert settings.llm_model == "llama3" and settings.llm_configured
    assert settings.chroma_host == "127.0.0.1"


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("LORE_MAX_FILE_MB", "lots", "LORE_MAX_FILE_MB: Input should be a valid integer"),
        ("DATABASE_URL", "mysql://x", "DATABASE_URL: Value error, must start with sqlite://"),
        ("EMBEDDING_MODEL", "bert", "EMBEDDING_MODEL: Value error, must be local:all-MiniLM-L6-v2"),
        ("CHROMA_PORT", "70000", "CHROMA_PORT: Input should be less than or equal to 65535"),
        ("SLACK_BOT_TOKEN", "xoxp-user-token", "SLACK_BOT_TOKEN: Value error, must be a bot token"),
        (
            "LORE_SECRET_KEY",
            "hunter2",
            "LORE_SECRET_KEY: Value error, must be a Fernet key (32 bytes, URL-safe base64); make one with python -c",
        ),
        (
            "LORE_CONFLUENCE_FULL_SYNC_DAYS",
            "-1",
            "LORE_CONFLUENCE_FULL_SYNC_DAYS: Input should be greater than or equal to 0",
        ),
    ],
)
def test_invalid_values_name_the_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, variable: str, value: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_secret_values_never_appear_in_errors(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SLACK_BOT_TOKEN", "not-a-token-but-secret-4242")
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert "secret-4242" not in str(caught.value)


def test_masked_settings_hide_secrets(tmp_path: Path) -> None:
    token = "xoxb-1234567890-abcdefghijklmnop"
    settings = Settings(_env_file=None, slack_bot_token=token, openai_api_key="sk-short")  # type: ignore[call-arg]
    shown = settings.masked()
    assert token not in str(shown) and shown["SLACK_BOT_TOKEN"].startswith("xoxb-12…")
    assert shown["OPENAI_API_KEY"] == "…(8 chars)"
    assert shown["SLACK_APP_TOKEN"] == "(unset)"


def test_the_secret_key_is_shown_as_set_only_and_never_echoed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from cryptography.fernet import Fernet

    key = Fernet.generate_key().decode()
    settings = Settings(_env_file=None, lore_secret_key=key, lore_connector_admins=" U1, ,U2 ")  # type: ignore[call-arg]
    assert settings.masked()["LORE_SECRET_KEY"] == "(set)" and key[:7] not in str(settings.masked())
    assert settings.connector_admins == frozenset({"U1", "U2"})
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LORE_SECRET_KEY", "almost-a-key-but-secret-4242")
    with pytest.raises(SettingsError) as caught:
        load_settings()
    assert "secret-4242" not in str(caught.value)


def test_log_lines_never_carry_tokens(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("lore.test")
    logger.addFilter(RedactSecrets())
    with caplog.at_level(logging.INFO, logger="lore.test"):
        logger.info("calling with %s and %s", "xoxb-1111-2222-secretpart", "Bearer sk-abcdefghijklmnop")
        logger.info(
            "confluence with %s, %s", "Basic YWRhQGV4YW1wbGUuY29tOnNlY3JldA==", "ATATT3xFfGF0secretpart2"
        )
    assert "secretpart" not in caplog.text and "abcdefghijklmnop" not in caplog.text
    assert "YWRhQGV4YW1wbGUuY29t" not in caplog.text
    assert "[redacted]" in caplog.text
