"""What a message to Lore asks for: one value per command, and `Question` for the rest.
How they are recognised is `bot.chat.grammar`; what each means and who may ask it is
declared in `bot.chat.commands`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Question:
    text: str


@dataclass(frozen=True)
class AddFiles:
    """“add this doc to your memory”, “remember this”."""

    thread_too: bool = False
    """Said without naming documents (“remember this”): in a thread, the thread is saved too."""


@dataclass(frozen=True)
class AddUrls:
    urls: tuple[str, ...]
    whole_site: bool = False


@dataclass(frozen=True)
class ListIndexes:
    pass


@dataclass(frozen=True)
class EnableIndex:
    name: str


@dataclass(frozen=True)
class DisableIndex:
    name: str


@dataclass(frozen=True)
class MakeDefault:
    name: str


@dataclass(frozen=True)
class CreateIndex:
    name: str


@dataclass(frozen=True)
class DeleteIndex:
    name: str


@dataclass(frozen=True)
class ListDocs:
    pass


@dataclass(frozen=True)
class Forget:
    reference: str


@dataclass(frozen=True)
class Status:
    pass


@dataclass(frozen=True)
class Help:
    pass


@dataclass(frozen=True)
class SetMode:
    mode: str


@dataclass(frozen=True)
class SetStrategy:
    strategy: str


@dataclass(frozen=True)
class StopIndexing:
    reference: str


@dataclass(frozen=True)
class Refresh:
    reference: str


@dataclass(frozen=True)
class ConnectSource:
    """“connect confluence”: opens the private form for credentials."""

    kind: str


@dataclass(frozen=True)
class ListSpaces:
    """“list confluence spaces”: what a connected Confluence offers."""


@dataclass(frozen=True)
class ListRepositories:
    """“list github repositories”: what a connected GitHub offers."""


@dataclass(frozen=True)
class ListNotion:
    """“list notion pages”: the pages and databases shared with a connected Notion."""


@dataclass(frozen=True)
class AttachNotion:
    """“add our Notion to the handbook index” (everything shared with the integration), or
    “add the notion page <link> to …” / “add the notion database <link> to …”."""

    folder: str
    index: str


@dataclass(frozen=True)
class AttachSpace:
    """“add the ENG space to the confluence index” (optionally “… page 12345 …”)."""

    space: str
    index: str
    page: str | None = None


@dataclass(frozen=True)
class AttachRepository:
    """“add the acme/payments repository to the eng index” (or “… all repositories of acme …”)."""

    repository: str
    index: str


@dataclass(frozen=True)
class ListDriveFolders:
    """“list google drive folders”: what a connected Google Drive offers."""


@dataclass(frozen=True)
class AttachDriveFolder:
    """“add the Handbook folder to the handbook index” (a Drive folder by name, link or id; a
    shared drive; “my drive”; “files shared with me”)."""

    folder: str
    index: str


@dataclass(frozen=True)
class DocumentsOnly:
    """“make the handbook index documents only” / “let the handbook index use general knowledge”."""

    name: str
    on: bool = True


@dataclass(frozen=True)
class RefreshPermissions:
    """“refresh permissions”: sync now who may read what in the connected sources, and who
    is in their groups."""


@dataclass(frozen=True)
class ExplainAccess:
    """“explain access for @someone to Payroll”: whether they may read that document, and
    why (admins only; never its text)."""

    user: str
    """A Slack user id."""
    document: str


@dataclass(frozen=True)
class MapAccount:
    """“map @alice to github octocat”: who a Slack user is in a connected source (admins only)."""

    user: str
    """A Slack user id."""
    account: str
    source: str | None = None
    """The connected source (a kind, a name, a host); None: the only one that knows people."""


@dataclass(frozen=True)
class UnmapAccount:
    """“unmap @alice from github”: take that mapping back."""

    user: str
    source: str | None = None


@dataclass(frozen=True)
class ListMappings:
    """“list account mappings”: who is mapped to which account of the connected sources."""


@dataclass(frozen=True)
class RestrictSource:
    """“restrict the notion attachment to #eng” (or “to @eng-team”): only that channel's or
    user group's members read what the attachment brings (“unrestrict …” lifts it)."""

    source: str
    """The attachment: a connector kind or name, or what it indexes."""
    index: str | None
    groups: tuple[str, ...]
    """`channel:C…` and `usergroup:S…`; empty to lift the restriction."""
    names: tuple[str, ...] = ()
    """How the message named each group (`#eng`, `@eng-team`)."""
    unlinked: bool = False
    """It named groups without Slack's links (a plain `#eng` has no id to read members by)."""


@dataclass(frozen=True)
class ShowFeedback:
    """“show feedback” (optionally “… for the eng index”): answers that did not help and
    questions Lore could not answer, for the indexes the asker looks after."""

    index: str | None = None


@dataclass(frozen=True)
class SaveThread:
    """“remember this thread”: the thread's messages, as one document."""


@dataclass(frozen=True)
class RequireMentions:
    """“require mentions here” / “answer follow-ups without a mention”."""

    required: bool


@dataclass(frozen=True)
class LearnChannel:
    """“learn this channel”: read its history into its index and keep it fresh."""


@dataclass(frozen=True)
class ForgetChannelHistory:
    """“forget this channel's history”."""


@dataclass(frozen=True)
class LockSettings:
    """“lock this channel's settings” / “unlock …”: only admins change them while locked."""

    locked: bool


@dataclass(frozen=True)
class HelpChannel:
    """“answer questions here” (optionally “… when 80% sure”) / “stop answering questions here”."""

    on: bool
    confidence: float | None = None


@dataclass(frozen=True)
class SetExperts:
    """“experts here are @a @b” (people or user groups, by Slack id) / “no experts here”."""

    experts: tuple[str, ...]


@dataclass(frozen=True)
class Teach:
    """“the answer to “how do I roll back?” is: switch the load balancer back”."""

    question: str
    answer: str


@dataclass(frozen=True)
class ListVerified:
    """“list verified answers”: the verified answers this channel keeps."""


Command = (
    Question
    | RefreshPermissions
    | ExplainAccess
    | MapAccount
    | UnmapAccount
    | ListMappings
    | RestrictSource
    | AddFiles
    | AddUrls
    | ListIndexes
    | EnableIndex
    | DisableIndex
    | MakeDefault
    | CreateIndex
    | DeleteIndex
    | ListDocs
    | Forget
    | Status
    | Help
    | SetMode
    | SetStrategy
    | LockSettings
    | DocumentsOnly
    | StopIndexing
    | Refresh
    | ConnectSource
    | ListSpaces
    | ListRepositories
    | ListNotion
    | AttachSpace
    | AttachRepository
    | ListDriveFolders
    | AttachDriveFolder
    | AttachNotion
    | ShowFeedback
    | SaveThread
    | RequireMentions
    | LearnChannel
    | ForgetChannelHistory
    | HelpChannel
    | SetExperts
    | Teach
    | ListVerified
)
