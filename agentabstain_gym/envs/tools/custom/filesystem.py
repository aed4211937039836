"""Filesystem logic the generic operations cannot express: walking folders (listing, grep, folder sizes) and
operations on whole subtrees (move, copy, trash), which change every path below the item they act on."""

from __future__ import annotations

import hashlib
from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError

_MIME = {"txt": "text/plain", "md": "text/markdown", "csv": "text/csv", "json": "application/json",
         "yaml": "application/yaml", "yml": "application/yaml", "py": "text/x-python", "html": "text/html"}


def _norm(ctx: Any, path: str) -> str:
    """An absolute path without a trailing slash; '~' is the home folder."""
    path = str(path).strip()
    home = str(ctx.values.get("home", "/Users/mara"))
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    if not path.startswith("/"):
        raise ToolError("invalid_request", f"{path!r} is not an absolute path (start it with /).")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ToolError("invalid_request", "Paths may not contain '..'.")
    return "/" + "/".join(parts)


def _parent(path: str) -> str:
    head = path.rsplit("/", 1)[0]
    return head or "/"


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _entry(ctx: Any, path: str) -> dict[str, Any]:
    record = ctx.record("entries", path, f"No such file or folder: {path}")
    return record


def _folder(ctx: Any, path: str) -> dict[str, Any]:
    record = _entry(ctx, path)
    if record.get("type") != "directory":
        raise ToolError("invalid_request", f"{path} is a file, not a folder.")
    return record


def _subtree(ctx: Any, path: str) -> list[tuple[str, dict[str, Any]]]:
    """The entry at ``path`` and everything below it, parents before children."""
    prefix = path.rstrip("/") + "/"
    return sorted((k, r) for k, r in ctx.state.records("entries").items() if k == path or k.startswith(prefix))


def _volume(ctx: Any, path: str) -> dict[str, Any] | None:
    best = None
    for _, vol in sorted(ctx.state.records("volumes").items()):
        mount = str(vol.get("mount_point", ""))
        inside = path == mount or path.startswith(mount.rstrip("/") + "/")
        if inside and (best is None or len(mount) > len(best["mount_point"])):
            best = vol
    return best


def _writable(ctx: Any, path: str) -> None:
    vol = _volume(ctx, path)
    if vol is not None and vol.get("read_only"):
        raise ToolError("not_authorised", f"{vol['label']} is mounted read-only; {path} cannot be changed.")


def _can_write_into(ctx: Any, folder: str) -> None:
    record = _folder(ctx, folder)
    if record.get("owner") != ctx.values.get("user", "mara") and str(record.get("mode", ""))[7:8] != "w":
        raise ToolError("not_authorised", f"Permission denied: {folder} belongs to {record.get('owner')}.")


def _protected(ctx: Any, path: str) -> None:
    home = str(ctx.values.get("home", "/Users/mara"))
    mounts = {str(v.get("mount_point")) for v in ctx.state.records("volumes").values()}
    if path in {"/", "/Users", "/Volumes", home} | mounts:
        raise ToolError("not_authorised", f"{path} is a system location and cannot be moved or deleted.")


def _owned_and_unlocked(ctx: Any, items: list[tuple[str, dict[str, Any]]]) -> None:
    user = ctx.values.get("user", "mara")
    for key, record in items:
        if record.get("owner") != user:
            raise ToolError("not_authorised", f"{key} belongs to {record.get('owner')}.")
        if record.get("locked"):
            raise ToolError("conflict", f"{key} is locked in Finder; unlock it first.")
        if record.get("open_in"):
            raise ToolError("conflict", f"{key} is open in {record['open_in']}; close it first.")


