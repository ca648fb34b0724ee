"""Logging set-up, with a filter that keeps secrets out of every log line."""

from __future__ import annotations

import logging
import re

SECRET_PATTERNS = re.compile(
    r"(xox[abposr]-[A-Za-z0-9-]+|xapp-[A-Za-z0-9-]+|sk-[A-Za-z0-9_-]{8,}|Bearer\s+[A-Za-z0-9._~+/=-]+"
    r"|Basic\s+[A-Za-z0-9+/=]{8,}|ATATT[A-Za-z0-9_=-]{8,})"  # HTTP basic credentials, Atlassian API tokens
)


class RedactSecrets(logging.Filter):
    """Replaces anything shaped like a Slack token, an API key, a bearer or basic credential,
    or an Atlassian API token: a net under the rule that credentials are never logged."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = SECRET_PATTERNS.sub(_mask, message)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


def _mask(match: re.Match[str]) -> str:
    return match.group(0)[:5] + "…[redacted]"


def configure_logging(level: str = "INFO") -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactSecrets())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for noisy in ("chromadb", "httpx", "httpcore", "urllib3", "alembic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
