"""`@path` in a message the user typed: the files it names, attached to the turn as Claude Code attaches them.

`explain @src/app.py` sends the file with the message: its content as the Read tool shows it (numbered lines, the
same size limit and binary guard, and recorded as read, so an Edit of it may follow), in one meta message before
the user's text. Each read is asked of the permission policy first, exactly as a model's Read call would be:
inside the workspace it is allowed, outside it is asked for on a terminal (denied headless), and a deny rule
refuses it. An image file (`@shot.png`, or the path of one typed or pasted without an `@`) is attached as the
image itself, for a model that takes images (`vision.py`; for one that does not, a line says so). What is not
attached stays text, and the model can still read it: an `@word` that names no file
(`@user`, `@decorator`), and a file the policy or Read refused, with one line saying why.

`@server:uri` is an MCP resource, which the host attaches (`mcp.resources`); a custom command reads the `@path`s of
its own body (`custom_commands.invoke`). Which words are mentions is `custom_commands.expand.mentions` (an e-mail
address is not one; trailing punctuation is dropped).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from .custom_commands.expand import mentions
from .messages import ImageBlock, Message, TextBlock
from .permissions.policy import Allow, ToolCallInfo
from .tools.images import is_image_path
from .tools.paths import display
from .vision import NO_VISION, supports_vision

if TYPE_CHECKING:
    from .app import Assembled


class Attached(NamedTuple):
    """What the `@path`s of one message gave."""

    messages: list[Message]
    """One meta message holding every file read (empty when none was)."""
    lines: list[str]
    """One line per mention for the user: what was attached, or (`warning:`) why a file was not."""


def image_paths(text: str, root: Path) -> list[str]:
    """Paths of existing image files typed or pasted in `text` without an `@` (a terminal pastes a dragged file as
    its path, its spaces escaped with `\\` or the whole quoted)."""
    import shlex

    try:
        words = shlex.split(text)
    except ValueError:  # an unmatched quote: plain words
        words = text.split()
    found: list[str] = []
    for word in words:
        if word.startswith("@") or not is_image_path(Path(word)):
            continue
        path = Path(word).expanduser()
        try:
            if (path if path.is_absolute() else root / path).is_file() and word not in found:
                found.append(word)
        except OSError:
            continue
    return found


async def attach_files(built: Assembled, text: str) -> Attached:
    """The files the `@path`s of `text` name, read through the Read tool and the permission policy."""
    read = built.session.tools.get("Read")
    if read is None:
        return Attached([], [])
    root = built.session.context.cwd
    blocks: list[TextBlock | ImageBlock] = []
    lines: list[str] = []
    for mention in [*mentions(text), *image_paths(text, root)]:
        path = Path(mention).expanduser()
        path = path if path.is_absolute() else root / path
        try:
            if not path.is_file():
                continue  # names no file: the `@` is just text
        except OSError:
            continue
        shown = display(root, path)
        raw = {"file_path": str(path)}
        try:
            args = read.validate(raw)
            decision = await built.policy(read, raw, ToolCallInfo())
        except Exception as exc:  # the input defeated a check: not attached
            lines.append(f"warning: @{mention} was not attached: {type(exc).__name__}: {exc}")
            continue
        if not isinstance(decision, Allow):
            lines.append(f"warning: @{mention} was not attached: {decision.message}")
            continue
        if decision.updated_input is not None:
            args = read.validate(decision.updated_input)
        output = await read.call(args, built.session.context)
        if output.is_error:  # too large, binary, unreadable: Read's own words say what to do instead
            lines.append(f"warning: @{mention} was not attached: {output.content}")
            continue
        if output.images:
            if not supports_vision(built.provider.model):
                lines.append("warning: " + NO_VISION.format(model=built.provider.model) + f": {shown} is left out")
                continue
            blocks.append(TextBlock(f"Image {shown}:"))
            blocks += [ImageBlock(image.media_type, image.data) for image in output.images]
        else:
            blocks.append(TextBlock(f"Contents of @{mention} ({shown}):\n\n{output.content}"))
        lines.append(f"attached {shown}")
    return Attached([Message("user", tuple(blocks), meta=True)] if blocks else [], lines)
