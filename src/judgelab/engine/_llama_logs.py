"""Route llama.cpp's log lines into Python logging at their real level.

llama-cpp-python's own log callback maps ggml's log levels from an older
enum (DEBUG was added at 1 since), so llama.cpp warnings reach stderr as
errors even when verbose is off: "llama_kv_cache_iswa: using full-size SWA
cache" on every load. Here ggml's levels map onto the ``llama_cpp`` logger;
llama.cpp's warnings are about settings judgelab chose on purpose, so they
are logged at INFO. ``verbose=True`` on any loaded model prints everything
to stderr, as llama.cpp does by itself.
"""

from __future__ import annotations

import ctypes
import logging
import sys
import threading
from types import ModuleType

__all__ = ["route_llama_logs"]

log = logging.getLogger("judgelab.llama_cpp")

# enum ggml_log_level (ggml.h): NONE 0, DEBUG 1, INFO 2, WARN 3, ERROR 4, CONT 5
_LEVELS = {0: logging.DEBUG, 1: logging.DEBUG, 2: logging.DEBUG, 3: logging.INFO, 4: logging.ERROR}
_CONT = 5

_lock = threading.Lock()
_callback = None  # kept alive: llama.cpp holds only the function pointer
_verbose = False
_last_level = logging.DEBUG


def route_llama_logs(llama_cpp_module: ModuleType, *, verbose: bool) -> None:
    """Install the callback once per process; ``verbose`` turns on raw stderr output."""
    global _callback, _verbose
    with _lock:
        _verbose = _verbose or verbose
        if _callback is not None:
            return

        @llama_cpp_module.llama_log_callback
        def _on_log(level: int, text: bytes, _user_data: object) -> None:
            global _last_level
            message = text.decode("utf-8", errors="replace") if text else ""
            if _verbose:
                print(message, end="", file=sys.stderr, flush=True)
                return
            py_level = _last_level if level == _CONT else _LEVELS.get(level, logging.DEBUG)
            _last_level = py_level
            if message.strip() and log.isEnabledFor(py_level):
                log.log(py_level, "%s", message.rstrip())

        _callback = _on_log
        llama_cpp_module.llama_log_set(_callback, ctypes.c_void_p(0))
