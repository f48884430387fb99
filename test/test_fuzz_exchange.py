"""Property-based fuzzers of the exchange format's readers (docs/reference/exchange-format.md):
the host's answer reader and tar reader (remote/exchange.py, agent.extract_flat), the
relay's protocol lines (remote/resident.py), and the native runner's tar and JSON readers
(remote/cpp/) through a small driver compiled here. Whatever a device sends, a reader
returns or refuses with its one error: no traceback, no hang, no file written or read
outside the answer's folder. `make fuzz-inputs MINUTES=N` runs each target longer
(test/fuzzing.py)."""

import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from etsuite.backends.harness.remote import agent, exchange, resident
from fuzzing import counted, fuzz_settings

HANG_SECONDS = 5.0  # one example that takes longer is a hang
DRIVER = Path(__file__).parent / "data" / "native_readers_driver.cpp"
NATIVE = Path(agent.__file__).parent / "cpp"
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64,
          torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool]


class Sandbox:
    """A folder holding one scratch folder per example and a marker beside them: after
    the example, nothing but its scratch folder may have changed."""

    def __init__(self, root: Path):
        self.root = root
        self.marker = root / "outside.txt"
        self.marker.write_text("outside")

    def __enter__(self) -> Path:
        self.started = time.monotonic()
        self.scratch = Path(tempfile.mkdtemp(dir=self.root))
        return self.scratch

    def __exit__(self, *exc_info) -> None:
        assert time.monotonic() - self.started < HANG_SECONDS, "a reader took too long"
        assert sorted(os.listdir(self.root)) == sorted(["outside.txt", self.scratch.name])
        assert self.marker.read_text() == "outside"
        shutil.rmtree(self.scratch)


# ---------------------------------------------------------------- the Python readers

@st.composite
def tensors(draw):
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(st.lists(st.integers(0, 4), max_size=4))
    count = 1
    for n in shape:
        count *= n
    itemsize = torch.empty(0, dtype=dtype).element_size()
    data = draw(st.binary(min_size=count * itemsize, max_size=count * itemsize))
    flat = torch.frombuffer(bytearray(data), dtype=torch.uint8) if data \
        else torch.empty(0, dtype=torch.uint8)
    return flat.view(dtype).reshape(shape)


# the scalars the format keeps as they are (others travel as their repr)
scalars = st.one_of(st.booleans(), st.integers(-2**63, 2**63 - 1),
                    st.floats(allow_nan=False, allow_infinity=False))


@fuzz_settings(examples_per_second=100)
@given(values=st.lists(st.one_of(tensors(), scalars), max_size=6))
@counted
def test_fuzz_written_values_read_back_the_same(tmp_path_factory, values):
    """value_entries writes what read_values reads back: same bytes, dtype and shape."""
    with Sandbox(tmp_path_factory.mktemp("roundtrip")) as folder:
        files = exchange.job_files(b"pte", values, [])
        exchange.write_folder(str(folder), files)
        manifest = json.loads(files[exchange.MANIFEST])
        found = exchange.read_values(str(folder), manifest["inputs"])
        assert len(found) == len(values)
        for value, back in zip(values, found, strict=True):
            if isinstance(value, torch.Tensor):
                assert back.dtype == value.dtype and back.shape == value.shape
                assert exchange.tensor_bytes(back) == exchange.tensor_bytes(value)
            else:
                assert back == value


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63 - 1),
              st.floats(allow_nan=False, allow_infinity=False),
              st.text(alphabet=st.characters(max_codepoint=0xFFFF, exclude_categories=["Cs"]),
                      max_size=10)),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                  max_size=4),
    max_leaves=20)
# names an answer may give: its own files, a folder, links out, a fifo, paths out
NAMES = ["output_0.bin", "output_1.bin", "link.bin", "fifo.bin", "folder", "missing.bin", "",
         ".", "..", "../outside.txt", "/etc/hostname", "/dev/zero", "a/b", "output_0.bin\0x"]
