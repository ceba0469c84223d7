"""Serve a GGUF model with llama.cpp's own OpenAI-compatible HTTP server (the xllamacpp wheel).

Run it with the interpreter of the environment ``scripts/local-llm-env.sh`` builds:

    .llm/bin/python scripts/serve-local-llm.py --port 8089

and point RecallOps at it with ``RECALLOPS_LLM_BASE_URL=http://127.0.0.1:8089/v1``. One thread by
default: on a small shared CPU, llama.cpp's worker threads wait on each other and two threads
answer several times slower than one. Serves until it is sent SIGTERM or SIGINT.
"""

import argparse
import os
import signal
import threading
from pathlib import Path

import xllamacpp as xlc

DEFAULT_MODEL = (
    Path(os.environ.get("RECALLOPS_CACHE", Path.home() / ".cache" / "recallops"))
    / "models"
    / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL, help="the GGUF file")
    parser.add_argument("--alias", default="qwen2.5-coder-1.5b-instruct", help="the model name it answers to")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--ctx", type=int, default=16384, help="context length in tokens")
    args = parser.parse_args()
    if not args.model.is_file():
        parser.error(f"no model at {args.model}: run scripts/local-llm-env.sh first")

    params = xlc.CommonParams()
    params.model.path = str(args.model)
    params.n_ctx = args.ctx
    params.n_batch = params.n_ubatch = 512
    params.n_parallel = 1
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = args.threads
    params.hostnames = [args.host]
    params.port = args.port
    params.use_jinja = True
    params.ui = False
    params.warmup = True
    params.model_alias = {args.alias}

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    server = xlc.Server(params)  # serves from its own threads while this process lives
    print(f"listening on {server.listening_address}", flush=True)
    stop.wait()


if __name__ == "__main__":
    main()
