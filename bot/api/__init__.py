"""Lore's HTTP API: OpenAI-compatible chat over knowledge indexes, and index, document and
query management, on aiohttp.

- `app`: the route table, `build_api` (`lore serve`) and `install_api` (beside Slack).
- `auth`: API keys and the place a key acts from; `errors`: the error shape and boundary.
- `chat`, `directives`, `chat_models`, `completions`: the chat completion routes.
- `indexes`, `documents`, `query`: management routes; `ops`: health, readiness, metrics.
- `openapi`: `/openapi.json`, built from the route table.
"""

from bot.api.app import build_api, install_api

__all__ = ["build_api", "install_api"]
