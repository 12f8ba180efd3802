"""Qwen3.5 / 3.6 (qwen35, qwen35moe) GGUFs as oomkit computes them from the catalog, held to llama.cpp.

oomkit's computed inventory of a catalog config (the real per-layer shapes, cut to 4 trunk layers, the MTP block kept)
is written as a GGUF with the `gguf` package (header only, the data a sparse hole; the Q4_K_M types oomkit's recipe
gives) and loaded by the llama.cpp that llama-cpp-python 0.3.36 wraps (ggml-org/llama.cpp@0c1e57098), on the CPU with
extra buffer types off. llama.cpp loads a file only when every tensor it asks for is there with its shape and no
other is left over ("wrong number of tensors"), so a load checks the tensor list: the delta net's ssm_beta and
ssm_alpha apart (src/models/qwen35.cpp load_block_trunk), the next-n block's nextn.eh_proj / enorm / hnorm /
shared_head_norm. Its CPU_Mapped model buffer must equal oomkit's:

- the newest build (b9999 and on, where PR #26296's TENSOR_SKIP is placed): the block stays out unless draft-mtp
  (llama_model_params.load_mtp) asks for it;
- b9849: the loaders take the block the file has (flags 0 at b9180-b10211), what load_mtp does today;
- b9026: the converter of that build wrote no block (PR #22673 brought it at b9180): the file without it.

"offloaded N/N layers" is llama.cpp's n_layer_all + 1 (llama_model::load_tensors: max_backend_supported_layers), so
the block counts: 6/6 with it, 5/5 without. A CPU-only load prints no offload line; its print_info n_layer_all (the
file's block_count) is the figure read.

oomkit names the post-attention norm ffn_norm where llama.cpp's loader asks for post_attention_norm (the same
{n_embd} F32 tensor); the file is written with llama.cpp's name.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import gguf
import numpy as np
import pytest

import oomkit
from oomkit.engines.llamacpp.weights import without_nextn
from oomkit.model.catalog import lookup
from oomkit.model.hf_config import spec_from_config, text_config
from oomkit.model.spec import ModelSpec
from tests.groundtruth import llamacpp_run, synth

MiB = 1 << 20
N_TRUNK = 4
VT = gguf.GGUFValueType

pytestmark = pytest.mark.skipif(not llamacpp_run.available(), reason="llama-cpp-python is not installed")


def catalog_spec(name: str, quant: str = "Q4_K_M") -> ModelSpec:
    """The catalog model's config cut to N_TRUNK layers (the MTP block kept), as oomkit computes it."""
    cfg = copy.deepcopy(lookup(name).config)
    tc = text_config(cfg)
    tc["num_hidden_layers"] = N_TRUNK
    if "layer_types" in tc:
        tc["layer_types"] = tc["layer_types"][:N_TRUNK]
    return spec_from_config(tc, name=f"{name}-{N_TRUNK}L", weight_format=quant)


def _metadata(spec: ModelSpec, tc: dict) -> list[tuple[str, object, object]]:
    """The keys src/models/qwen35.cpp / qwen35moe.cpp read, from the same config."""
    arch = spec.architecture
    md = synth._Meta(arch).base(
        ctx=tc["max_position_embeddings"], n_embd=tc["hidden_size"], n_layers=spec.n_layers,
        n_ff=tc.get("intermediate_size", tc.get("moe_intermediate_size")), n_head=tc["num_attention_heads"],
        n_head_kv=tc["num_key_value_heads"], rms_eps=tc.get("rms_norm_eps", 1e-6), rope_base=10000000.0,
        n_vocab=tc["vocab_size"])
    synth._qwen35_meta(md, tc["head_dim"], tc["linear_conv_kernel_dim"], tc["linear_num_key_heads"],
                       tc["linear_num_value_heads"], tc["linear_key_head_dim"], tc["linear_value_head_dim"],
                       tc["full_attention_interval"])
    if arch == "qwen35moe":
        md.u32("expert_count", tc["num_experts"]).u32("expert_used_count", tc["num_experts_per_tok"])
        md.u32("expert_feed_forward_length", tc["moe_intermediate_size"])
        md.u32("expert_shared_feed_forward_length", tc["shared_expert_intermediate_size"])
    if spec.n_nextn_layers:
        md.u32("nextn_predict_layers", spec.n_nextn_layers)
    return md.items