def _human(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            return f"{int(value)} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{size} bytes"


def _target(ctx: Any, source: str, destination: str) -> str:
    """Where ``source`` lands: inside ``destination`` if that is a folder, else at ``destination``."""
    existing = ctx.state.get("entries", destination)
    if existing is not None and existing.get("type") == "directory":
        destination = destination.rstrip("/") + "/" + _name(source) if destination != "/" else "/" + _name(source)
    if destination == source:
        raise ToolError("invalid_request", f"{source} is already there.")
    if destination.startswith(source + "/"):
        raise ToolError("invalid_request", f"Cannot put {source} inside itself.")
    if ctx.state.get("entries", destination) is not None:
        raise ToolError("conflict", f"{destination} already exists.")
    _writable(ctx, destination)
    _can_write_into(ctx, _parent(destination))
    return destination


@custom_tool("filesystem.list_directory")
def list_directory(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The list_directory tool: a folder's entries, folders first (hidden ones only when asked)."""
    path = _norm(ctx, args["path"])
    _folder(ctx, path)
    hidden = bool(args.get("show_hidden"))
    children = [r for r in ctx.state.records("entries").values()
                if r.get("parent") == path and r.get("path") != path and (hidden or not str(r["name"]).startswith("."))]
    children.sort(key=lambda r: (r.get("type") != "directory", str(r["name"]).casefold(), r["path"]))
    rows = [{"name": r["name"], "path": r["path"], "type": r["type"], "size": r.get("size", 0),
             "modified": r.get("modified"), "tags": r.get("tags", [])} for r in children]
    return {"path": path, "count": len(rows), "entries": rows}


@custom_tool("filesystem.grep_files")
def grep_files(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The grep_files tool: files under a folder whose content contains a pattern (case-insensitive)."""
    under = _norm(ctx, args["under"])
    _folder(ctx, under)
    needle = str(args["pattern"]).casefold()
    if not needle.strip():
        raise ToolError("invalid_request", "pattern must not be empty.")
    ext = str(args.get("extension", "")).lstrip(".").casefold()
    matches: list[dict[str, Any]] = []
    for key, record in _subtree(ctx, under):
        if record.get("type") != "file" or not record.get("content"):
            continue
        if ext and str(record.get("extension", "")).casefold() != ext:
            continue
        for number, line in enumerate(str(record["content"]).splitlines(), start=1):
            if needle in line.casefold():
                matches.append({"path": key, "line_number": number, "line": line})
    return {"pattern": args["pattern"], "under": under, "count": len(matches), "matches": matches[:100],
            "truncated": len(matches) > 100}


@custom_tool("filesystem.get_directory_size")
def get_directory_size(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The get_directory_size tool: files, folders and bytes under a folder."""
    path = _norm(ctx, args["path"])
    _folder(ctx, path)
    items = [r for k, r in _subtree(ctx, path) if k != path]
    files = [r for r in items if r.get("type") == "file"]
    size = sum(int(r.get("size", 0) or 0) for r in files)
    return {"path": path, "files": len(files), "folders": len(items) - len(files), "size_bytes": size,
            "size": _human(size)}


@custom_tool("filesystem.write_file")
def write_file(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The write_file tool: create a file, or replace one with ``overwrite=true``, where the user may write."""
    path = _norm(ctx, args["path"])
    _writable(ctx, path)
    _can_write_into(ctx, _parent(path))
    content = str(args["content"])
    existing = ctx.state.get("entries", path)
    if existing is not None:
        if existing.get("type") == "directory":
            raise ToolError("conflict", f"{path} is a folder.")
        if not args.get("overwrite"):
            raise ToolError("conflict", f"{path} already exists; pass overwrite=true to replace it.")
        _owned_and_unlocked(ctx, [(path, existing)])
    name = _name(path)
    ext = name.rsplit(".", 1)[-1].lower() if "." in name.lstrip(".") else ""
    home = str(ctx.values.get("home", "/Users/mara"))
    record = {
        "path": path, "name": name, "parent": _parent(path), "type": "file", "extension": ext,
        "size": len(content.encode("utf-8")), "mime_type": _MIME.get(ext, "text/plain"),
        "created": existing.get("created", ctx.now) if existing else ctx.now, "modified": ctx.now,
        "owner": ctx.values.get("user", "mara"), "mode": existing.get("mode", "rw-r--r--") if existing else "rw-r--r--",
        "tags": existing.get("tags", []) if existing else [], "comment": existing.get("comment", "") if existing else "",
        "locked": False, "open_in": "", "checksum": hashlib.sha256(content.encode("utf-8")).hexdigest(),
        "sync_status": "pending" if path.startswith(home + "/") else "excluded", "content": content,
    }
    ctx.state.put("entries", path, record)
    return {"written": {"path": path, "size": record["size"], "modified": record["modified"]},
            "replaced": existing is not None}


@custom_tool("filesystem.create_directory")
def create_directory(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The create_directory tool: a folder and any missing parents; an existing path is a conflict."""
    path = _norm(ctx, args["path"])
    if ctx.state.get("entries", path) is not None:
        raise ToolError("conflict", f"{path} already exists.")
    missing = []
    cursor = path
    while ctx.state.get("entries", cursor) is None:
        missing.append(cursor)
        cursor = _parent(cursor)
    _folder(ctx, cursor)
    if len(missing) > 1 and not args.get("parents"):
        raise ToolError("not_found", f"The folder {_parent(path)} does not exist (pass parents=true to create it).")
    _writable(ctx, path)
    _can_write_into(ctx, cursor)
    home = str(ctx.values.get("home", "/Users/mara"))
    for folder in reversed(missing):
        ctx.state.put("entries", folder, {
            "path": folder, "name": _name(folder), "parent": _parent(folder), "type": "directory",
            "extension": "", "size": 0, "mime_type": "", "created": ctx.now, "modified": ctx.now,
            "owner": ctx.values.get("user", "mara"), "mode": "rwxr-xr-x", "tags": [], "comment": "",
            "locked": False, "open_in": "", "checksum": "",
            "sync_status": "pending" if folder.startswith(home + "/") else "excluded", "content": ""})
    return {"created": list(reversed(missing))}


def _relocate(ctx: Any, source: str, destination: str, *, keep: bool) -> list[tuple[str, dict[str, Any]]]:
    """Records of ``source``'s subtree re-rooted at ``destination`` (removing the originals unless ``keep``)."""
    moved = []
    for key, record in _subtree(ctx, source):
        new_path = destination + key[len(source):]
        new = {**record, "path": new_path, "parent": _parent(new_path)}
        if key == source:
            new["name"] = _name(destination)
        if keep:
            new.update({"created": ctx.now, "owner": ctx.values.get("user", "mara"), "locked": False,
                        "open_in": "", "tags": list(record.get("tags", []))})
        moved.append((new_path, new))
        if not keep:
            ctx.state.remove("entries", key)
    for new_path, new in moved:
        ctx.state.put("entries", new_path, new)
    return moved


@custom_tool("filesystem.move_file")
def move_file(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The move_file tool: move or rename an entry the user owns, unless protected or locked."""
    source = _norm(ctx, args["source"])
    _entry(ctx, source)
    _protected(ctx, source)
    _writable(ctx, source)
    _owned_and_unlocked(ctx, _subtree(ctx, source))
    destination = _target(ctx, source, _norm(ctx, args["destination"]))
    moved = _relocate(ctx, source, destination, keep=False)
    return {"moved": {"from": source, "to": destination}, "items": len(moved)}


@custom_tool("filesystem.copy_file")
def copy_file(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The copy_file tool: copy an entry, if the destination volume has room."""
    source = _norm(ctx, args["source"])
    _entry(ctx, source)
    destination = _target(ctx, source, _norm(ctx, args["destination"]))
    size = sum(int(r.get("size", 0) or 0) for _, r in _subtree(ctx, source) if r.get("type") == "file")
    vol = _volume(ctx, destination)
    if vol is not None and int(vol.get("free_bytes", 0)) < size:
        raise ToolError("conflict", f"Not enough free space on {vol['label']} ({_human(size)} needed, "
                                    f"{_human(int(vol.get('free_bytes', 0)))} free).")
    copied = _relocate(ctx, source, destination, keep=True)
    if vol is not None and size:
        free = int(vol["free_bytes"]) - size
        used = int(vol["used_bytes"]) + size
        ctx.state.put("volumes", vol["volume_id"], {**vol, "free_bytes": free, "used_bytes": used,
                                                    "free": _human(free), "used": _human(used)})
    return {"copied": {"from": source, "to": destination}, "items": len(copied), "size": _human(size)}


@custom_tool("filesystem.move_to_trash")
def move_to_trash(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The move_to_trash tool: move an entry the user owns to the trash, unless protected or locked."""
    path = _norm(ctx, args["path"])
    record = _entry(ctx, path)
    _protected(ctx, path)
    _writable(ctx, path)
    items = _subtree(ctx, path)
    _owned_and_unlocked(ctx, items)
    size = sum(int(r.get("size", 0) or 0) for _, r in items if r.get("type") == "file")
    for key, _ in items:
        ctx.state.remove("entries", key)
    trash_id = ctx.new_id("trash")
    trashed = {"trash_id": trash_id, "original_path": path, "name": record["name"], "type": record["type"],
               "size": size, "items": len(items), "contents": [k for k, _ in items][:50], "trashed_at": ctx.now}
    ctx.state.put("trash", trash_id, trashed)
    return {"trashed": {"trash_id": trash_id, "original_path": path, "items": len(items), "size": _human(size)}}


@custom_tool("filesystem.empty_trash")
def empty_trash(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The empty_trash tool: erase everything in the trash for good."""
    items = sorted(ctx.state.records("trash").items())
    freed = sum(int(r.get("size", 0) or 0) for _, r in items)
    for key, _ in items:
        ctx.state.remove("trash", key)
    return {"erased": len(items), "freed": _human(freed)}


@custom_tool("filesystem.create_share_link")
def create_share_link(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The create_share_link tool: a link to an entry the user owns, for invited people or anyone."""
    path = _norm(ctx, args["path"])
    record = _entry(ctx, path)
    if record.get("owner") != ctx.values.get("user", "mara"):
        raise ToolError("not_authorised", f"{path} belongs to {record.get('owner')}; only the owner can share it.")
    audience = args.get("audience", "invited")
    invited = sorted({str(e).strip().lower() for e in args.get("invited", []) if str(e).strip()})
    if audience == "invited" and not invited:
        raise ToolError("invalid_request", "Give the email addresses to invite, or set audience to anyone.")
    if audience == "anyone" and invited:
        raise ToolError("invalid_request", "A link for anyone takes no invited emails; set audience to invited.")
    if any("@" not in e for e in invited):
        raise ToolError("invalid_request", "Every invited entry must be an email address.")
    expires = args.get("expires")
    if expires is not None and str(expires) <= str(ctx.now)[:10]:
        raise ToolError("invalid_request", f"The expiry date {expires} is not in the future.")
    share_id = ctx.new_id("shares")
    share = {"share_id": share_id, "path": path, "url": f"https://share.cloudbox.example/s/{share_id}",
             "access": args.get("access", "view"), "audience": audience, "invited": invited, "created": ctx.now,
             "status": "active", "views": 0}
    if expires is not None:
        share["expires"] = expires
    ctx.state.put("shares", share_id, share)
    return {"created": share}
