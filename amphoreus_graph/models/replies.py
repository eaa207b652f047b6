"""A model's reply as the object it was asked for: every caller of the gateway parses its replies the same way,
so a reply that does not fit raises MalformedOutput, which the gateway answers with its repair pass."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from amphoreus_graph.models.gateway import MalformedOutput

ReplyT = TypeVar("ReplyT", bound=BaseModel)


def parse_reply(text: str, model: type[ReplyT], context: Any = None) -> ReplyT:
    """The JSON object in a reply (between its first `{` and last `}`), validated as `model` (`context`: what its
    validators check names against, e.g. a world's vocabulary)."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise MalformedOutput("the reply holds no JSON object")
    try:
        return model.model_validate_json(text[start : end + 1], context=context)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise MalformedOutput(f"{'.'.join(map(str, first['loc'])) or 'reply'}: {first['msg']}") from None
