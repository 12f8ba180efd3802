"""A GGUF repo's owner reaches the weights: unsloth's plain-named Q4_K_M of Qwen3.6-27B is no llama-quantize Q4_K_M
(quant/gguf_recipes.PUBLISHED_RECIPES), and every way a user names that file (llama.cpp's -hf / -hfr / --hf-repo
REPO:QUANT and --hf-file, Ollama's hf.co/ names, a hub URL, a REPO:QUANT model argument, the web API and the
command line) gives the file's real types and model buffers, quoted in tests/fixtures/gguf_mixes/published_files.json
(qwen3.6-27b-q4_k_m-unsloth-hilbertraum); another owner's repo, or the model's own repo, keeps llama-quantize's
Q4_K_M, 257 MiB short of unsloth's file."""

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import oomkit
import oomkit.errors
from oomkit.engines.base import get_engine
from oomkit.engines.llamacpp.args import parse_args
from oomkit.engines.llamacpp.weights import without_nextn
from oomkit.memory import Device
from oomkit.model.resolve import gguf_publisher, resolve
from oomkit.quant.gguf_recipes import known_publisher
from oomkit.request import resolve_model

MiB = 1 << 20
FIXTURES = Path(__file__).parent / "fixtures"
PUBLISHED = {f["id"]: f for f in json.loads((FIXTURES / "gguf_mixes" / "published_files.json").read_text())["files"]}
FILE = PUBLISHED["qwen3.6-27b-q4_k_m-unsloth-hilbertraum"]  # unsloth/Qwen3.6-27B-GGUF Q4_K_M, b9849 Vulkan log
QUOTED = "\n".join(FILE["quoted"])
COUNTS = {t: int(n) for t, n in re.findall(r"- type +(\w+): +(\d+) tensors", QUOTED)}  # 449 f32 / 289 q4_K / ...
HOST_MIB = float(re.search(r"CPU_Mapped model buffer size = +([\d.]+) MiB", QUOTED).group(1))  # token_embd
DEVICE_MIB = float(re.search(r"Vulkan0 model buffer size = +([\d.]+) MiB", QUOTED).group(1))  # the rest
STANDIN_COUNTS = {"f32": 353, "q4_K": 433, "q6_K": 65}  # llama-quantize's Q4_K_M of the same tensor list
STANDIN_SHORT_MIB = 257.35  # the stand-in's device buffer against the file's (the held-out logs' known miss)

REPO = "unsloth/Qwen3.6-27B-GGUF"


def file_figures(spec):
    """(type counts, host MiB, device MiB) of the file the log loaded: no next-n block, token_embd on the host."""
    w = without_nextn(spec).weights
    emb = next(t.nbytes for t in w.tensors if t.name == "token_embd.weight")
    return dict(Counter(t.dtype for t in w.tensors)), round(emb / MiB, 2), round((w.nbytes - emb) / MiB, 2)


def assert_unsloths_file(spec):
    assert file_figures(spec) == (COUNTS, HOST_MIB, DEVICE_MIB)
    assert spec.weights.publisher == "unsloth" and spec.weights.format == "Q4_K_M"
    assert any(label.startswith("Q4_K_M by unsloth follows the publisher's real files") for label in spec.labels)


def assert_stand_in(spec):
    counts, host, device = file_figures(spec)
    assert counts == STANDIN_COUNTS and host == HOST_MIB
    assert round(DEVICE_MIB - device, 2) == STANDIN_SHORT_MIB
    # a repo's owner is kept (any GGUF repo's file is llama-quantize's, not Ollama's library quantizer's), but only
    # a publisher quant/gguf_recipes knows types the file by its recipes
    assert known_publisher(spec.weights.publisher) is None
    assert not any("follows the publisher" in label for label in spec.labels)


def llamacpp_spec(argv):
    model, quant, _ = parse_args(argv)
    return resolve_model(get_engine("llama.cpp"), model, quant)


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the catalog answers; no hub lookups


