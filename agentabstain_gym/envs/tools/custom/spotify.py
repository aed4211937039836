"""Spotify logic the generic operations cannot express: playlists shown with their tracks resolved and playability
for the user's market, editing a playlist's ordered track list, and starting playback on a device."""

from __future__ import annotations

from typing import Any

from agentabstain_gym.envs.tools.custom import custom_tool
from agentabstain_gym.envs.tools.errors import ToolError


def _me(ctx: Any) -> str:
    return str(ctx.values.get("user_id", ""))


def _playable(ctx: Any, track: dict[str, Any]) -> bool:
    market_ok = ctx.values.get("market", "GB") in track.get("markets", [])
    explicit_ok = not track.get("explicit") or bool(ctx.values.get("allow_explicit", True))
    return market_ok and explicit_ok


def _visible(ctx: Any, playlist: dict[str, Any]) -> bool:
    return bool(playlist.get("public") or playlist.get("in_library") or playlist.get("owner") == _me(ctx))


def _playlist(ctx: Any, playlist_id: str) -> dict[str, Any]:
    playlist = ctx.state.get("playlists", playlist_id)
    if playlist is None or not _visible(ctx, playlist):
        raise ToolError("not_found", f"No playlist with id {playlist_id!r}.")
    return playlist


def _editable(ctx: Any, playlist_id: str) -> dict[str, Any]:
    playlist = _playlist(ctx, playlist_id)
    if playlist.get("owner") != _me(ctx) and not (playlist.get("collaborative") and playlist.get("in_library")):
        raise ToolError("not_authorised", f"You can't edit {playlist['name']!r}: it belongs to {playlist['owner']} "
                                          "and is not collaborative.")
    return playlist


def _track(ctx: Any, track_id: str) -> dict[str, Any]:
    track = ctx.record("tracks", track_id, f"No track with id {track_id!r}.")
    return track


