"""Doc-source connectors: remote systems whose documents Lore keeps in an index (Confluence).

    base.py            the `Connector` protocol, its values, its errors
    credentials.py     credentials that never print themselves
    confluence_api.py  Confluence's REST API over the SSRF-safe fetcher (auth, paging, 429s)
    confluence.py      the Confluence connector: spaces, CQL listings, pages, attachments
    storage_format.py  Confluence storage format → Markdown-flavoured text
    service.py         `Connections`: connect (credentials checked, then sealed), list, attach
                       (import it from there: this package imports only the light modules,
                       so that the values and errors cost no HTTP client to import)
    sync.py            `ConnectorSync`: an attachment's indexing job, incremental or complete

ConnectorError                 the message is fit for a user and says what to do next
├── BadCredentials             401
├── NoAccess                   403
├── ConnectorUnavailable       unreachable, failing, or rate-limiting past the retries
├── UnknownFolder              no such space for this account
├── NotConfigured              no LORE_SECRET_KEY, or stored credentials unreadable
└── NotConnected               no connection by that name
"""

from knowledge.sources.connectors.base import (
    BadCredentials,
    Connector,
    ConnectorError,
    ConnectorUnavailable,
    Folder,
    FolderSpec,
    NoAccess,
    NotConfigured,
    NotConnected,
    UnknownFolder,
)
from knowledge.sources.connectors.credentials import Credentials

__all__ = [
    "BadCredentials",
    "Connector",
    "ConnectorError",
    "ConnectorUnavailable",
    "Credentials",
    "Folder",
    "FolderSpec",
    "NoAccess",
    "NotConfigured",
    "NotConnected",
    "UnknownFolder",
]