@pytest.mark.parametrize("ref, quant", [
    (f"{REPO}:Q4_K_M", None),  # llama.cpp's -hf syntax as a model argument
    (REPO, "Q4_K_M"),  # the repo with --quant
    (f"{REPO}:q4_k_m", None),
    ("UNSLOTH/qwen3.6-27b-gguf:Q4_K_M", None),  # the hub's names are case-insensitive
    (f"hf.co/{REPO}:Q4_K_M", None),  # Ollama's name for a hub GGUF
    (f"https://huggingface.co/{REPO}/blob/main/Qwen3.6-27B-Q4_K_M.gguf", None),  # the file's page, pasted
])
def test_unsloths_repo_name_gives_its_file(ref, quant):
    assert_unsloths_file(resolve(ref, quant))


@pytest.mark.parametrize("argv", [
    ["-hf", f"{REPO}:Q4_K_M"],
    ["-hfr", f"{REPO}:Q4_K_M"],
    ["--hf-repo", f"{REPO}:Q4_K_M"],
    ["-hf", REPO, "--hf-file", "Qwen3.6-27B-Q4_K_M.gguf"],
    ["-hfr", REPO, "-hff", "Qwen3.6-27B-Q4_K_M.gguf"],
])
def test_llamacpp_hf_flags_give_unsloths_file(argv):
    assert_unsloths_file(llamacpp_spec(argv))


def test_ollama_hf_co_name_gives_unsloths_file():
    eng = get_engine("ollama")
    assert_unsloths_file(resolve_model(eng, f"hf.co/{REPO}:Q4_K_M"))
    assert_unsloths_file(resolve_model(eng, f"hf.co/{REPO}", "Q4_K_M"))
    # no tag: "By default, the Q4_K_M quantization scheme is used" (huggingface.co/docs/hub/ollama), as oomkit assumes
    tagless = resolve_model(eng, f"hf.co/{REPO}")
    assert_unsloths_file(tagless)
    assert any(label.startswith("no quant given: assuming Q4_K_M") for label in tagless.labels)


@pytest.mark.parametrize("ref", [
    "mradermacher/Qwen3.6-27B-GGUF:Q4_K_M",  # a publisher oomkit has no recipe of
    "hf.co/mradermacher/Qwen3.6-27B-GGUF:Q4_K_M",
    "Qwen/Qwen3.6-27B:Q4_K_M",  # the model's own repo: the file type's own rules
    "qwen3.6-27b:Q4_K_M",
])
def test_other_names_keep_the_stand_in(ref):
    assert_stand_in(resolve(ref))


def test_other_owner_on_the_llamacpp_flags_keeps_the_stand_in():
    assert_stand_in(llamacpp_spec(["-hf", "mradermacher/Qwen3.6-27B-GGUF:Q4_K_M"]))
    assert_stand_in(llamacpp_spec(["-hf", "mradermacher/Qwen3.6-27B-GGUF", "--hf-file",
                                   "Qwen3.6-27B-Q4_K_M.gguf"]))


@pytest.mark.parametrize("name, publisher", [
    (REPO, "unsloth"), ("Unsloth/Qwen3.6-27B-GGUF", "unsloth"), (f"hf.co/{REPO}", "unsloth"),
    ("unsloth/Qwen3-8B-GGUF", "unsloth"),  # a known publisher: its recipes apply where one fits the model's shape
    ("mradermacher/Qwen3.6-27B-GGUF", None), ("unsloth/Qwen3.6-27B", None), ("Qwen/Qwen3.6-27B", None),
    ("qwen3.6-27b", None), ("qwen3:8b", None),
])
def test_gguf_publisher(name, publisher):
    assert gguf_publisher(name) == publisher


def test_a_shape_without_a_recipe_keeps_the_file_types_own_rules():
    """unsloth's plain Q4_K_M of a model no recipe covers is read as llama-quantize's Q4_K_M, unlabelled."""
    plain, named = resolve("Qwen/Qwen3-8B:Q4_K_M"), resolve("unsloth/Qwen3-8B-GGUF:Q4_K_M")
    assert [t.dtype for t in named.weights.tensors] == [t.dtype for t in plain.weights.tensors]
    assert not any("follows the publisher" in label for label in named.labels)