def write_spec_gguf(spec: ModelSpec, tc: dict, path: Path) -> Path:
    """oomkit's tensors (names, shapes, types) as a GGUF: the trunk in oomkit's order, the next-n block last (the
    converter appends the mtp.* tensors after the model's own)."""
    w = gguf.GGUFWriter(path, spec.architecture)
    w.add_name(spec.name)
    w.add_file_type(int(gguf.LlamaFileType.MOSTLY_Q4_K_M))
    w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    synth.add_metadata(w, _metadata(spec, tc), spec.n_vocab)
    first_nextn = spec.n_trunk_layers
    ordered = sorted(spec.weights.tensors, key=lambda t: t.layer is not None and t.layer >= first_nextn)
    sizes = []
    for t in ordered:
        name = t.name.replace(".ffn_norm.", ".post_attention_norm.")
        qtype = gguf.GGMLQuantizationType[t.dtype.upper()]
        sizes.append(t.nbytes)
        w.add_tensor_info(name, tuple(reversed(t.shape)), np.dtype(np.float32), t.nbytes, raw_dtype=qtype)
    synth.finish_sparse(w, sizes)
    return path


_LOAD = llamacpp_run.binding_script("", {"load_mtp": "load_mtp"})


def llama_cpp_load(path: Path, load_mtp: bool) -> tuple[float, str, list[str]]:
    """llama.cpp's CPU_Mapped model buffer (MiB as printed), its "offloaded" total (n_layer_all + 1) and the tensors
    it left unused."""
    log = llamacpp_run.run_binding_script(_LOAD, path, [], load_mtp)
    m = re.search(r"CPU_Mapped model buffer size\s*=\s*([0-9.]+) MiB", log)
    n = re.search(r"n_layer_all\s*=\s*(\d+)", log)
    assert m and n, log[-3000:]
    total = int(n.group(1)) + 1
    return float(m.group(1)), f"{total}/{total}", re.findall(r"unused tensor (\S+)", log)


def oomkit_load(spec: ModelSpec, version: str) -> tuple[float, str]:
    e = oomkit.estimate(spec, "llama.cpp", devices=(), find_max_context=False, fit=False, n_ctx=4096,
                        n_parallel=1, repack=False, engine_version=version)
    v = e.engine_view
    return round(v["model_buffer_bytes"]["CPU_Mapped"] / MiB, 2), v["offloaded_layers"]


MODELS = ("qwen3.6-27b", "qwen3.5-35b-a3b")


@pytest.fixture(scope="module", params=MODELS)
def files(request, tmp_path_factory):
    spec = catalog_spec(request.param)
    tc = text_config(copy.deepcopy(lookup(request.param).config))
    d = tmp_path_factory.mktemp(request.param)
    with_block = write_spec_gguf(spec, tc, d / "with-nextn.gguf")
    without = write_spec_gguf(without_nextn(spec), tc, d / "without-nextn.gguf")
    yield request.param, spec, with_block, without
    for p in (with_block, without):
        p.unlink(missing_ok=True)


