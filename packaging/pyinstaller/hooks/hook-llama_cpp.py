"""PyInstaller hook: ship llama-cpp-python's native llama.cpp/ggml libraries.

llama_cpp loads ``llama_cpp/lib/lib{llama,ggml*,mtmd}.{so,dylib,dll}`` with ctypes
at import time, so PyInstaller's import analysis never sees them. We collect them at
the same relative path (``_internal/llama_cpp/lib``) because that is where
``llama_cpp._ctypes_extensions.load_shared_library`` looks.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from PyInstaller.utils.hooks import get_package_paths

_, _package_dir = get_package_paths("llama_cpp")
_lib = Path(_package_dir) / "lib"

binaries = []
datas = []
for path in sorted(_lib.glob("*")) if _lib.is_dir() else []:
    name = path.name
    # The wheel holds libX.so, libX.so.0 and libX.so.0.N.M as three full copies.
    # ctypes opens libX.so, and the loader resolves DT_NEEDED sonames (libX.so.0),
    # so the fully versioned copy is dead weight.
    if ".so." in name and name.count(".") > 2:
        continue
    if name.endswith((".so", ".dylib", ".dll")) or ".so." in name:
        binaries.append((str(path), "llama_cpp/lib"))
    elif name.endswith((".metal", ".metallib")):
        # Metal builds without GGML_METAL_EMBED_LIBRARY read the shader source at run time.
        datas.append((str(path), "llama_cpp/lib"))

# Metal shaders may also sit next to the package rather than in lib/.
for pattern in ("*.metal", "*.metallib"):
    datas += [(str(p), "llama_cpp") for p in Path(_package_dir).glob(pattern)]

if sys.platform == "win32":
    # MSVC builds with OpenMP need vcomp140.dll, which is not part of the VC runtime
    # PyInstaller already bundles; take the wheel's copy, else the system one.
    candidates = [
        _lib / "vcomp140.dll",
        Path(os.environ.get("SYSTEMROOT", r"C:\Windows")) / "System32" / "vcomp140.dll",
    ]
    for candidate in candidates:
        if candidate.is_file():
            binaries.append((str(candidate), "llama_cpp/lib"))
            break

# The server's JSON schema grammar and chat formats are plain Python: no extra data.
