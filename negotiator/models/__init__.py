"""Model routing: LiteLLM for real models, scripted doubles for tests, the local server."""

from .base import ChatModel, ModelRequest, ModelResponse, ToolCall, block_remote_requests, is_loopback, is_loopback_host
from .families import model_family
from .litellm_model import LiteLLMModel
from .scripted import ScriptedModel, ScriptExhausted, named_scripted_model
from .specs import Spec, parse_spec

__all__ = [
    "ChatModel",
    "ModelRequest",
    "ModelResponse",
    "ToolCall",
    "block_remote_requests",
    "is_loopback",
    "is_loopback_host",
    "model_family",
    "LiteLLMModel",
    "ScriptedModel",
    "ScriptExhausted",
    "named_scripted_model",
    "Spec",
    "parse_spec",
]