def test_inventory_is_the_tensor_list_llama_cpp_loads(files):
    """The file of oomkit's tensors loads (every tensor asked for is there with its shape, none left over): the
    delta net's beta and alpha apart, the next-n block's own tensors; without load_mtp the block's tensors, and only
    they, are the unused ones."""
    name, spec, with_block, _ = files
    assert llama_cpp_load(with_block, True)[2] == [], name
    unused = llama_cpp_load(with_block, False)[2]
    assert sorted(unused) == sorted(t.name.replace(".ffn_norm.", ".post_attention_norm.") for t in spec.weights.tensors
                                    if t.layer == N_TRUNK), name
    names = {t.name.split(".", 2)[-1] for t in spec.weights.tensors if t.layer == 0}
    assert {"ssm_beta.weight", "ssm_alpha.weight"} <= names and "ssm_ba.weight" not in names
    nextn = {t.name.split(".", 2)[-1] for t in spec.weights.tensors if t.layer == N_TRUNK}
    assert {"nextn.eh_proj.weight", "nextn.enorm.weight", "nextn.hnorm.weight",
            "nextn.shared_head_norm.weight"} <= nextn


@pytest.mark.parametrize(("version", "load_mtp", "block"), [
    ("b9999", False, True),  # newest: the file has the block, the loader skips it
    ("b9849", True, True),  # b9180-b10211: the loader takes the block (what load_mtp does today)
    ("b9026", False, False),  # before b9180: the converter wrote no block
])
def test_model_buffer_and_offloaded_layers_follow_the_build(files, version, load_mtp, block):
    name, spec, with_block, without = files
    got = oomkit_load(spec, version)
    want = llama_cpp_load(with_block if block else without, load_mtp)
    assert (got[0], got[1].split("/")[1]) == (want[0], want[1].split("/")[1]), (name, version, got, want)
    assert want[1] == f"{N_TRUNK + 1 + block}/{N_TRUNK + 1 + block}"


def test_draft_mtp_loads_the_block_at_the_newest_build(files):
    name, spec, with_block, _ = files
    e = oomkit.estimate(spec, "llama.cpp", devices=(), find_max_context=False, fit=False, n_ctx=4096, n_parallel=1,
                        repack=False, spec_type=("draft-mtp",))
    got = round(e.engine_view["model_buffer_bytes"]["CPU_Mapped"] / MiB, 2)
    assert got == llama_cpp_load(with_block, True)[0], name


# ---------------------------------------------------------------------------------------------------------
# llama-quantize's attn_qkv rule by build (gguf_recipes.QKV_AS_V_BUILD, PR #19770 at b8266): every gated-delta-net
# layer of Qwen3.5 / 3.6 has an attn_qkv. A Phi-3-mini-shaped F16 file (4 layers, fused attn_qkv) quantized to
# Q4_K_M by the binding's llama.cpp (b10587-era, @0c1e57098) and by llama-cpp-python 0.3.9's vendored llama.cpp
# (8733e0c, 2025-05-08, b5308) if that build is on this machine: measured, attn_qkv q4_K q4_K q6_K q6_K (the attn_v
# rule, use_more_bits over 4 producers) with the new build, q5_K in every layer with the old one; every other
# tensor alike. oomkit's recipe at each build must give each file's types, tensor for tensor.

OLD_LLAMA = Path("/tmp/oldllama/llama_cpp_python-0.3.9")
_QUANTIZE = """
import ctypes, sys, llama_cpp
p = llama_cpp.llama_model_quantize_default_params()
p.ftype, p.nthread = 15, 2  # LLAMA_FTYPE_MOSTLY_Q4_K_M
sys.exit(llama_cpp.llama_model_quantize(sys.argv[1].encode(), sys.argv[2].encode(), ctypes.byref(p)))
"""