entries = st.fixed_dictionaries(
    {}, optional={"file": st.sampled_from(NAMES) | st.text(max_size=12),
                  "dtype": st.sampled_from(["float32", "uint8", "bool", "int64", "qint8",
                                            "__class__", "float"]) | json_values,
                  "shape": st.lists(st.integers(-2, 2**40), max_size=3) | json_values,
                  "value": json_values})
manifests = st.fixed_dictionaries(
    {"status": st.sampled_from(["ok", "missing", "error", "done"]) | json_values},
    optional={"version": st.sampled_from([1, 2]) | json_values,
              "outputs": st.lists(entries, max_size=4) | json_values,
              "calls": st.lists(st.fixed_dictionaries({}, optional={
                  "outputs": st.lists(entries, max_size=3),
                  "timings": st.dictionaries(st.text(max_size=5), json_values, max_size=2)}),
                  max_size=3) | json_values,
              "timings": st.dictionaries(st.sampled_from(exchange.TIMINGS), json_values,
                                         max_size=3) | json_values,
              "cost": json_values, "error": json_values, "reason": json_values,
              "stage": json_values, "runtime": json_values})


@fuzz_settings(examples_per_second=30)
@given(manifest=manifests, raw=st.none() | st.binary(max_size=200),
       sizes=st.lists(st.integers(0, 64), min_size=2, max_size=2))
@counted
def test_fuzz_an_answer_is_read_or_refused_inside_its_folder(tmp_path_factory, manifest, raw,
                                                            sizes):
    """Any manifest (or any bytes in its place) beside real files, a link out, a fifo and
    a folder: read_manifest, read_values and read_calls return, or raise ExchangeError;
    every tensor they return is the bytes of a file inside the folder."""
    with Sandbox(tmp_path_factory.mktemp("answer")) as folder:
        for index, size in enumerate(sizes):
            (folder / f"output_{index}.bin").write_bytes(bytes(range(size)))
        (folder / "link.bin").symlink_to(folder.parent / "outside.txt")
        os.mkfifo(folder / "fifo.bin")
        (folder / "folder").mkdir()
        text = raw if raw is not None else json.dumps(manifest).encode()
        (folder / exchange.MANIFEST).write_bytes(text)
        try:
            read = exchange.read_manifest(str(folder))
            found = exchange.read_values(str(folder), read.get("outputs", []))
            if isinstance(read.get("calls"), list) and read["calls"]:
                found += [v for values, _ in exchange.read_calls(str(folder), read,
                                                                len(read["calls"]))
                          for v in values]
        except exchange.ExchangeError:
            return
        inside = {(folder / name).read_bytes() for name in ("output_0.bin", "output_1.bin")}
        for value in found:
            if isinstance(value, torch.Tensor) and value.numel():
                assert exchange.tensor_bytes(value) in inside


@st.composite
def archives(draw):
    """Tar archives of hostile members (links, devices, folders, sparse-looking types,
    paths out, big declared sizes), in any format, then maybe cut or flipped."""
    buffer = io.BytesIO()
    form = draw(st.sampled_from([tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT]))
    with tarfile.open(fileobj=buffer, mode="w", format=form) as archive:
        for _ in range(draw(st.integers(0, 4))):
            info = tarfile.TarInfo(draw(st.sampled_from(
                ["manifest.json", "output_0.bin", "../escaped", "/tmp/etsuite-fuzz-escaped",
                 "a/b", ".", "..", "x" * 120]) | st.text(min_size=1, max_size=10)))
            info.type = draw(st.sampled_from([tarfile.REGTYPE, tarfile.AREGTYPE,
                                              tarfile.SYMTYPE, tarfile.LNKTYPE,
                                              tarfile.CHRTYPE, tarfile.DIRTYPE,
                                              tarfile.FIFOTYPE, tarfile.CONTTYPE]))
            info.linkname = draw(st.sampled_from(["", "/etc/hostname", "../outside.txt"]))
            data = draw(st.binary(max_size=300))
            info.size = len(data)
            try:
                archive.addfile(info, io.BytesIO(data) if info.isreg() else None)
            except ValueError:  # a name the format cannot hold
                continue
    data = bytearray(buffer.getvalue())
    for _ in range(draw(st.integers(0, 3))):
        if data:
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
    cut = draw(st.none() | st.integers(0, len(data)))
    return bytes(data[:cut] if cut is not None else data)


