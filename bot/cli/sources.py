"""CLI commands for connector sources (Confluence, GitHub, Google Drive, Notion): `lore source
add KIND`, `lore source list`, `lore source folders SOURCE` (or `spaces`), `lore source attach
SOURCE --index NAME --space KEY [--page ID]`, `--repo OWNER/NAME` (with what to index of it),
`--folder ID|LINK|NAME` (Google Drive) or `--workspace` / `--page LINK` / `--database LINK`
(Notion), `lore source remove SOURCE`.

The credentials `add` is given are read by `bot.cli.credentials`: never from the command line.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from bot.app.actions.sources import label as source_label
from bot.app.local import operator_place
from bot.app.services import Services
from bot.chat import messages
from bot.chat.render import age, plain
from bot.cli.common import settings_or_exit, with_services
from bot.cli.credentials import Options, credentials_from
from bot.cli.jobs import follow_with_bar
from knowledge import CONNECTORS, FolderSpec
from storage.access import Place
from storage.records import ConnectionRef, JobRef
from storage.values import LOCAL_TENANT

if TYPE_CHECKING:
    from knowledge import Schedule

TENANT_HELP = "Workspace: a Slack team id (T…), or `local` for the shell and the CLI."


app = typer.Typer()
"""This module's commands; `bot.cli.main` adds them to `lore`."""

source_app = typer.Typer(
    help="Connected doc sources (Confluence, GitHub, Google Drive, Notion): add, list, folders, attach, remove.",
    no_args_is_help=True,
)
app.add_typer(source_app, name="source")


@source_app.command("add")
def add(
    kind: str = typer.Argument(..., help="What to connect: confluence, github, google-drive or notion."),
    url: str | None = typer.Option(
        None,
        "--url",
        help="The site's address: https://acme.atlassian.net/wiki (Confluence, required); GitHub: "
        "https://api.github.com by default, https://HOST/api/v3 for Enterprise Server; Notion: "
        "https://api.notion.com by default.",
    ),
    email: str | None = typer.Option(
        None, "--email", help="Confluence Cloud: the Atlassian account's email."
    ),
    token_env: str | None = typer.Option(
        None,
        "--token-env",
        help="Confluence Cloud (with --email), GitHub or Notion: the environment variable holding the API "
        "token (never the token itself); for GitHub, a fine-grained personal access token; for Notion, an "
        "internal integration's secret.",
    ),
    pat_env: str | None = typer.Option(
        None,
        "--pat-env",
        help="Confluence Data Center (or GitHub): the environment variable holding a personal access token.",
    ),
    app_id: str | None = typer.Option(None, "--app-id", help="GitHub App: the app's id."),
    installation_id: str | None = typer.Option(
        None, "--installation-id", help="GitHub App: the id of its installation on the organisation."
    ),
    private_key_file: Path | None = typer.Option(
        None, "--private-key-file", help="GitHub App: the .pem private key GitHub generated for the app."
    ),
    key_file: Path | None = typer.Option(
        None,
        "--key-file",
        help="Google Drive, service account: the JSON key the Google Cloud console downloaded (with --act-as).",
    ),
    act_as: str | None = typer.Option(
        None,
        "--act-as",
        help="Google Drive, service account: the Workspace user it acts as (domain-wide delegation).",
    ),
    client_id: str | None = typer.Option(None, "--client-id", help="Google Drive, OAuth: the client's id."),
    client_secret_env: str | None = typer.Option(
        None,
        "--client-secret-env",
        help="Google Drive, OAuth: the environment variable holding the client secret.",
    ),
    refresh_token_env: str | None = typer.Option(
        None,
        "--refresh-token-env",
        help="Google Drive, OAuth: the environment variable holding the user's refresh token.",
    ),
    token_uri: str | None = typer.Option(
        None, "--token-uri", help="Google Drive, OAuth: the token endpoint (default: Google's)."
    ),
    name: str | None = typer.Option(None, "--name", help="What to call it (default: the host)."),
    tenant: str = typer.Option(LOCAL_TENANT, "--tenant", help=TENANT_HELP),
) -> None:
    """Connect Confluence, GitHub, Google Drive or Notion: the credentials are checked against
    it, then kept encrypted (LORE_SECRET_KEY). Without --token-env/--pat-env (or a key file)
    the token is asked for, unechoed."""
    kind = _kind(kind, url)
    given = Options(
        email=email,
        token_env=token_env,
        pat_env=pat_env,
        app_id=app_id,
        installation_id=installation_id,
        private_key_file=private_key_file,
        key_file=key_file,
        act_as=act_as,
        client_id=client_id,
        client_secret_env=client_secret_env,
        refresh_token_env=refresh_token_env,
        token_uri=token_uri,
    )
    credentials = credentials_from(kind, given)

    async def work(services: Services) -> str:
        place = await _place(services, tenant)
        done = await services.actions.connectors.connect(place, url or "", credentials, kind=kind, name=name)
        connection = done.connection
        return plain(
            messages.connected(
                connection.name, done.account, connection.credentials_hint, messages.shown(done.spaces), kind
            )
        )

    typer.echo(with_services(settings_or_exit(), work))