def _quantized_types(src: Path, out: Path, env: dict) -> dict[str, str]:
    import subprocess  # lazy: only this test runs llama-quantize
    import sys

    r = subprocess.run([sys.executable, "-c", _QUANTIZE, str(src), str(out)], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    types = {t.name: gguf.GGMLQuantizationType(t.tensor_type).name for t in gguf.GGUFReader(out).tensors}
    out.unlink()
    return {n: t.lower().replace("_k", "_K") for n, t in types.items()}


@pytest.mark.parametrize(("build", "lib"), [(None, None), (5308, OLD_LLAMA)])
def test_attn_qkv_rule_follows_the_quantize_build(tmp_path, build, lib):
    import os  # lazy: the environment of the old build's run

    from oomkit.quant.gguf_recipes import recipe_types
    from tests import ggufs

    if lib is not None and not (lib / "vendor/llama.cpp/build/bin/libllama.so").exists():
        pytest.skip("llama-cpp-python 0.3.9's llama.cpp build is not on this machine")
    src = synth.write_gguf(ggufs.phi3_mini_4k(4), tmp_path / "phi3-f16.gguf", "f16")
    env = dict(os.environ)
    if lib is not None:
        env.update(LLAMA_CPP_LIB_PATH=str(lib / "vendor/llama.cpp/build/bin"), PYTHONPATH=str(lib))
    got = _quantized_types(src, tmp_path / "phi3-q4km.gguf", env)
    tensors = [(t.name, tuple(int(x) for x in t.shape)) for t in gguf.GGUFReader(src).tensors]
    src.unlink()
    assert recipe_types("Q4_K_M", tensors, "phi3", n_gqa=1, build=build) == got
    qkv = [got[f"blk.{i}.attn_qkv.weight"] for i in range(4)]
    assert qkv == (["q5_K"] * 4 if build else ["q4_K", "q4_K", "q6_K", "q6_K"])


def test_catalog_qwen36_before_the_qkv_rule_change():
    """A catalog Qwen3.6-27B Q4_K_M at a build before b8266 (qwen35 from b7990): the 48 delta-net attn_qkv at q5_K,
    attn_v's use_more_bits over 64 producers reached by the 16 attn_v alone (10 q6_K: i < 8, i = 10, 13), no next-n
    block; from b8266 the 64 producers share the rule (32 q6_K)."""
    from collections import Counter

    from oomkit.engines.llamacpp import LlamaCppSettings
    from oomkit.engines.llamacpp.weights import converted_file
    from oomkit.model.resolve import resolve

    def kinds(version: str) -> tuple[int, Counter, Counter]:
        sp = converted_file(resolve("qwen3.6-27b", "Q4_K_M"), LlamaCppSettings(engine_version=version))
        return (sp.n_layers, Counter(t.dtype for t in sp.weights.tensors if ".attn_qkv." in t.name),
                Counter(t.dtype for t in sp.weights.tensors if ".attn_v." in t.name))

    assert kinds("b8000") == (64, Counter(q5_K=48), Counter(q6_K=10, q4_K=6))
    assert kinds("b8266") == (64, Counter(q6_K=24, q4_K=24), Counter(q6_K=8, q4_K=8))


def test_iq4_xs_attn_qkv_cost_matches_the_published_figure():
    """cHunter789/Qwen3.6-27B-i1-IQ4_XS-GGUF's model card (stored copy: https://llmsreview.com/models/
    chunter789--qwen3.6-27b-i1-iq4_xs-gguf): "commit 1dab5f5a44 introduced a hardcoded minimum quantization of q5_K
    for attn_qkv layers" and, reverting it, "users save 375 MiB of active memory". oomkit's Qwen3.6-27B IQ4_XS at a
    build before b8266 and at b8266: the 48 attn_qkv at iq4_xs, then q5_K (IQ4_XS with n_gqa 6 >= 4: attn_v's
    rule), 375 MiB apart."""
    from oomkit.engines.llamacpp import LlamaCppSettings
    from oomkit.engines.llamacpp.weights import converted_file
    from oomkit.model.resolve import resolve

    def mib(version: str) -> float:
        sp = converted_file(resolve("qwen3.6-27b", "IQ4_XS"), LlamaCppSettings(engine_version=version))
        return sp.weights.nbytes / MiB

    assert round(mib("b8266") - mib("b8265")) == 375
