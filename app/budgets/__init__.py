"""Provider budgets shared by every process on one database: requests and tokens per
minute and calls in flight per provider (base URL + model), and the pause a provider's
Retry-After asks of everyone. app/llm/budget.py decides (pure arithmetic, beside the
gate interface app/llm/gate.py, so the repository can use it without importing this
package back); `service` admits each LLM call through the gate the client is given; the
SQL is in app/repositories/provider_budgets.py.
"""