@source_app.command("list")
def list_sources(tenant: str = typer.Option(LOCAL_TENANT, "--tenant", help=TENANT_HELP)) -> None:
    """Connected sources, credentials masked, with the indexes they fill."""

    async def work(services: Services) -> str:
        found = await services.connections.for_tenant(tenant)
        if not found:
            return "No sources connected yet. Connect one with `lore source add confluence --url URL …`."
        return "\n".join([await asyncio.to_thread(_describe, services, c) for c in found])

    typer.echo(with_services(settings_or_exit(), work))


@source_app.command("folders")
def folders(
    source: str = typer.Argument(..., help="The source: its id, name or host."),
    tenant: str = typer.Option(LOCAL_TENANT, "--tenant", help=TENANT_HELP),
) -> None:
    """What the connected account can read: Confluence spaces (what `attach --space` takes),
    GitHub repositories and their owners (what `attach --repo` takes), Google Drive folders
    and shared drives (what `attach --folder` takes), Notion pages and databases shared with
    the integration (what `attach --page` and `--database` take)."""

    async def work(services: Services) -> str:
        connection = await services.connections.find(tenant, source)
        found = await services.connections.folders(connection)
        noun = CONNECTORS[connection.kind].folder_noun if connection.kind in CONNECTORS else "folder"
        width = max([12, *(len(f.key) + 1 for f in found)])
        return "\n".join(f"{f.key:<{width}} {f.name}" for f in found) or f"The account can't read any {noun}."

    typer.echo(with_services(settings_or_exit(), work))


@source_app.command("spaces")
def spaces(
    source: str = typer.Argument(..., help="The source: its id, name or host."),
    tenant: str = typer.Option(LOCAL_TENANT, "--tenant", help=TENANT_HELP),
) -> None:
    """The spaces the connected account can read (what `attach --space` takes); `folders` too."""
    folders(source, tenant)