def test_engine_buffers_of_a_second_log_of_the_file():
    """A CUDA b9026 run of the same download (the held-out qwen3.6-27b-q4km-rtx3090-262144-q4kv-b9026: "-m
    ~/Downloads/Qwen3.6-27B-Q4_K_M.gguf" from unsloth/Qwen3.6-27B-GGUF), given to oomkit as llama.cpp would fetch it
    (-hf REPO:Q4_K_M): the memory breakdown's model column, 15345 MiB on CUDA0 and 682 on the host, where the
    catalog name alone gives llama-quantize's 15088."""
    fx = json.loads((FIXTURES / "engine_logs" / "llamacpp_heldout" /
                     "qwen3.6-27b-q4km-rtx3090-262144-q4kv-b9026.json").read_text())
    assert "unsloth/Qwen3.6-27B-GGUF" in fx["model"]
    devices = (Device(id="CUDA0", name="RTX 3090", memory_bytes=fx["total_mib"][0] * MiB,
                      free_bytes=fx["free_mib"][0] * MiB),)

    def model_column(argv):
        model, quant, settings = parse_args([*fx["argv"], *argv])
        est = oomkit.estimate(model, "llama.cpp", quant=quant, devices=devices, settings=settings,
                              find_max_context=False, engine_version=fx["engine_version"])
        by_name = est.engine_view["model_buffer_bytes"]
        return by_name["CUDA0"] // MiB, sum(b for n, b in by_name.items() if n != "CUDA0") // MiB

    printed = fx["printed"]["breakdown"]
    assert model_column(["-hf", f"{REPO}:Q4_K_M"]) == (printed["CUDA0"]["model"], printed["Host"]["model"])
    assert model_column(["-hf", "mradermacher/Qwen3.6-27B-GGUF:Q4_K_M"]) == (15088, printed["Host"]["model"])


def test_web_api_names_the_publishers_recipe():
    from oomkit.web import api

    d = api.estimate({"model": f"{REPO}:Q4_K_M", "engine": "llama.cpp", "ctx": 8192, "vram": "24GiB"}).data()
    other = api.estimate({"model": "Qwen/Qwen3.6-27B", "quant": "Q4_K_M", "engine": "llama.cpp", "ctx": 8192,
                          "vram": "24GiB"}).data()
    # the newest build skips the next-n block (llamacpp/weights.NEXTN_ERAS): the model buffers are the file's
    mib = {n: round(b / MiB, 2) for n, b in d["engine_view"]["model_buffer_bytes"].items()}
    assert mib == {"CUDA0": DEVICE_MIB, "CPU_Mapped": HOST_MIB}
    stand_in = other["engine_view"]["model_buffer_bytes"]
    assert round(stand_in["CPU_Mapped"] / MiB, 2) == HOST_MIB
    assert abs(DEVICE_MIB - stand_in["CUDA0"] / MiB - STANDIN_SHORT_MIB) < 0.02  # two roundings
    assert any(w.startswith("Q4_K_M by unsloth follows") for w in d["warnings"])
    assert not any("follows the publisher" in w for w in other["warnings"])
    fit = api.fit_command({"command": f"llama-server -hf {REPO}:Q4_K_M -c 8192", "vram": "24GiB"}).data()
    assert "by unsloth follows" in json.dumps(fit)


def test_command_line_check():
    env = {**__import__("os").environ, "HF_HUB_OFFLINE": "1"}
    r = subprocess.run([sys.executable, "-m", "oomkit", "check", "--vram", "24GiB", "--json", "--",
                        "llama-server", "-hf", f"{REPO}:Q4_K_M", "-c", "8192"], capture_output=True, text=True, env=env)
    assert r.returncode in (0, 1), r.stderr
    assert "Q4_K_M by unsloth follows the publisher's real files" in r.stdout


# where llama.cpp's -hf download of the file lies (common/hf-cache.cpp: the hub cache's models--{owner}--{name})
CACHED = f"/root/.cache/huggingface/hub/models--unsloth--Qwen3.6-27B-GGUF/snapshots/{'0' * 40}/Qwen3.6-27B-Q4_K_M.gguf"


