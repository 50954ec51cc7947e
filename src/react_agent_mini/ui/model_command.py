"""`/model [NAME]`: the models the session's provider is known to serve, or a switch to one inside the session.

Claude Code's `/model` opens a picker of its aliases; here `/model` lists what the price and context-window tables
know for this provider (Claude models on the Anthropic API, the others on an OpenAI-compatible endpoint), with each
one's window and price, the current one marked, and `/model NAME` switches — the same provider and endpoint, so
the conversation goes on as it is. A name the tables do not know is taken too (a local server's model), with a
line saying that its cost is not shown and which window is assumed. The status line, `/status`, the prices and the
context window (when a summary starts) follow the new model from the next call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..host import SessionHost


def known_models(provider_kind: str) -> list[str]:
    """Model ids the price and window tables name, for `provider_kind`'s wire (prefixes left out)."""
    from ..compact.tokens import KNOWN_CONTEXT_WINDOWS
    from ..pricing import KNOWN_PRICES

    names = [*KNOWN_PRICES, *(n for n in KNOWN_CONTEXT_WINDOWS if n not in KNOWN_PRICES)]
    claude = provider_kind == "anthropic"
    return [n for n in names if n.startswith("claude-") == claude and not n.endswith("-") and n != "mock"]


def describe(model: str) -> str:
    """`window 200k · $3.00 / $15.00 per Mtok in/out` (the price left out when it is not known)."""
    from ..compact.tokens import context_window
    from ..pricing import price_for

    window = context_window(model)
    shown = f"{window / 1e6:.1f}M" if window >= 1_000_000 else f"{window // 1000}k" if window >= 1000 else str(window)
    price = price_for(model)
    cost = f" · ${price.input:.2f} / ${price.output:.2f} per Mtok in/out" if price is not None else " · price unknown"
    return f"window {shown}{cost}"


def model_command(host: SessionHost, args: str) -> list[tuple[str, str]]:
    """Run `/model args`; the lines to show, each with its style."""
    from ..model_choice import ANTHROPIC_ALIASES

    kind = host.config.kind
    current = host.model
    wanted = args.strip()
    if not wanted:
        lines = [(f"model: {current} ({describe(current)})", "bold")]
        lines.append(("known models of this provider (/model NAME switches; any name the endpoint serves works):", ""))
        for name in known_models(kind):
            mark = "●" if name == current else " "
            lines.append((f"  {mark} {name:<22} {describe(name)}", ""))
        if kind == "anthropic":
            aliases = ", ".join(f"{a} → {m}" for a, m in ANTHROPIC_ALIASES.items())
            lines.append((f"  aliases: {aliases}", "dim"))
        return lines
    if len(wanted.split()) > 1:
        return [("usage: /model, or /model NAME (one model id)", "yellow")]
    model = ANTHROPIC_ALIASES.get(wanted.lower(), wanted) if kind == "anthropic" else wanted
    if model == current:
        return [(f"already using {model} ({describe(model)})", "dim")]
    host.set_model(model)
    lines = [(f"model: {current} → {model} ({describe(model)})", "")]
    from ..pricing import price_for

    if price_for(model) is None:
        lines.append(("note: this model is not in the price table, so no cost is shown for its calls", "dim"))
    if model not in known_models(kind) and kind == "anthropic" and not model.startswith("claude"):
        lines.append(("warning: not a Claude model name; the next call will tell whether the API serves it", "yellow"))
    return lines
