"""The providers ram can talk to, in one table: for each, its name, the class that speaks to it (named by dotted
path, imported only when one is built), the environment variables it reads, and its defaults.

Everything that needs to know which providers exist reads this table and keeps no list of its own: the
`--provider` choices (`cli`, `acp.main`, `batch.cli`), `Agent(provider=...)` (`library.options`), which provider
the flags and environment pick (`provider_env`, which `scripts/run` asks, and `config`), the hints of
`providers.errors`, and the credentials a command never sees and a project's `.mcp.json` never expands
(`credentials`, read by `app` for the shell scrub and by `mcp.config`). A provider added here, or at run time with
`register`, is offered, accepted, resolved, hinted at and withheld everywhere at once.

The table's order is the order of precedence: without `--provider`, the first provider with a key (or token) set
is used, else the first whose base URL is a server on this machine when that needs no key (`provider_env`).

As pydantic-ai's `infer_provider_class` does, `ProviderSpec.load` imports the class only when asked, so reading
the table costs this module alone: it imports nothing, not even `typing` (`scripts/run` asks it before every run).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing`'s: importing typing would cost more than this module
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, Literal, TypeAlias

    ProviderName: TypeAlias = Literal["openai", "anthropic", "mock"]
    """The built-in providers' names, for type checkers and editors (`Agent(provider=...)`); a test checks it
    against `BUILT_IN`."""

MOCK = "mock"
"""The offline scripted demo's name (`--mock`, `QUERY_MOCK=1`)."""


class ProviderSpec:
    """One provider: how it is built, read from the environment, and named in hints. Read-only once registered."""

    __slots__ = (
        "base_url_variable",
        "default_base_url",
        "default_model",
        "endpoint_kind",
        "key_note",
        "key_variable",
        "loopback_needs_no_key",
        "model_variable",
        "name",
        "provider_class",
        "token_variable",
    )

    name: str
    """What `--provider`, `Agent(provider=)` and `ProviderConfig.kind` call it."""
    provider_class: str
    """The class's dotted path (`package.module.Class`). One that makes requests is built with the keywords of
    `providers.http_provider.HttpProvider` (`config.build_provider`); the offline one with `chunk_delay` and
    `model`."""
    key_variable: str
    """The variable holding its API key ("" for the offline demo, which makes no request)."""
    token_variable: str
    """The variable holding a bearer token sent instead of the key ("" for none)."""
    base_url_variable: str
    default_base_url: str
    model_variable: str
    default_model: str
    loopback_needs_no_key: bool
    """A base URL on this machine (`localhost`, `127.0.0.1`, `::1`) is used without a key (a local server)."""
    key_note: str
    """What follows the key's name in the message for no key at all (`config.no_key_message`), in parentheses."""
    endpoint_kind: str
    """What its base URL must be, for the hint on a 404 that does not say why (`an OpenAI-compatible endpoint`)."""

    def __init__(
        self,
        name: str,
        provider_class: str,
        *,
        default_model: str,
        key_variable: str = "",
        token_variable: str = "",
        base_url_variable: str = "",
        default_base_url: str = "",
        model_variable: str = "",
        loopback_needs_no_key: bool = False,
        key_note: str = "",
        endpoint_kind: str = "",
    ) -> None:
        if key_variable and not (base_url_variable and default_base_url):
            raise ValueError(f"provider {name!r}: a provider with a key needs a base URL variable and a default")
        self.name = name
        self.provider_class = provider_class
        self.default_model = default_model
        self.key_variable = key_variable
        self.token_variable = token_variable
        self.base_url_variable = base_url_variable
        self.default_base_url = default_base_url
        self.model_variable = model_variable
        self.loopback_needs_no_key = loopback_needs_no_key
        self.key_note = key_note
        self.endpoint_kind = endpoint_kind

    def __repr__(self) -> str:
        return f"ProviderSpec({self.name!r}, {self.provider_class!r})"

    @property
    def offline(self) -> bool:
        """It makes no request (the scripted demo): no key, no base URL, not a `--provider` choice (`--mock` is)."""
        return not self.key_variable

    @property
    def credentials(self) -> tuple[str, ...]:
        """The variables it reads a key or token from."""
        return tuple(name for name in (self.key_variable, self.token_variable) if name)

    def has_credentials(self, env: Mapping[str, str]) -> bool:
        """A key or token for it is set in `env`."""
        return any(env.get(name, "").strip() for name in self.credentials)

    def load(self) -> Any:
        """The provider class, imported now (the first time, this imports its module)."""
        from importlib import import_module

        module, _, attribute = self.provider_class.rpartition(".")
        return getattr(import_module(module), attribute)


BUILT_IN = (
    ProviderSpec(
        "openai",
        "react_agent_mini.providers.openai_compat.OpenAICompatProvider",
        key_variable="OPENAI_API_KEY",
        base_url_variable="OPENAI_BASE_URL",
        default_base_url="https://api.deepseek.com",
        model_variable="OPENAI_MODEL",
        default_model="deepseek-chat",
        loopback_needs_no_key=True,
        key_note="DeepSeek by default, or any OpenAI-compatible server with OPENAI_BASE_URL",
        endpoint_kind="an OpenAI-compatible endpoint",
    ),
    ProviderSpec(
        "anthropic",
        "react_agent_mini.providers.anthropic.AnthropicProvider",
        key_variable="ANTHROPIC_API_KEY",
        token_variable="ANTHROPIC_AUTH_TOKEN",
        base_url_variable="ANTHROPIC_BASE_URL",
        default_base_url="https://api.anthropic.com",
        model_variable="ANTHROPIC_MODEL",
        default_model="claude-sonnet-4-5",
        loopback_needs_no_key=True,
        endpoint_kind="an Anthropic Messages endpoint",
    ),
    ProviderSpec(MOCK, "react_agent_mini.providers.mock.MockProvider", default_model="mock-scripted"),
)
"""The providers ram comes with, in order of precedence."""

_registered: dict[str, ProviderSpec] = {spec.name: spec for spec in BUILT_IN}


def register(spec: ProviderSpec) -> None:
    """Add a provider, after those there are (ValueError when its name is taken)."""
    if spec.name in _registered:
        raise ValueError(f"a provider named {spec.name!r} is registered already")
    _registered[spec.name] = spec


def unregister(name: str) -> None:
    """Remove a provider added with `register` (ValueError for a built-in one)."""
    if any(spec.name == name for spec in BUILT_IN):
        raise ValueError(f"{name!r} is a built-in provider")
    _registered.pop(name, None)


def get(name: str) -> ProviderSpec | None:
    """The provider called `name`, if there is one."""
    return _registered.get(name)


def providers() -> tuple[ProviderSpec, ...]:
    """Every provider, in order of precedence."""
    return tuple(_registered.values())


def names() -> tuple[str, ...]:
    """Every provider's name: what `Agent(provider=...)` takes."""
    return tuple(_registered)


def flag_choices() -> tuple[str, ...]:
    """What `--provider` takes: every provider that makes requests (the offline demo is `--mock`)."""
    return tuple(spec.name for spec in _registered.values() if not spec.offline)


def credential_variables() -> frozenset[str]:
    """Every variable a provider reads a key or token from."""
    return frozenset(name for spec in _registered.values() for name in spec.credentials)
