"""Build an autogen `ChatCompletionClient` from settings.

    MIRIX_LLM_PROVIDER=openai   MIRIX_LLM_MODEL=gpt-4o-mini                      (OPENAI_API_KEY)
    MIRIX_LLM_PROVIDER=openai   MIRIX_LLM_MODEL=qwen2.5-7b  MIRIX_LLM_BASE_URL=http://localhost:8000/v1  (vLLM, llama.cpp server, LM Studio)
    MIRIX_LLM_PROVIDER=azure    MIRIX_LLM_MODEL=gpt-4o  AZURE_OPENAI_ENDPOINT=...  AZURE_OPENAI_DEPLOYMENT=...  AZURE_OPENAI_API_KEY=...
    MIRIX_LLM_PROVIDER=ollama   MIRIX_LLM_MODEL=llama3.1     (MIRIX_LLM_BASE_URL=http://localhost:11434)
    MIRIX_LLM_PROVIDER=llamacpp MIRIX_LLM_MODEL=/path/model.gguf                 (pip install 'autogen-ext[llama-cpp]')
"""

from __future__ import annotations

import json
import os
from typing import Any

from autogen_core.models import ChatCompletionClient, ModelFamily, ModelInfo

from mirix_py.errors import InvalidInput
from mirix_py.settings import Settings

PROVIDERS = ("openai", "azure", "ollama", "llamacpp")


def _flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() in ("1", "true", "yes", "on")


def model_info_from_env() -> ModelInfo:
    """Capabilities of a model autogen does not know (local and OpenAI-compatible servers)."""
    return ModelInfo(
        vision=_flag("MIRIX_LLM_VISION", False),
        function_calling=_flag("MIRIX_LLM_FUNCTION_CALLING", True),
        json_output=_flag("MIRIX_LLM_JSON_OUTPUT", True),
        family=ModelFamily.UNKNOWN,
        structured_output=False,
    )


class _DropLegacyFunctionCall:
    """An httpx transport that drops the deprecated `function_call` a reply carries beside `tool_calls`.

    llama-cpp-python's server (chatml-function-calling, with a forced `tool_choice`) answers with
    both; autogen's OpenAI client refuses any reply with `function_call` set. The `tool_calls` are
    the same call, so the legacy field is dropped and the reply is otherwise untouched."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def handle_async_request(self, request: Any) -> Any:
        import httpx

        response = await self.inner.handle_async_request(request)
        if not request.url.path.endswith("/chat/completions") or response.status_code != 200:
            return response
        body = await response.aread()
        try:
            data = json.loads(body)
        except ValueError:
            return httpx.Response(response.status_code, headers=response.headers, content=body, request=request)
        changed = False
        for choice in data.get("choices") or []:
            message = choice.get("message") or {}
            if message.get("function_call") is not None and message.get("tool_calls"):
                message.pop("function_call")
                changed = True
        content = json.dumps(data).encode() if changed else body
        headers = {k: v for k, v in response.headers.items() if k.lower() not in ("content-length", "content-encoding")}
        return httpx.Response(response.status_code, headers=headers, content=content, request=request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def compatible_http_client(timeout_s: float = 600.0) -> Any:
    """The HTTP client for OpenAI-compatible servers (see `_DropLegacyFunctionCall`)."""
    import httpx

    return httpx.AsyncClient(transport=_DropLegacyFunctionCall(httpx.AsyncHTTPTransport()),  # type: ignore[arg-type]
                             timeout=timeout_s)


def build_model_client(settings: Settings) -> ChatCompletionClient | None:
    """None when no LLM is configured: the engine then runs its offline rules."""
    if not settings.llm_configured:
        return None
    provider = (settings.llm_provider or "openai").lower()
    model = settings.llm_model
    if not model:
        raise InvalidInput("MIRIX_LLM_MODEL is required when an LLM provider is set")
    if provider == "openai":
        from autogen_ext.models.openai import OpenAIChatCompletionClient

        kwargs: dict[str, Any] = {"model": model, "api_key": os.environ.get("OPENAI_API_KEY") or "not-needed"}
        if settings.llm_base_url:
            kwargs["base_url"] = settings.llm_base_url
            kwargs["model_info"] = model_info_from_env()
            kwargs["http_client"] = compatible_http_client()
            kwargs["max_retries"] = 0  # a bounded call fails once and is reported; the flow decides what next
        try:
            return OpenAIChatCompletionClient(**kwargs)
        except ValueError:  # a model name autogen has no info for
            kwargs["model_info"] = model_info_from_env()
            return OpenAIChatCompletionClient(**kwargs)
    if provider == "azure":
        from autogen_ext.models.openai import AzureOpenAIChatCompletionClient

        azure: dict[str, Any] = dict(  # no key: the openai SDK says what is missing
            model=model, azure_deployment=os.environ.get("AZURE_OPENAI_DEPLOYMENT", model),
            azure_endpoint=os.environ.get("AZURE_OPENAI_ENDPOINT", settings.llm_base_url or ""),
            api_version=os.environ.get("AZURE_OPENAI_API_VERSION", "2024-10-21"),
            api_key=os.environ.get("AZURE_OPENAI_API_KEY"),
        )
        return AzureOpenAIChatCompletionClient(**azure)
    if provider == "ollama":
        try:
            from autogen_ext.models.ollama import OllamaChatCompletionClient
        except ImportError as exc:
            raise InvalidInput("the Ollama provider needs `pip install 'autogen-ext[ollama]'`") from exc
        return OllamaChatCompletionClient(model=model, host=settings.llm_base_url, model_info=model_info_from_env())
    if provider == "llamacpp":
        try:
            from autogen_ext.models.llama_cpp import LlamaCppChatCompletionClient
        except ImportError as exc:
            raise InvalidInput("the llama.cpp provider needs `pip install 'autogen-ext[llama-cpp]'`") from exc
        return LlamaCppChatCompletionClient(model_path=model, model_info=model_info_from_env())
    raise InvalidInput(f"unknown LLM provider {provider!r}: use one of {PROVIDERS}")