@source_app.command("attach")
def attach(
    source: str = typer.Argument(..., help="The source: its id, name or host."),
    index: str = typer.Option(
        ..., "--index", "-i", help="The index to fill (a shared one is created if new)."
    ),
    space: list[str] = typer.Option([], "--space", "-s", help="Confluence: a space key (repeatable)."),
    page: str | None = typer.Option(
        None,
        "--page",
        help="Confluence: only this page and its descendants (one --space); Notion: a page (its link or id) "
        "and the pages under it.",
    ),
    database: list[str] = typer.Option(
        [], "--database", help="Notion: a database (its link or id), every row of it (repeatable)."
    ),
    workspace: bool = typer.Option(
        False, "--workspace", help="Notion: everything shared with the integration, new pages included."
    ),
    repo: list[str] = typer.Option(
        [],
        "--repo",
        "-r",
        help="GitHub: a repository (owner/name) or an owner, for all of theirs (repeatable).",
    ),
    only: str | None = typer.Option(
        None, "--only", help="GitHub: what to index, some of docs,issues,pulls,discussions (default: all)."
    ),
    include: list[str] = typer.Option(
        [],
        "--include",
        help="GitHub: files to index, gitignore-style (repeatable; default: the README and doc files).",
    ),
    exclude: list[str] = typer.Option([], "--exclude", help="GitHub: files to leave out (repeatable)."),
    skip_closed: bool = typer.Option(
        False, "--skip-closed", help="GitHub: leave closed issues and pull requests out."
    ),
    folder: list[str] = typer.Option(
        [],
        "--folder",
        "-f",
        help="Google Drive: a folder (its link, id or name), a shared drive's id, my-drive or shared-with-me "
        "(repeatable).",
    ),
    link_sharing: str | None = typer.Option(
        None,
        "--link-sharing",
        help="Google Drive: who may read a file shared with anyone who has the link: domain (default) or public.",
    ),
    schedule: str = typer.Option(
        "daily", "--schedule", help="hourly, daily, weekly, `every N hours`, never."
    ),
    follow: bool = typer.Option(True, "--follow/--no-follow", help="Run the sync here with a progress bar."),
    tenant: str = typer.Option(LOCAL_TENANT, "--tenant", help=TENANT_HELP),
) -> None:
    """Attach Confluence spaces (or a page tree), GitHub repositories (or owners), Google Drive
    folders, or Notion's workspace, pages and databases to an index and start syncing them."""
    selection = _selection(only, include, exclude, skip_closed)

    async def work(services: Services) -> str:
        every = _schedule(schedule)
        place = await _place(services, tenant)
        connection = await services.connections.find(tenant, source)
        chosen = _folders(connection.kind, space, page, repo, folder, database, workspace=workspace)
        options = _options(connection.kind, selection, link_sharing)
        done = await services.actions.connectors.attach(
            place, connection, index, chosen, schedule=every, selection=options
        )
        label = source_label(done.source)
        if not follow:
            return f"job {done.job.id} queued: {label} into {done.index.name}; follow it with `lore jobs --follow {done.job.id}`"
        return await _followed(services, done.job, label)

    typer.echo(with_services(settings_or_exit(), work))


@source_app.command("remove")
def remove(
    source: str = typer.Argument(..., help="The source: its id, name or host."),
    tenant: str = typer.Option(LOCAL_TENANT, "--tenant", help=TENANT_HELP),
) -> None:
    """Disconnect a source: detach it from every index (its documents go) and forget its
    credentials."""

    async def work(services: Services) -> str:
        connection = await services.connections.find(tenant, source)
        removed = await services.actions.connectors.disconnect(await _place(services, tenant), connection)
        return f"Disconnected {connection.name}: removed {messages.plural(removed, 'document')} and its credentials."

    typer.echo(with_services(settings_or_exit(), work))


def _folders(
    kind: str,
    spaces: list[str],
    page: str | None,
    repos: list[str],
    drive_folders: Sequence[str] = (),
    databases: Sequence[str] = (),
    *,
    workspace: bool = False,
) -> list[FolderSpec]:
    if drive_folders and kind != "google-drive":
        raise typer.BadParameter("--folder is for Google Drive", param_hint="--folder")
    if kind != "notion" and (databases or workspace):
        raise typer.BadParameter("--workspace and --database are for Notion", param_hint="--database")
    if kind == "google-drive":
        wanted, hint = _drive_wanted(spaces, page, repos, drive_folders), "--folder"
    elif kind == "notion":
        wanted, hint = (
            _notion_wanted(spaces, page, repos, databases, workspace),
            "--workspace/--page/--database",
        )
    elif kind == "github":
        wanted, hint = _github_wanted(spaces, page, repos), "--repo"
    else:
        wanted, hint = _confluence_wanted(spaces, page, repos), "--space/--page"
    if not wanted:
        raise typer.BadParameter(f"say what to attach with {hint.split('/')[0]}", param_hint=hint)
    try:
        return [CONNECTORS[kind].parse_folder(text) for text in wanted]
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint=hint) from None


def _schedule(said: str) -> Schedule:
    from knowledge import Schedule

    every = Schedule.parse(said)
    if every is None:
        raise typer.BadParameter(f"“{said}” is not a schedule", param_hint="--schedule")
    return every


def _options(kind: str, selection: dict[str, Any] | None, link_sharing: str | None) -> dict[str, Any] | None:
    """The attachment's options: GitHub's selection, or Google Drive's link sharing."""
    if selection is not None and kind != "github":
        raise typer.BadParameter("--only, --include, --exclude and --skip-closed are for GitHub")
    if link_sharing is not None:
        if kind != "google-drive":
            raise typer.BadParameter("--link-sharing is for Google Drive", param_hint="--link-sharing")
        return _checked("google-drive", {"link_sharing": link_sharing})
    return selection


