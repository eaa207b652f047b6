"""Native structured output: where an endpoint offers it, a reply is asked for in a JSON schema, so it cannot
fail to parse, and an agent cannot name an action it was not offered.

**What is asked.** For an agent's turn (`decision_format` in policy/llm.py), the Decision schema with the turn's
offered actions as an enum and the targets on offer as another (a free-text option leaves the target a free
string). Two ways to ask, chosen per client (`structured_mode`, `--structured`):
- `json_schema`: OpenAI's strict `response_format`, for OpenAI-compatible clients (`ChatOpenAI`: OpenAI itself,
  vLLM, Ollama's and LM Studio's OpenAI endpoints, llama.cpp's server), which all implement it (vLLM and llama.cpp
  by constrained decoding). The default for them.
- `tools`: one forced tool call whose parameters are the schema, in the client's own tool format (LangChain's
  `bind_tools`). The default for other clients that take tools (Anthropic, Ollama's own client); for an
  OpenAI-compatible server whose model handles tools better than response formats, ask for it.
The reply (the text, or the tool call's arguments) is parsed by the same code as before, so a reply that still does
not fit (an action paired with a target it does not take) gets the usual repair pass. Clients with neither are
asked in the prompt alone, as before (`off` does that for every client).

**Detecting support.** There is no standard way to ask an endpoint what it offers, so the request says: an
endpoint that refuses a request carrying the format as bad (400, 404, 415 or 422) is asked the same thing again
without it, at once; if that plain request is answered, the endpoint does not offer the format, which is
remembered for the process (and in the response cache, so a replay does not ask again), and its requests go
plain from then on: the prompt and the parse-repair path, as for any other model. If the plain request is refused
too, the refusal was about something else, and nothing is remembered.
"""

from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass
from typing import Any, Literal, get_args

from langchain_core.language_models import BaseChatModel

JSON_SCHEMA = "json_schema"
TOOLS = "tools"
Mode = Literal["auto", "json_schema", "tools", "off"]  # what --structured takes
MODES: tuple[str, ...] = get_args(Mode)
# langchain-openai warns on such a refusal and advises another `with_structured_output` method; the gateway
# detects the refusal itself and asks plainly, so the advice would only mislead.
warnings.filterwarnings("ignore", "This model does not support OpenAI.s structured output", UserWarning)
REFUSED_AS_BAD = frozenset({400, 404, 415, 422})


@dataclass(frozen=True)
class ReplyFormat:
    """The JSON schema a reply must follow, and its name (what OpenAI's `json_schema.name` carries)."""

    name: str
    schema: dict[str, Any]

    def response_format(self) -> dict[str, Any]:
        """As an OpenAI-style `response_format` request field (strict: the schema is enforced, not hinted)."""
        return {"type": JSON_SCHEMA, "json_schema": {"name": self.name, "schema": self.schema, "strict": True}}

    def tool(self) -> dict[str, Any]:
        """As an OpenAI-style function tool (what `bind_tools` takes from any provider and converts)."""
        return {"type": "function", "function": {"name": self.name, "parameters": self.schema}}

    def options(self, mode: str) -> dict[str, Any]:
        """What a request carries to ask for it in `mode`, provider-neutral (part of the response cache's key)."""
        if mode == JSON_SCHEMA:
            return {"response_format": self.response_format()}
        return {"tools": [self.tool()], "tool_choice": self.name}


def speaks_openai(model: BaseChatModel) -> bool:
    """Whether the model's client is OpenAI's (or compatible): it sends `response_format` (the endpoint behind it
    may still refuse) and per-request headers."""
    return type(model).__name__ in {"ChatOpenAI", "AzureChatOpenAI"} or hasattr(model, "openai_api_base")


def takes_tools(model: BaseChatModel) -> bool:
    """Whether the model's client binds tools (LangChain's base class only raises NotImplementedError)."""
    return type(model).bind_tools is not BaseChatModel.bind_tools


def structured_mode(model: BaseChatModel, wanted: str = "auto") -> str | None:
    """How to ask this client for structured replies (None: in the prompt alone). `wanted` is `--structured`: a
    mode the client cannot send falls back to `auto`'s choice, which is json_schema for OpenAI-compatible clients,
    tools for other clients that take them."""
    if wanted not in MODES:
        raise ValueError(f"--structured {wanted!r}: expected one of {list(MODES)}")
    if wanted == "off":
        return None
    if wanted == TOOLS and takes_tools(model):
        return TOOLS
    if speaks_openai(model):
        return JSON_SCHEMA
    return TOOLS if takes_tools(model) else None


def provider_options(model: BaseChatModel, options: dict[str, Any]) -> dict[str, Any]:
    """A request's provider-neutral options in the client's own words: tools through its `bind_tools`."""
    if "tools" not in options:
        return options
    bound = model.bind_tools(options["tools"], tool_choice=options["tool_choice"])
    return dict(getattr(bound, "kwargs", {}))


def refused_as_bad(exc: BaseException) -> bool:
    """An HTTP refusal of the request itself (not of the server's state): what an unsupported field gets."""
    return getattr(exc, "status_code", None) in REFUSED_AS_BAD


class Capabilities:
    """What endpoints were found not to offer, for the life of the process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._missing: set[tuple[str, str]] = set()

    def offers(self, endpoint: str, feature: str) -> bool:
        with self._lock:
            return (endpoint, feature) not in self._missing

    def mark_missing(self, endpoint: str, feature: str) -> None:
        with self._lock:
            self._missing.add((endpoint, feature))

    def forget(self) -> None:
        with self._lock:
            self._missing.clear()


CAPABILITIES = Capabilities()
