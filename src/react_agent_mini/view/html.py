"""The page shell every view shares: escaping, the stylesheet, and a Content-Security-Policy that lets the page load
nothing at all.

A transcript holds whatever a model, a file or a command said, so every piece of text goes through `esc` before it
joins the page, attributes included. On top of that the policy (a `<meta http-equiv>` at the top of `<head>`)
allows no script, no frame, no font, no image and no connection — `default-src 'none'` — and only the one
stylesheet the page carries, by its SHA-256. The page has no inline `style` attribute (the policy would refuse
it); colours in the charts are SVG presentation attributes. So the file opens the same offline, from a mail
attachment or from a folder, and an injected `<script>` could neither run nor send anything anywhere.
"""

from __future__ import annotations

import base64
import hashlib
import html
import os
import time
from pathlib import Path

from ..pricing import format_cost

CSS = """
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--soft:#f6f8fa;--accent:#0969da;--bad:#cf222e;--good:#1a7f37;
--add:#dafbe1;--del:#ffebe9;--warn:#9a6700}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:var(--fg);
background:#fff}
main{max-width:1240px;margin:0 auto;padding:20px 24px 60px}
h1{font-size:20px;margin:0 0 4px}
h2{font-size:16px;margin:28px 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line)}
a{color:var(--accent);text-decoration:none}a:hover{text-decoration:underline}
.sub{color:var(--muted);margin:0 0 14px;word-break:break-all}
dl.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:8px;margin:12px 0}
dl.facts div{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:6px 10px}
dl.facts dt{color:var(--muted);font-size:12px}dl.facts dd{margin:0;font-weight:600;font-variant-numeric:tabular-nums}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;margin:6px 0;font-size:12px;color:var(--muted)}
.legend span{display:inline-flex;align-items:center;gap:4px}.legend svg{flex:none}
svg.chart{width:100%;height:auto;display:block;border:1px solid var(--line);border-radius:6px;background:#fff}
svg.chart text{font-size:11px;fill:var(--muted)}svg.chart .ev text{font-size:10px;font-weight:600}
svg.chart .grid{stroke:#eaeef2}svg.chart .axis{stroke:#8c959f}svg.chart .hit{fill:transparent}
svg.chart .hit:hover{fill:rgba(9,105,218,.12)}svg.chart .read{fill:none;stroke:#1f2328;stroke-width:1.4}
svg.chart .dot{fill:#1f2328}
.note{color:var(--muted);font-size:12px;margin:4px 0}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums;font-size:13px}
th,td{padding:4px 8px;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}
th{background:var(--soft);position:sticky;top:0;font-weight:600}
td.l,th.l{text-align:left}td.wrap{white-space:normal;word-break:break-all}
tr:target{background:#fff8c5}tfoot td{font-weight:700;background:var(--soft)}
.scroll{overflow-x:auto;max-height:560px;overflow-y:auto;border:1px solid var(--line);border-radius:6px}
.tag{display:inline-block;font-size:11px;padding:0 6px;border-radius:10px;margin-left:3px;color:#fff}
.tag.summary{background:#8250df}.tag.micro{background:#bf8700}.tag.retain{background:#cf222e}
.tag.kind{background:#6e7781}
.status{font-weight:600}.status.completed{color:var(--good)}.status.failed,.status.error{color:var(--bad)}
.status.max_turns,.status.timeout{color:var(--warn)}
.msg{margin:10px 0;border:1px solid var(--line);border-radius:8px;padding:8px 12px;background:#fff}
.msg.user{border-left:4px solid #0969da;background:#f3f8ff}.msg.assistant{border-left:4px solid #1a7f37}
.msg.injected{border-left:4px solid #8c959f;background:var(--soft)}
.who{font-size:12px;color:var(--muted);font-weight:600;margin-bottom:2px}
pre{margin:4px 0;white-space:pre-wrap;word-break:break-word;
font:12.5px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.text{font:14px/1.5 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif}
details{margin:6px 0}summary{cursor:pointer}
details.tool{border:1px solid var(--line);border-radius:6px;background:var(--soft)}
details.tool>summary{padding:4px 10px;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
details.tool>div{padding:4px 10px 8px;border-top:1px solid var(--line);background:#fff}
.tname{font-weight:700}.err{color:var(--bad);font-weight:600}.ok{color:var(--good)}
.diff{border:1px solid var(--line);border-radius:4px;overflow-x:auto}
.diff pre{margin:0;padding:0 8px;white-space:pre}
.diff .a{background:var(--add)}.diff .d{background:var(--del)}.diff .h{color:var(--muted);background:var(--soft)}
.out{background:#0d1117;color:#e6edf3;border-radius:4px;padding:6px 8px;max-height:420px;overflow:auto}
.cut{color:var(--warn);font-style:italic}
.call{font-size:12px;color:var(--muted);margin:4px 0 0}
.event{margin:14px 0;padding:8px 12px;border-radius:8px;border:1px dashed #8250df;background:#fbefff}
.event.rewind{border-color:#cf222e;background:#fff5f5}
@media print{.scroll{max-height:none}}
""".strip()


def esc(text: object) -> str:
    """Text for HTML: `<`, `>`, `&` and both quotes escaped (so it is safe in attributes as well)."""
    return html.escape(str(text), quote=True)


def _digest(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def policy() -> str:
    """Nothing may load; only this page's own stylesheet applies."""
    return f"default-src 'none'; style-src 'sha256-{_digest(CSS)}'; base-uri 'none'; form-action 'none'"


def page(title: str, body: str) -> str:
    """A whole HTML document around `body` (already HTML)."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(policy())}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="react-agent-mini ram view">\n'
        f"<title>{esc(title)}</title>\n"
        f"<style>{CSS}</style>\n"
        f"</head><body><main>\n{body}\n</main></body></html>\n"
    )


def number(value: int) -> str:
    return f"{value:,}"


def share(value: float | None) -> str:
    return "—" if value is None else f"{value:.0%}"


def dollars(value: float | None) -> str:
    return "—" if value is None else format_cost(value)


def when(ts: float) -> str:
    """Local time, to the second (`2025-11-02 14:03:11`)."""
    if not ts:
        return ""
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))
    except (OverflowError, OSError, ValueError):
        return ""


def span(seconds: float) -> str:
    """`42 s`, `3 min 5 s`, `2 h 04 min`."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds + 0.5), 60)
    if minutes < 60:
        return f"{minutes} min {rest} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def write_page(path: Path, text: str) -> None:
    """Write `path` whole (a temporary file renamed over it): a reader never sees half a page."""
    if path.parent != Path(""):
        path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", encoding="utf-8", errors="replace") as handle:
        handle.write(text)
    os.replace(partial, path)
