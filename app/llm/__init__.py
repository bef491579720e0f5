"""The LLM client: calls an OpenAI-compatible provider and describes each call.

async with LLMClient(settings.judge, concurrency=settings.llm_concurrency) as client:
    result = await client.complete([{"role": "user", "content": prompt}])
    if result.failed: ...  # record a provider_error review with result.error
"""

from app.llm.call import CallResult
from app.llm.client import LLMClient
from app.llm.errors import LLMError, ProviderBackoff

__all__ = ["CallResult", "LLMClient", "LLMError", "ProviderBackoff"]