@custom_tool("spotify.list_my_playlists")
def list_my_playlists(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The list_my_playlists tool: the playlists in the user's library, own ones first."""
    mine = [p for p in ctx.state.records("playlists").values() if p.get("in_library")]
    mine.sort(key=lambda p: (p.get("owner") != _me(ctx), str(p["name"]).casefold(), p["playlist_id"]))
    rows = [{"playlist_id": p["playlist_id"], "name": p["name"], "owner": p["owner"], "public": p.get("public", False),
             "collaborative": p.get("collaborative", False), "track_count": len(p.get("tracks", [])),
             "followers": p.get("followers", 0)} for p in mine]
    return {"count": len(rows), "playlists": rows}


@custom_tool("spotify.get_playlist")
def get_playlist(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The get_playlist tool: a playlist with its tracks in order."""
    playlist = _playlist(ctx, args["playlist_id"])
    rows = []
    for position, track_id in enumerate(playlist.get("tracks", [])):
        track = ctx.state.get("tracks", track_id)
        if track is None:
            continue
        rows.append({"position": position, "track_id": track_id, "title": track["title"], "artist": track["artist"],
                     "album": track["album"], "duration": track["duration"], "explicit": track.get("explicit", False),
                     "is_playable": _playable(ctx, track)})
    return {"playlist_id": playlist["playlist_id"], "name": playlist["name"], "owner": playlist["owner"],
            "description": playlist.get("description", ""), "public": playlist.get("public", False),
            "collaborative": playlist.get("collaborative", False), "followers": playlist.get("followers", 0),
            "track_count": len(rows), "tracks": rows}


@custom_tool("spotify.check_playlist_contains")
def check_playlist_contains(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The check_playlist_contains tool: whether (and where) a playlist holds each track."""
    playlist = _playlist(ctx, args["playlist_id"])
    tracks = list(playlist.get("tracks", []))
    results = [{"track_id": t, "contained": t in tracks, "positions": [i for i, x in enumerate(tracks) if x == t]}
               for t in args["track_ids"]]
    return {"playlist_id": playlist["playlist_id"], "all_contained": all(r["contained"] for r in results),
            "results": results}


@custom_tool("spotify.add_tracks_to_playlist")
def add_tracks_to_playlist(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The add_tracks_to_playlist tool: append tracks to a playlist the user may edit."""
    playlist = _editable(ctx, args["playlist_id"])
    new = [str(t) for t in args["track_ids"]]
    if not new:
        raise ToolError("invalid_request", "track_ids must name at least one track.")
    for track_id in new:
        _track(ctx, track_id)
    tracks = list(playlist.get("tracks", []))
    position = args.get("position")
    if position is None:
        position = len(tracks)
    if position > len(tracks):
        raise ToolError("invalid_request", f"position {position} is past the end of the playlist ({len(tracks)}).")
    tracks[position:position] = new
    ctx.state.put("playlists", playlist["playlist_id"], {**playlist, "tracks": tracks, "updated_at": ctx.now})
    return {"playlist_id": playlist["playlist_id"], "added": len(new), "position": position,
            "track_count": len(tracks)}


@custom_tool("spotify.remove_tracks_from_playlist")
def remove_tracks_from_playlist(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The remove_tracks_from_playlist tool: remove tracks from a playlist the user may edit."""
    playlist = _editable(ctx, args["playlist_id"])
    gone = {str(t) for t in args["track_ids"]}
    if not gone:
        raise ToolError("invalid_request", "track_ids must name at least one track.")
    tracks = list(playlist.get("tracks", []))
    missing = sorted(gone - set(tracks))
    if missing:
        raise ToolError("not_found", f"Not in {playlist['name']!r}: {', '.join(missing)}.")
    kept = [t for t in tracks if t not in gone]
    ctx.state.put("playlists", playlist["playlist_id"], {**playlist, "tracks": kept, "updated_at": ctx.now})
    return {"playlist_id": playlist["playlist_id"], "removed": len(tracks) - len(kept), "track_count": len(kept)}


@custom_tool("spotify.start_playback")
def start_playback(ctx: Any, args: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The start_playback tool: play a playlist or a list of tracks on a device."""
    player_id = str(ctx.values.get("player_id", "player"))
    player = ctx.state.get("playback", player_id) or {"player_id": player_id}
    device_id = args.get("device_id") or player.get("device_id")
    device = ctx.state.get("devices", device_id) if device_id else None
    if device is None:
        raise ToolError("not_found", f"No device with id {device_id!r}; see list_devices.")
    if device.get("status") != "online":
        raise ToolError("unavailable", f"{device['name']} is offline.")
    if args.get("playlist_id") and args.get("track_ids"):
        raise ToolError("invalid_request", "Give either playlist_id or track_ids, not both.")
    update: dict[str, Any] = {}
    if args.get("playlist_id"):
        playlist = _playlist(ctx, args["playlist_id"])
        queue = [ctx.state.get("tracks", t) for t in playlist.get("tracks", [])]
        first = next((t for t in queue if t is not None and _playable(ctx, t)), None)
        if first is None:
            raise ToolError("conflict", f"{playlist['name']!r} has no tracks you can play.")
        update = {"context_id": playlist["playlist_id"], "context_name": playlist["name"]}
    elif args.get("track_ids"):
        queue = [_track(ctx, t) for t in args["track_ids"]]
        first = next((t for t in queue if _playable(ctx, t)), None)
        if first is None:
            raise ToolError("conflict", "None of those tracks can be played in your country.")
        update = {"context_id": "", "context_name": ""}
    else:
        if not player.get("track_id"):
            raise ToolError("conflict", "Nothing to resume; give a playlist or tracks.")
        first = None
    if first is not None:
        update.update({"track_id": first["track_id"], "track_title": first["title"], "artist": first["artist"],
                       "album": first["album"], "progress": "0:00"})
    new_player = {**player, **update, "is_playing": True, "device_id": device["device_id"],
                  "device_name": device["name"], "updated_at": ctx.now}
    ctx.state.put("playback", player_id, new_player)
    for key, other in sorted(ctx.state.records("devices").items()):
        active = key == device["device_id"]
        if bool(other.get("is_active")) != active:
            ctx.state.put("devices", key, {**other, "is_active": active})
    return {"playing": True, "device": device["name"], "track": new_player.get("track_title"),
            "artist": new_player.get("artist"), "context": new_player.get("context_name", "")}