async def _followed(services: Services, job: JobRef, label: str) -> str:
    """Run the sync here, with a progress bar, and say how it went."""
    from bot.app.workers import running_jobs
    from bot.slack.history import channel_syncs

    async with running_jobs(services, schedule=False, more=channel_syncs):
        job = await follow_with_bar(services.jobs, job, label)
    return plain(messages.job_summary(label, job.state.value, job.counters, job.seconds, job.error))


def _drive_wanted(spaces: list[str], page: str | None, repos: list[str], folders: Sequence[str]) -> list[str]:
    if spaces or page or repos:
        raise typer.BadParameter("a Google Drive source takes --folder (a link, an id or a name)")
    return list(folders)


def _notion_wanted(
    spaces: list[str], page: str | None, repos: list[str], databases: Sequence[str], workspace: bool
) -> list[str]:
    if spaces or repos:
        raise typer.BadParameter(
            "a Notion source takes --workspace, --page LINK or --database LINK", param_hint="--space"
        )
    return (["workspace"] if workspace else []) + ([page] if page else []) + list(databases)


def _github_wanted(spaces: list[str], page: str | None, repos: list[str]) -> list[str]:
    if spaces or page:
        raise typer.BadParameter("a GitHub source takes --repo OWNER/NAME (or an owner), not --space")
    return repos


def _confluence_wanted(spaces: list[str], page: str | None, repos: list[str]) -> list[str]:
    if repos:
        raise typer.BadParameter(
            "--repo is for GitHub; a Confluence source takes --space", param_hint="--repo"
        )
    if page and len(spaces) != 1:
        raise typer.BadParameter("--page goes with exactly one --space", param_hint="--page")
    return [f"{key}/{page}" if page else key for key in spaces]


def _selection(
    only: str | None, include: list[str], exclude: list[str], skip_closed: bool
) -> dict[str, Any] | None:
    """GitHub's options as given (None: none given), checked by the connector's kind."""
    given: dict[str, Any] = {}
    if only:
        given["parts"] = [p.strip() for p in only.split(",") if p.strip()]
    if include:
        given["include"] = include
    if exclude:
        given["exclude"] = exclude
    if skip_closed:
        given["closed"] = False
    return _checked("github", given) if given else None


def _checked(kind: str, given: dict[str, Any]) -> dict[str, Any]:
    try:
        return CONNECTORS[kind].check_options(given)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def _kind(kind: str, url: str | None) -> str:
    """The connector `lore source add KIND` names (gdrive and drive are Google Drive), with the
    address it needs."""
    kind = {"gdrive": "google-drive", "drive": "google-drive"}.get(kind.lower(), kind.lower())
    if kind not in CONNECTORS:
        raise typer.BadParameter(f"Lore can connect {', '.join(CONNECTORS)}, not {kind}", param_hint="KIND")
    if url is None and CONNECTORS[kind].default_url is None:
        raise typer.BadParameter(f"give the address of your {CONNECTORS[kind].label}", param_hint="--url")
    return kind


async def _place(services: Services, tenant: str) -> Place:
    """The person acting: the local user, or the CLI's admin user of another workspace."""
    return await operator_place(services, tenant)


def _describe(services: Services, connection: ConnectionRef) -> str:
    lines = [
        f"{connection.id:>4}  {connection.kind:<12} {connection.name:<24} {connection.base_url}",
        f"      credentials: {connection.credentials_hint}",
    ]
    groups = services.source_access.groups_state(connection.id)
    for attached in services.connections.repository.attachments(connection.id):
        index = services.indexes.get(attached.index_id)
        synced = f"synced {age(attached.sync_cursor)}" if attached.sync_cursor else "not synced yet"
        lines.append(f"      → {index.name}: {', '.join(attached.folders)} ({attached.schedule}, {synced})")
        permissions = services.source_access.permissions_state(attached.id)
        access = messages.permissions_line(
            services.source_access.restricted_count(attached.id),
            age(permissions.synced_at) if permissions.synced_at else None,
            permissions.error,
            age(groups.synced_at) if groups.synced_at else None,
            groups.error,
        )
        lines.append(f"        {plain(access)}")
    return "\n".join(lines)
