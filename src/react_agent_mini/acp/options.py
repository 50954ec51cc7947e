"""What a session offers the editor to choose: our permission modes (`modes`, switched with `session/set_mode`)
and the model (a `model` config option, switched with `session/set_config_option`). In protocol version 1,
config options are how a model is chosen.

The models offered are the one ram is configured for, then the other known models of the same provider's
endpoint: Anthropic's, DeepSeek's, OpenAI's. For any other OpenAI-compatible server only the configured one is
offered, because ram cannot know which models that server has.
"""

from __future__ import annotations

from urllib.parse import urlparse

from acp.schema import SessionConfigOptionSelect, SessionConfigSelectOption, SessionMode, SessionModeState

from .. import permission_modes
from ..config import ProviderConfig
from ..permissions.rules import PermissionMode

MODES: dict[PermissionMode, tuple[str, str]] = {
    mode: (permission_modes.MODES[mode].title, permission_modes.MODES[mode].description)
    for mode in permission_modes.PERMISSION_MODES
}
"""Mode id → (name, description), in the order an editor shows them."""

KNOWN_MODELS: dict[str, tuple[str, ...]] = {
    "anthropic": ("claude-sonnet-4-5", "claude-opus-4-5", "claude-haiku-4-5"),
    "api.deepseek.com": ("deepseek-chat", "deepseek-reasoner"),
    "api.openai.com": ("gpt-5", "gpt-5-mini", "gpt-4.1", "gpt-4.1-mini"),
}
"""Provider kind or endpoint host → models worth offering beside the configured one."""
MODEL_OPTION = "model"
"""The id of the model config option."""


def mode_state(current: str) -> SessionModeState:
    """The modes, with `current` chosen (a mode we do not offer shows as `default`)."""
    return SessionModeState(
        current_mode_id=current if current in MODES else "default",
        available_modes=[SessionMode(id=mode, name=name, description=text) for mode, (name, text) in MODES.items()],
    )


def models(config: ProviderConfig, current: str) -> list[str]:
    """The models to offer: the current one first, then the configured one, then the known others."""
    key = config.kind if config.kind != "openai" else urlparse(config.base_url).hostname or ""
    return list(dict.fromkeys([current, config.model, *KNOWN_MODELS.get(key, ())]))


def model_option(config: ProviderConfig, current: str) -> SessionConfigOptionSelect:
    """The `model` config option, with `current` chosen."""
    where = "offline demo" if config.kind == "mock" else config.kind
    return SessionConfigOptionSelect(
        type="select",
        id=MODEL_OPTION,
        name="Model",
        category="model",
        description=f"The model ram sends this session's requests to ({where})",
        current_value=current,
        options=[SessionConfigSelectOption(value=model, name=model) for model in models(config, current)],
    )
