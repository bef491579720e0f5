"""Provider budgets shared by every process on one database: requests and tokens per
minute and calls in flight per provider (base URL + model), and the pause a provider's
Retry-After asks of everyone. `limits` decides (pure); `service` admits each LLM call
through the gate the client is given (app/llm/gate.py); the SQL is in
app/repositories/provider_budgets.py.
"""
