"""Image files for the model: what Read returns for a PNG, JPEG, GIF or WebP (and so what `@image.png` or a pasted
image path attaches), as Claude Code's Read does — the image itself, base64, with one text line naming it.

The type is decided by the file's first bytes (its signature), not its name; a file past `MAX_IMAGE_BYTES`
(Anthropic's 5 MB per image, the strictest of the providers) is refused with a line saying so, as is one whose
bytes are not the image its name says. Whether the model can see images is `vision.supports_vision`; the provider
leaves them out for one that cannot, and the text line stays.
"""

from __future__ import annotations

import base64
from pathlib import Path

from ..messages import ImageData

IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})
MAX_IMAGE_BYTES = 5 * 1024 * 1024
"""Anthropic refuses an image over 5 MB; OpenAI's limit (20 MB) is looser."""


def is_image_path(path: Path) -> bool:
    return path.suffix.lower() in IMAGE_SUFFIXES


def media_type(head: bytes) -> str | None:
    """The image type the bytes start with, or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def read_image(path: Path, shown: str) -> tuple[str, ImageData | None]:
    """(the text line, the image) for the image file at `path`; the image is None when it cannot be sent, and the
    line then says why."""
    try:
        size = path.stat().st_size
        if size > MAX_IMAGE_BYTES:
            return (
                f"Cannot send {shown} as an image: it is {size / 1024 / 1024:.1f} MB, over the 5 MB a model takes "
                "per image; make it smaller (e.g. convert -resize 50%) and read it again.",
                None,
            )
        data = path.read_bytes()
    except OSError as exc:
        return f"Cannot read {shown}: {exc.strerror or exc}.", None
    kind = media_type(data[:16])
    if kind is None:
        return f"Cannot send {shown} as an image: its bytes are not a PNG, JPEG, GIF or WebP image.", None
    line = f"[image: {shown} · {kind} · {len(data):,} bytes]"
    return line, ImageData(kind, base64.b64encode(data).decode("ascii"))
