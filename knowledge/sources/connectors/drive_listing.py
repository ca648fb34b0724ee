"""Listing a Drive attachment: completely (every file under its folders, no bodies), or by
Drive's change feed, so that an unchanged Drive costs one request per change log.

An attachment's folders are roots of three kinds: a **folder** (My Drive's, or one in a
shared drive: walked a level at a time, up to 40 folders a query), a **shared drive**
(listed whole, `corpora=drive`), or **the files shared with the account** (`sharedWithMe`,
shared folders walked too). `my-drive` names the account's My Drive.

Drive keeps a change log per user and one per shared drive (some changes of a shared drive
reach only its own log), so each root reads the log it lives in: the user's for My Drive and
what is shared with the account, the drive's for a shared drive and its folders. A complete
listing first takes each log's start token, then lists; an incremental one reads each log
from its token: a changed file under a root is listed with its version; a trashed, deleted
or unshared file, and one moved out, is `Gone`; a folder renamed, moved, created or trashed
under a root changes paths, so the listing is done completely instead. The state kept
between syncs: each log's token, the folder tree (id → parent, name) and the roots.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from knowledge.sources.connectors.base import Complete, FolderSpec, Gone, ItemRef, Listed, State
from knowledge.sources.connectors.drive_files import FILE_FIELDS, FOLDER, DriveFile, Kind, NotFound, file_path

if TYPE_CHECKING:
    from knowledge.sources.connectors.drive_api import DriveApi, Json

MY_DRIVE = "my-drive"
SHARED_WITH_ME = "shared-with-me"
USER_LOG = "user"
PAGE_SIZE = 1000  # Drive's largest page for files.list
PARENTS_PER_QUERY = 40
"""Folders asked for at once (`'a' in parents or 'b' in parents …`): a query stays short."""
CHANGE_FIELDS = f"nextPageToken,newStartPageToken,changes(changeType,removed,fileId,driveId,file({FILE_FIELDS},sharedWithMeTime))"
ALL_DRIVES: dict[str, str | int | bool] = {"supportsAllDrives": True, "includeItemsFromAllDrives": True}


@dataclass(frozen=True)
class Root:
    """An attached folder as listed: its key, what kind of root it is, the Drive id listed
    (a folder's, a shared drive's), its name, and the change log it lives in."""

    key: str
    kind: str
    """`folder`, `drive` or `shared`."""
    id: str
    name: str
    log: str

    def as_list(self) -> list[str]:
        return [self.key, self.kind, self.id, self.name, self.log]


def log_of(drive_id: str | None) -> str:
    return f"drive:{drive_id}" if drive_id else USER_LOG


class Tree:
    """Folders under the roots, by id: their parent (`""` for a root) and name."""

    def __init__(self, folders: Mapping[str, Sequence[str]] | None = None) -> None:
        self.folders: dict[str, tuple[str, str]] = {k: (v[0], v[1]) for k, v in (folders or {}).items()}

    def add(self, folder_id: str, parent: str, name: str) -> None:
        self.folders.setdefault(folder_id, (parent, name))

    def path(self, folder_id: str) -> tuple[str, ...]:
        """Names from the root down to this folder."""
        names: list[str] = []
        seen: set[str] = set()
        while folder_id in self.folders and folder_id not in seen:
            seen.add(folder_id)
            parent, name = self.folders[folder_id]
            names.append(name)
            folder_id = parent
        return tuple(reversed(names))

    def holds(self, parents: Sequence[str]) -> str | None:
        """The first of `parents` that is a folder of the tree."""
        return next((p for p in parents if p in self.folders), None)


class DriveLister:
    """Lists an attachment's roots; remembers every listed file (by id) for the reader."""

    def __init__(self, api: DriveApi) -> None:
        self._api = api
        self.files: dict[str, DriveFile] = {}
        self.paths: dict[str, tuple[str, ...]] = {}
        self.roots: dict[str, Root] = {}
        """The root each listed file was found under, by file id."""
        self.left_out = 0
        self.incremental = False
        """Whether this listing is of the change feed (what it lists did change: its content,
        or only who may open it)."""

    async def listing(
        self, folders: Sequence[FolderSpec], since: object, state: State
    ) -> AsyncIterator[Listed]:
        kept = [Root(*r) for r in state.get("roots") or []]
        tokens: dict[str, str] = dict(state.get("logs") or {})
        # taken now: files that fail during this sync are remembered by the reader as they
        # are fetched, some while this listing still runs
        retry = [str(f) for f in state.pop("retry", None) or []]
        wanted = sorted(f.key for f in folders)
        if since is not None and tokens and sorted(r.key for r in kept) == wanted:
            changes = await self._changes(tokens)
            tree = Tree(state.get("folders"))
            if changes is not None and not self._moved_folders(changes, tree, kept):
                self.incremental = True
                for listed in self._changed(changes, tree, kept):
                    yield listed
                async for ref in self._retried(retry, tree, kept):
                    yield ref
                state.update(logs=tokens)
                return
            await self._api.say("folders were renamed, moved, added or removed: listing everything")
        async for listed in self._complete(folders, state):
            yield listed

    # -- complete listings ---------------------------------------------------------------

    async def _complete(self, folders: Sequence[FolderSpec], state: State) -> AsyncIterator[Listed]:
        roots = [root for spec in folders if (root := await self._root(spec)) is not None]
        tokens = {log: await self._start_token(log) for log in sorted({r.log for r in roots})}
        tree = Tree()
        for root in roots:
            async for file in self._walk(root, tree):
                if (ref := self._ref(file, root, tree)) is not None:
                    yield ref
        if self.left_out:
            await self._api.say(f"{self.left_out} files of kinds Lore can't read were left out")
        yield Complete("")
        state.update(
            logs=tokens,
            roots=[r.as_list() for r in roots],
            folders={k: list(v) for k, v in tree.folders.items()},
        )

    async def _root(self, spec: FolderSpec) -> Root | None:
        """What an attached folder is now; None when it is gone (its files then go)."""
        if spec.key == SHARED_WITH_ME:
            return Root(spec.key, "shared", SHARED_WITH_ME, "Shared with me", USER_LOG)
        try:
            data = await self._api.get_json(
                file_path("root" if spec.key == MY_DRIVE else spec.key),
                {"fields": "id,name,mimeType,driveId,trashed", "supportsAllDrives": True},
            )
        except NotFound:
            data = {}
        found = DriveFile.from_json(data)
        if not found.id or found.trashed or found.mime_type != FOLDER:
            await self._api.say(f"{spec.key} is gone, or this account may no longer read it")
            return None
        name = "My Drive" if spec.key == MY_DRIVE else found.name
        if found.drive_id == found.id:
            return Root(spec.key, "drive", found.id, name, log_of(found.drive_id))
        return Root(spec.key, "folder", found.id, name, log_of(found.drive_id))

    async def _start_token(self, log: str) -> str:
        params: dict[str, str | int | bool] = {"supportsAllDrives": True}
        if log != USER_LOG:
            params["driveId"] = log.removeprefix("drive:")
        data = await self._api.get_json("/changes/startPageToken", params)
        return str(data.get("startPageToken") or "")

    async def _walk(self, root: Root, tree: Tree) -> AsyncIterator[DriveFile]:
        if root.kind == "drive":
            tree.add(root.id, "", root.name)
            params: dict[str, str | int | bool] = {"corpora": "drive", "driveId": root.id, **ALL_DRIVES}
            found = [f async for f in self._files("trashed = false", params)]
            for file in found:
                if file.kind == Kind.FOLDER:
                    tree.add(file.id, file.parents[0] if file.parents else root.id, file.name)
            for file in found:
                yield file
            return
        if root.kind == "shared":
            tree.add(root.id, "", root.name)
            queue: list[str] = []
            async for file in self._files("sharedWithMe = true and trashed = false", ALL_DRIVES):
                if file.kind == Kind.FOLDER:
                    tree.add(file.id, root.id, file.name)
                    queue.append(file.id)
                else:
                    yield file
        else:
            tree.add(root.id, "", root.name)
            queue = [root.id]
        async for file in self._children(queue, tree):
            yield file

    async def _children(self, queue: list[str], tree: Tree) -> AsyncIterator[DriveFile]:
        """Every file under the queued folders, a level at a time, folders batched."""
        while queue:
            batch, queue = queue[:PARENTS_PER_QUERY], queue[PARENTS_PER_QUERY:]
            parents = " or ".join(f"'{_quoted(folder)}' in parents" for folder in batch)
            async for file in self._files(
                f"({parents}) and trashed = false", {"corpora": "allDrives", **ALL_DRIVES}
            ):
                if file.kind == Kind.FOLDER:
                    if file.id not in tree.folders:
                        tree.add(file.id, tree.holds(file.parents) or batch[0], file.name)
                        queue.append(file.id)
                else:
                    yield file

    async def _files(self, query: str, params: Mapping[str, str | int | bool]) -> AsyncIterator[DriveFile]:
        wanted = {
            "q": query,
            "fields": f"nextPageToken,files({FILE_FIELDS})",
            "pageSize": PAGE_SIZE,
            **params,
        }
        async for page in self._api.pages("/files", wanted):
            for data in page.get("files") or []:
                if isinstance(data, dict) and data.get("id"):
                    yield DriveFile.from_json(data)

    def _ref(self, file: DriveFile, root: Root, tree: Tree) -> ItemRef | None:
        if file.kind == Kind.FOLDER:
            return None
        if file.kind == Kind.OTHER:
            self.left_out += 1
            return None
        parent = tree.holds(file.parents)
        self.files[file.id] = file
        self.paths[file.id] = tree.path(parent) if parent else (root.name,)
        self.roots[file.id] = root
        return ItemRef(file.id, file.name, file.content_version, file.modified)

    # -- changes --------------------------------------------------------------------------

    async def _changes(self, tokens: dict[str, str]) -> dict[str, Json] | None:
        """The last change of each file or drive since the tokens, every log followed to its
        end (`tokens` then hold the new start tokens); None when a token is no longer valid."""
        found: dict[str, Json] = {}
        for log, token in sorted(tokens.items()):
            params: dict[str, str | int | bool] = {
                "pageToken": token,
                "pageSize": PAGE_SIZE,
                "includeRemoved": True,
                "supportsAllDrives": True,
                "fields": CHANGE_FIELDS,
            }
            if log != USER_LOG:
                params.update(driveId=log.removeprefix("drive:"), includeItemsFromAllDrives=True)
            for _ in range(10_000):
                try:
                    page = await self._api.get_json("/changes", params)
                except NotFound:
                    return None
                for change in page.get("changes") or []:
                    if isinstance(change, dict):
                        key = str(change.get("fileId") or f"drive:{change.get('driveId')}")
                        found.pop(key, None)
                        found[key] = change  # the last state of each, in the order they last changed
                if page.get("newStartPageToken"):
                    tokens[log] = str(page["newStartPageToken"])
                    break
                params["pageToken"] = str(page.get("nextPageToken") or "")
                if not params["pageToken"]:
                    return None
        return found

    @staticmethod
    def _moved_folders(changes: Mapping[str, Json], tree: Tree, roots: Sequence[Root]) -> bool:
        """Whether a change touches the folders under the roots (or a root itself)."""
        drives = {r.id for r in roots if r.kind == "drive"}
        for key, change in changes.items():
            if change.get("changeType") == "drive" or key.startswith("drive:"):
                if str(change.get("driveId") or "") in drives:
                    return True
                continue
            file = change.get("file") if isinstance(change.get("file"), dict) else None
            if file is None or change.get("removed"):
                if key in tree.folders:
                    return True
                continue
            if file.get("mimeType") != FOLDER:
                continue
            folder = DriveFile.from_json(file)
            known = tree.folders.get(folder.id)
            if known is not None:
                if folder.trashed or known[1] != folder.name or (known[0] and known[0] not in folder.parents):
                    return True
            elif not folder.trashed and (
                tree.holds(folder.parents)
                or (file.get("sharedWithMeTime") and any(r.kind == "shared" for r in roots))
            ):
                return True
        return False

    def _changed(self, changes: Mapping[str, Json], tree: Tree, roots: Sequence[Root]) -> list[Listed]:
        listed: list[Listed] = []
        for key, change in changes.items():
            file = change.get("file") if isinstance(change.get("file"), dict) else None
            if key.startswith("drive:") or (file is not None and file.get("mimeType") == FOLDER):
                continue
            if file is None or change.get("removed"):
                listed.append(Gone(key))
                continue
            found = DriveFile.from_json(file)
            root = self._root_of(found, file, tree, roots)
            if root is None or found.trashed or found.kind == Kind.OTHER:
                listed.append(Gone(found.id))
            elif (ref := self._ref(found, root, tree)) is not None:
                listed.append(ref)
        return listed

    @staticmethod
    def _root_of(file: DriveFile, raw: Json, tree: Tree, roots: Sequence[Root]) -> Root | None:
        """The root a changed file is under, if any."""
        holder = tree.holds(file.parents)
        top = _root_id(tree, holder) if holder is not None else None
        for root in roots:
            if (root.kind == "drive" and file.drive_id == root.id) or top == root.id:
                return root
            if root.kind == "shared" and holder is None and raw.get("sharedWithMeTime"):
                return root
        return None

    async def _retried(
        self, retry: Sequence[str], tree: Tree, roots: Sequence[Root]
    ) -> AsyncIterator[ItemRef]:
        """Files that failed at the last sync, listed again (the feed will not list them)."""
        for file_id in retry:
            if file_id in self.files:
                continue
            try:
                data = await self._api.get_json(
                    file_path(file_id), {"fields": FILE_FIELDS, "supportsAllDrives": True}
                )
            except NotFound:
                continue
            found = DriveFile.from_json(data)
            root = self._root_of(found, data, tree, roots)
            if root is not None and not found.trashed and (ref := self._ref(found, root, tree)) is not None:
                yield ref


def _root_id(tree: Tree, folder_id: str) -> str:
    seen: set[str] = set()
    while folder_id in tree.folders and tree.folders[folder_id][0] and folder_id not in seen:
        seen.add(folder_id)
        folder_id = tree.folders[folder_id][0]
    return folder_id


def _quoted(value: str) -> str:
    """A value inside a Drive query's single quotes."""
    return value.replace("\\", "\\\\").replace("'", "\\'")


def roots_of(state: Mapping[str, Any]) -> list[Root]:
    return [Root(*r) for r in state.get("roots") or []]
