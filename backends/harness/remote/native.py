"""Building the native runner: `etsuite-native-runner`, the exchange format's device side in
C++ (remote/cpp/), compiled against the ExecuTorch wheel installed beside this Python with
the wheel's CMake package (`find_package(executorch)`), which needs CMake 3.28 or newer
(the `cmake` package of PyPI, in the `executorch` extra).

The binary is cached under `.build/native-runner/<key>/` of the checkout (git-ignored;
`ETSUITE_NATIVE_BUILD` names another folder), where the key hashes the C++ sources and the
wheel's location and version: a changed source or another wheel builds afresh, anything
else reuses it. Concurrent sessions and workers build once, under a file lock. The
`native` runner kind (remote/kinds.py) builds it on first use; `make native-runner` builds
it ahead (`python -m etsuite.backends.harness.remote.native` prints its path).
Torch-free: it never imports executorch, only finds it.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "cpp"
BINARY = "etsuite-native-runner"
CMAKE_MINIMUM = (3, 28)
BUILD_JOBS = 2            # this project's machines have two cores shared with other work
INSTALL_CMAKE = "pip install 'cmake>=3.28' (the executorch extra has it)"


class BuildError(RuntimeError):
    """The native runner cannot be built here; the message says why and what to install."""


def executorch_package() -> tuple[Path, str]:
    """(the installed executorch package's folder, its version), without importing it."""
    spec = importlib.util.find_spec("executorch")
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise BuildError("executorch is not installed beside this Python "
                         f"({sys.executable}): pip install executorch")
    root = Path(locations[0])
    if not (root / "share" / "cmake" / "executorch-config.cmake").is_file():
        raise BuildError(f"the executorch package at {root} ships no CMake package "
                         "(share/cmake/executorch-config.cmake): a wheel of 1.5 or newer has it")
    return root, importlib.metadata.version("executorch")


def build_root() -> Path:
    """$ETSUITE_NATIVE_BUILD, else the checkout's .build/native-runner (an installed copy
    of etsuite: the user's cache folder)."""
    if os.environ.get("ETSUITE_NATIVE_BUILD"):
        return Path(os.environ["ETSUITE_NATIVE_BUILD"])
    checkout = Path(__file__).resolve().parents[3]
    if (checkout / "setup.cfg").is_file() and (checkout / "backends").is_dir():
        return checkout / ".build" / "native-runner"
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "etsuite" / "native-runner"


def build_key(package: Path, version: str) -> str:
    digest = hashlib.sha256(f"{package.resolve()}\n{version}\n".encode())
    for path in sorted(SOURCE.iterdir()):
        if path.is_file():
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def cmake_version(cmake: str) -> tuple[int, ...] | None:
    try:
        done = subprocess.run([cmake, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"version (\d+)\.(\d+)", done.stdout)
    return (int(found.group(1)), int(found.group(2))) if found else None


def find_cmake() -> str:
    """$ETSUITE_CMAKE, else the cmake beside this Python (PyPI's), else the one on PATH,
    whichever is 3.28 or newer."""
    candidates = [os.environ.get("ETSUITE_CMAKE"),
                  os.path.join(os.path.dirname(sys.executable), "cmake"), shutil.which("cmake")]
    seen = []
    for cmake in candidates:
        if not cmake or not os.path.exists(cmake) or cmake in seen:
            continue
        seen.append(cmake)
        version = cmake_version(cmake)
        if version is not None and version >= CMAKE_MINIMUM:
            return cmake
    tried = ", ".join(seen) or "none found"
    raise BuildError(f"building the native runner needs CMake {'.'.join(map(str, CMAKE_MINIMUM))} "
                     f"or newer (tried: {tried}): {INSTALL_CMAKE}")


def _run_logged(argv: list[str], log: Path) -> None:
    with open(log, "a", encoding="utf-8") as handle:
        handle.write("$ " + " ".join(argv) + "\n")
        handle.flush()
        done = subprocess.run(argv, stdout=handle, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        tail = "\n".join(log.read_text(encoding="utf-8", errors="replace").splitlines()[-15:])
        raise BuildError(f"{os.path.basename(argv[0])} exited {done.returncode} building the "
                         f"native runner (log: {log}):\n{tail}")


def ensure_binary(force: bool = False) -> Path:
    """The native runner's path, built first if this source and wheel have none yet."""
    package, version = executorch_package()
    folder = build_root() / build_key(package, version)
    binary, done = folder / BINARY, folder / "built"
    if done.is_file() and binary.is_file() and not force:
        return binary
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be building the same key
        if done.is_file() and binary.is_file() and not force:
            return binary
        cmake = find_cmake()
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        log = folder / "build.log"
        _run_logged([cmake, "-S", str(SOURCE), "-B", str(folder), "-DCMAKE_BUILD_TYPE=Release",
                     f"-Dexecutorch_DIR={package / 'share' / 'cmake'}"], log)
        _run_logged([cmake, "--build", str(folder), "--parallel", str(BUILD_JOBS)], log)
        if not binary.is_file():
            raise BuildError(f"the build wrote no {binary} (log: {log})")
        done.write_text(f"executorch {version} at {package}\n")
    return binary


@functools.cache
def binary_for_this_process() -> Path:
    """ensure_binary, asked once per process (what each job of the `native` kind runs)."""
    return ensure_binary()


def binary_path(given: str | None = None) -> str:
    """The runner to start: one built elsewhere (`given`), else this checkout's build."""
    return given or str(binary_for_this_process())


def main(argv: list[str]) -> int:
    """`make native-runner`: build (or find) the binary and print its path."""
    try:
        print(ensure_binary(force="--force" in argv))
    except BuildError as error:
        print(f"native runner: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
