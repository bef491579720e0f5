"""The screening pipeline: evidence, LLM calls with retries and confirmations, policy."""