@fuzz_settings(examples_per_second=100)
@given(data=archives() | st.binary(max_size=2048))
@counted
def test_fuzz_an_archive_writes_only_plain_files_inside_its_folder(tmp_path_factory, data):
    budget = 1000
    with Sandbox(tmp_path_factory.mktemp("archive")) as folder:
        try:
            names = agent.extract_flat(io.BytesIO(data), str(folder), budget)
        except agent.ArchiveError:
            names = None
        assert not os.path.exists("/tmp/etsuite-fuzz-escaped")
        written = os.listdir(folder)
        assert names is None or sorted(names) == sorted(written)
        for name in written:
            assert agent.plain_name(name)
            info = os.lstat(folder / name)
            assert info.st_mode & 0o170000 == 0o100000  # a regular file, nothing else
        assert sum(os.lstat(folder / n).st_size for n in written) <= budget


@fuzz_settings(examples_per_second=500)
@given(line=st.binary(max_size=80) | st.builds(
    lambda word, rest: word + rest, st.sampled_from([b"ready ", b"done "]),
    st.binary(max_size=40) | st.integers(-10, 2**64).map(lambda n: str(n).encode())))
@counted
def test_fuzz_the_relays_protocol_lines(line):
    """An agent's `ready {...}` and `done SIZE` lines: read, or refused as Broken."""
    try:
        assert isinstance(resident.ready_versions(line), list)
    except resident.Broken:
        pass
    try:
        assert 0 <= resident.done_size(line) <= agent.MAX_ARCHIVE_BYTES
    except resident.Broken:
        pass


# ---------------------------------------------------------------- the native readers

@pytest.fixture(scope="module")
def native_driver(tmp_path_factory) -> Path:
    """The native runner's readers with the driver, built with this host's C++ compiler."""
    compiler = shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")
    if compiler is None:
        pytest.skip("no C++ compiler here: the native readers' fuzzer needs one")
    binary = tmp_path_factory.mktemp("driver") / "driver"
    subprocess.run([compiler, "-std=c++17", "-O1", f"-I{NATIVE}", str(DRIVER),
                    str(NATIVE / "json.cpp"), str(NATIVE / "tar.cpp"), "-o", str(binary)],
                   check=True, capture_output=True)
    return binary


def run_driver(driver: Path, mode: str, data: bytes) -> subprocess.CompletedProcess:
    done = subprocess.run([str(driver), mode], input=data, capture_output=True,
                          timeout=HANG_SECONDS)
    assert done.returncode in (0, 1), (mode, done.returncode, done.stderr[-300:])
    return done


@fuzz_settings(examples_per_second=40)
@given(data=archives() | st.binary(max_size=2048))
@counted
def test_fuzz_the_native_tar_reader(native_driver, data):
    done = run_driver(native_driver, "tar", data)
    if done.returncode == 0:
        for name, size in json.loads(done.stdout.decode("utf-8", "replace") or "[]"):
            assert name not in ("", ".", "..") and "/" not in name and "\0" not in name
            assert 0 <= size <= len(data)


@fuzz_settings(examples_per_second=40)
@given(value=json_values, text=st.none() | st.binary(max_size=300) | st.integers(1, 300000).map(
    lambda depth: b"[" * depth + b"]" * depth))
@counted
def test_fuzz_the_native_json_reader(native_driver, value, text):
    """Python's JSON read back the same; any other text read or refused."""
    if text is not None:
        run_driver(native_driver, "json", text)
        return
    done = run_driver(native_driver, "json", json.dumps(value).encode())
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == value