def test_a_hub_cache_path_not_on_this_machine_is_read_as_its_repo():
    """A command pasted from the machine that downloaded the file (-m <its path in the hub cache>): the repo and the
    file type its path says, labelled; a path that says no repo stays an error naming what its name says."""
    spec = llamacpp_spec(["-m", CACHED])
    assert_unsloths_file(spec)
    assert any(label.startswith(f"{CACHED} is not on this machine: read as {REPO}:Q4_K_M") for label in spec.labels)
    assert_stand_in(resolve(CACHED.replace("unsloth--Qwen3.6-27B-GGUF", "mradermacher--Qwen3.6-27B-GGUF")))
    with pytest.raises(oomkit.errors.ModelError, match="cannot be read as Q8_0"):
        resolve(CACHED, "Q8_0")
    with pytest.raises(oomkit.errors.ModelError, match=r"its name says Qwen/Qwen3.6-27B:Q4_K_M"):
        resolve("/models/Qwen3.6-27B-Q4_K_M.gguf")


def test_diagnose_reads_the_publisher_from_the_model_path():
    """A llama.cpp log of the file (its figures as the cited logs print them: model buffers 15345.66 + 682.03 MiB)
    loaded from the hub cache: oomkit's prediction beside it is the file's; loaded from a path that names no repo,
    the stand-in's 257 MiB short."""
    from oomkit.diagnose import diagnose

    def predicted(path):
        log = "\n".join([
            "build: 9026 (abcdef12) with cc for x86_64-linux-gnu",
            "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 3090) - 23257 MiB free",
            f"llama_model_loader: loaded meta data with 50 key-value pairs and 851 tensors from {path} (version GGUF "
            "V3 (latest))",
            "print_info: file type   = Q4_K - Medium",
            "load_tensors: offloaded 65/65 layers to GPU",
            f"load_tensors:        CUDA0 model buffer size = {DEVICE_MIB:8.2f} MiB",
            f"load_tensors:   CPU_Mapped model buffer size = {HOST_MIB:8.2f} MiB",
            "llama_context: n_ctx         = 262144",
            "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 16384.00 MiB on device 0: cudaMalloc failed: out "
            "of memory",
            "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache",
        ])
        figures = diagnose(log).prediction["figures"]
        return {k: round(v["oomkit"] / MiB, 2) for k, v in figures.items() if k.startswith("model_buffer_bytes")}

    assert predicted(CACHED) == {"model_buffer_bytes[CUDA0]": DEVICE_MIB, "model_buffer_bytes[CPU_Mapped]": HOST_MIB}
    plain = predicted("/models/Qwen3.6-27B-Q4_K_M.gguf")
    assert abs(DEVICE_MIB - plain["model_buffer_bytes[CUDA0]"] - STANDIN_SHORT_MIB) < 0.02


def test_explain_names_the_publisher():
    from oomkit.model.resolve import explain

    rows = explain(f"{REPO}:Q4_K_M")
    assert dict(rows)["GGUF publisher"].startswith("unsloth: ")
    assert any(v.startswith("Q4_K_M by unsloth follows the publisher's real files") for k, v in rows if k == "label")
    assert "GGUF publisher" not in dict(explain("mradermacher/Qwen3.6-27B-GGUF:Q4_K_M"))


def test_bartowskis_plain_types_are_imatrix_quants():
    """bartowski's files are imatrix quants (his model cards: "All quants made using imatrix option"), so
    llama_tensor_get_type_impl's has_imatrix branches apply: an IQ4_XS keeps the first n_layer/8 ffn_down in IQ4_XS
    (made without an imatrix they are Q5_K); a Q4_K_M has no imatrix branch and is the same file either way."""
    from oomkit.model.resolve import resolve

    def types(ref):
        return {t.name: t.dtype for t in resolve(ref).weights.tensors}

    bart, plain = types("bartowski/Qwen_Qwen3-8B-GGUF:IQ4_XS"), types("Qwen/Qwen3-8B:IQ4_XS")
    first = [f"blk.{i}.ffn_down.weight" for i in range(36 // 8)]  # Qwen3-8B: 36 layers
    assert [bart[n] for n in first] == ["iq4_xs"] * 4 and [plain[n] for n in first] == ["q5_K"] * 4
    assert {n: t for n, t in bart.items() if n not in first} == {n: t for n, t in plain.items() if n not in first}
    assert types("bartowski/Qwen_Qwen3-8B-GGUF:Q4_K_M") == types("Qwen/Qwen3-8B:Q4_K_M")
