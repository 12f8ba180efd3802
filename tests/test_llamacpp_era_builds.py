"""llama.cpp's era switches at their exact builds: each PR's merge commit counted on master.

A build number bNNNN is `git rev-list --count <commit>` on ggml-org/llama.cpp's master (issue #23527 prints
"version: 9272 (1d7ab2b94)", and 1d7ab2b94 is master's 9272nd commit; likewise 255582687 = b9180, 15586e2d7 =
b10298). MERGES below was read from master's history (the ngxson/llama.cpp fork's copy, to b10587): for each PR the
commit whose subject ends "(#N)", its committer date and its count. Every switch is held on both sides of that build
(bN-1 follows the old rule, bN the new one), and a date reads as the build of the merge commit made that day.
"""

import json
from dataclasses import replace
from pathlib import Path

import pytest

import oomkit
from oomkit.engines.llamacpp import backends, compute, fit, kv, mtp, repack, split
from oomkit.engines.llamacpp.args import format_command, parse_args, rewrite_command
from oomkit.engines.llamacpp.projector import clip_flash_attn
from oomkit.engines.llamacpp.settings import ERAS, LlamaCppSettings, build_number
from oomkit.errors import OomkitError
from oomkit.model.resolve import resolve

MiB = 1 << 20

# era -> (PR, merge commit, commit date, its count on master = the first build with it)
MERGES = {
    "mla_latent": (12801, "daa422881", "2025-04-15", 5137),  # llama : DeepSeek V2/V3 MLA implementation
    "encoder_no_kv": (13108, "6562e5a4d", "2025-05-08", 5312),  # context : allow cache-less context for embeddings
    "iswa": (13194, "e298d2fbd", "2025-05-20", 5429),  # kv-cache : add SWA support
    "phi3_swa_off": (13676, "b44890df2", "2025-05-21", 5440),  # model : disable SWA for Phi models
    "kv_streams": (14363, "225e7a143", "2025-07-16", 5913),  # llama : add high-throughput mode
    "fa_auto": (15434, "e81b8e4b7", "2025-08-30", 6325),  # llama: use FA + max. GPU layers by default
    "np_auto": (16736, "cd5e3b575", "2025-11-02", 6925),  # server : support unified cache across slots
    "np_auto_no_draft": (17017, "13b339bcd", "2025-11-05", 6958),  # server : do not default to multiple slots ...
    "np_auto_asked": (17997, "7b1db3d3b", "2025-12-16", 7433),  # arg: clarify auto kvu/np being set on server
    "pad_256_always": (17046, "16bcc1259", "2025-11-07", 6975),  # kv-cache : pad the cache size to 256
    "params_fit": (16653, "b1f3a6e5d", "2025-12-15", 7407),  # llama: automatically set parameters ...
    "ngl_output_first": (18148, "57c1e0564", "2025-12-18", 7467),  # llama: offload output layer to GPU first
    "mla_k_only": (19067, "d9c6ce46f", "2026-01-25", 7832),  # kv-cache : support V-less cache
    "no_ctx_size_draft": (22838, "68e7ea3ea", "2026-05-11", 9109),  # spec : parallel drafting support
    "spec_mtp": (22673, "255582687", "2026-05-16", 9180),  # llama + spec: MTP Support
    "spec_mtp_cleanup": (23269, "d14ce3dab", "2026-05-19", 9235),  # llama : MTP clean-up
    "kq_mask_f16": (23764, "031ddb2e0", "2026-05-29", 9410),  # llama: use f16 mask for FA to save VRAM
    "outputs_max": (23861, "de6f727aa", "2026-06-01", 9460),  # llama: limit max outputs of `llama_context`
}
# eras whose merge day is a date anchor (versions.LLAMACPP_BUILD_DATES)
DATED = ("mla_latent", "encoder_no_kv", "iswa", "phi3_swa_off", "fa_auto", "np_auto", "np_auto_no_draft",
         "np_auto_asked", "pad_256_always", "params_fit",
         "ngl_output_first", "mla_k_only", "kq_mask_f16", "outputs_max")


def _est(version, model="Qwen/Qwen3-8B", **kw):
    opts = dict(quant="Q4_K_M", vram="24GiB", find_max_context=False, n_ctx=8192, fit=False)
    opts.update(kw)
    return oomkit.estimate(model, "llama.cpp", engine_version=version, **opts)


def _view(version, model="Qwen/Qwen3-8B", **kw):
    return _est(version, model, **kw).engine_view


def _b(n: int) -> str:
    return f"b{n}"


@pytest.mark.parametrize("era", sorted(MERGES))
def test_era_is_its_merge_commits_build(era):
    assert ERAS[era] == MERGES[era][3]


# the engine's other build switches, each at its PR's merge commit: (PR, commit, date, build)
OTHER = {
    ("fit", "mmproj_margin"): (21489, "e2b129e1b", "2026-05-20", 9251),  # mtmd: fit_params ... mmproj
    ("fit", "host_fit"): (21568, "fd1c0ec3f", "2026-04-18", 8834),  # llama: fit ctx size for CPU only
    ("fit", "draft_margin"): (23485, "83eebe9d0", "2026-05-24", 9304),  # server: add margin for draft model
    ("mtp", "step35_nextn_kv"): (24125, "0dbfa66a1", "2026-06-04", 9512),  # step35 MTP KV of the next-n layers
    ("compute", "PIPELINE_PARALLEL_BUILD"): (6017, "f30ea47a8", "2024-03-13", 2413),
    ("backends", "METAL_DEVICE_RENAME"): (18919, "6fdddb498", "2026-02-02", 7909),  # metal : support virtual devices
    ("backends", "HTP_SCALE_BUILD"): (18611, "95ea9e086", "2026-01-06", 7652),
    ("backends", "HTP_SWIGLU_OAI_BUILD"): (18114, "0a0bba05e", "2025-12-17", 7464),
    ("backends", "GET_ROWS_CUDA"): (25962, "c5a4a0bb8", "2026-07-22", 10089),  # cuda: GET_ROWS quants
    ("backends", "GET_ROWS_VULKAN"): (16235, "3f81b4e91", "2025-09-27", 6604),  # vulkan: GET_ROWS for k-quants
    ("fit", "fit_in_common"): (22171, "cfe9838d2", "2026-04-21", 8865),  # fit-params : refactor (common/fit.cpp)
    ("compute", "SWIGLU_OP_BUILD"): (14158, "a0535ffa0", "2025-06-29", 5776),  # ggml : REGLU/GEGLU/SWIGLU ops
    ("split", "RPC_DEVICE_INDEX_BUILD"): (16276, "898acba68", "2025-10-04", 6688),  # rpc : multiple devices
    ("backends", "REPACK_NAME_BUILD"): (13892, "f470bc36b", "2025-06-09", 5615),  # ggml-cpu : split arch-specific
    ("repack", "avx2 q4_K"): (12332, "3d82dbcbc", "2025-03-20", 4929),
    ("repack", "neon q4_K"): (16739, "dbb852b54", "2025-11-24", 7142),  # i8mm; dotprod #17494 at b7175
    ("repack", "neon q8_0"): (18096, "669696e00", "2025-12-17", 7451),
    ("repack", "neon q5_K"): (18860, "091a46cb8", "2026-01-23", 7815),  # i8mm; dotprod #19356 at b8134
    ("repack", "neon q6_K"): (18888, "be8890e72", "2026-01-27", 7845),  # i8mm; dotprod #19360 at b7988
    ("repack", "avx2 mxfp4"): (19738, "d903f30e2", "2026-02-27", 8175),  # ggml-cpu: add repack for mxfp4
}


@pytest.mark.parametrize("where,name", sorted(OTHER))
def test_other_switches_at_their_merge_commits_build(where, name):
    got = {("fit", n): fit.FIT_ERAS[n] for n in ("mmproj_margin", "host_fit", "draft_margin", "fit_in_common")}
    got |= {("repack", f"{isa} {kind}"): b for (isa, kind), b in repack.REPACK_SINCE.items()}
    got[("backends", "REPACK_NAME_BUILD")] = repack.REPACK_NAME_BUILD
    got |= {("mtp", "step35_nextn_kv"): mtp.MTP_ERAS["step35_nextn_kv"],
            ("compute", "PIPELINE_PARALLEL_BUILD"): compute.PIPELINE_PARALLEL_BUILD,
            ("compute", "SWIGLU_OP_BUILD"): compute.SWIGLU_OP_BUILD,
            ("split", "RPC_DEVICE_INDEX_BUILD"): split.RPC_DEVICE_INDEX_BUILD,
            ("backends", "METAL_DEVICE_RENAME"): backends.METAL_DEVICE_RENAME,
            ("backends", "HTP_SCALE_BUILD"): backends.HTP_SCALE_BUILD,
            ("backends", "HTP_SWIGLU_OAI_BUILD"): backends.HTP_SWIGLU_OAI_BUILD,
            ("backends", "GET_ROWS_CUDA"): backends.GET_ROWS_ALL_SINCE["cuda"],
            ("backends", "GET_ROWS_VULKAN"): backends.GET_ROWS_ALL_SINCE["vulkan"]}
    assert got[(where, name)] == OTHER[(where, name)][3]


def test_clip_flash_attention_from_b6926():
    # PR #16837 "clip : use FA" (2f966b8ed, 2025-11-02, b6926): the projector's graph follows -fa from it, never before
    got = [clip_flash_attn(LlamaCppSettings(engine_version=_b(b), flash_attn=fa)) for b in (6925, 6926) for fa in
           ("auto", "on", "off")]
    assert got == [False, False, False, True, True, False]


def test_fit_lines_named_after_common_fit_from_b8865():
    assert [fit.log_names(LlamaCppSettings(engine_version=_b(b)))[0] for b in (8864, 8865)] == [
        "llama_params_fit_impl", "common_params_fit_impl"]


@pytest.mark.parametrize("era", DATED)
def test_the_merge_day_reads_as_that_build(era):
    _, _, day, build = MERGES[era]
    assert build_number(day) == build
    assert ERAS.reached(build_number(day), era)


def test_mla_latent_from_b5137():
    # DeepSeek-V3 f16, per token and layer: decompressed 128 heads x (192 + 128) before, latent 576 + 512 from it
    def per_layer(b):
        v = oomkit.estimate("deepseek-ai/DeepSeek-V3", "llama.cpp", quant="Q4_K_M", cpu_only=True, n_ctx=4096,
                            n_parallel=1, find_max_context=False, engine_version=_b(b), flash_attn="on").engine_view
        return (v["k_bytes"] + v["v_bytes"]) // (61 * 4096 * 2)
    assert [per_layer(b) for b in (5136, 5137, 7831, 7832)] == [128 * (192 + 128), 576 + 512, 576 + 512, 576]


def test_encoder_cache_until_b5311():
    # bge-base (12 layers, 768 wide) at -c 512: 12 x 512 x 768 x 2 (K and V) x 2 bytes before PR #13108, none after
    kv_bytes = [_est(_b(b), "bge-base-en-v1.5", n_ctx=512, embeddings=True).kv_cache_bytes for b in (5311, 5312)]
    assert kv_bytes == [12 * 512 * 768 * 2 * 2, 0]


def test_swa_cache_from_b5429_and_phi3_full_again_from_b5440():
    cells = {b: [c["cells"] for c in _view(_b(b), "gemma-2-2b-it")["kv_caches"]] for b in (5428, 5429)}
    # gemma-2: a 4096 window + the logical batch (2048; n_ubatch from PR #13833, b5554), padded
    assert cells == {5428: [8192], 5429: [8192, 6144]}
    # Phi-3-mini-4k: every layer windowed at 2047, PAD(2047 + 2048, 32) cells only in b5429-b5439 (flash attention
    # is off by default in those builds: 32-cell padding)
    phi = {b: [c["cells"] for c in _view(_b(b), "phi-3-mini-4k-instruct", n_ctx=8192)["kv_caches"]]
           for b in (5428, 5429, 5439, 5440)}
    assert phi == {5428: [8192], 5429: [4096], 5439: [4096], 5440: [8192]}


def test_flash_attention_default_off_until_b6324():
    # PR #15434: common_params.flash_attn = false before (a bare -fa switch), flash_attn_type AUTO from b6325
    old, new = _view("b6324", n_ctx=4000), _view("b6325", n_ctx=4000)
    assert (old["flash_attn"], new["flash_attn"]) == (False, True)
    # llama_kv_cache::get_padding before PR #17046: 32 cells without flash attention, 256 with it
    assert (old["n_ctx"], new["n_ctx"]) == (4000, 4096)
    # the bare switch turns it on there
    _, _, s = parse_args(["-m", "x.gguf", "-fa", "-c", "4000"])
    assert (s.flash_attn, s.flash_attn_form) == ("on", "switch")
    on = oomkit.estimate("Qwen/Qwen3-8B", "llama.cpp", quant="Q4_K_M", vram="24GiB", find_max_context=False, fit=False,
                         settings=s, engine_version="b6324").engine_view
    assert (on["flash_attn"], on["n_ctx"]) == (True, 4096)


def test_default_layers_none_until_b6324_but_on_metal():
    # PR #15434 also made every layer the default: before it common_model_params_to_llama left -ngl -1 to
    # llama_model_default_params, n_gpu_layers 0, or 999 in Metal builds (#ifdef GGML_USE_METAL)
    got = {(b, be): _view(_b(b), backend=be)["offloaded_layers"] for b in (6324, 6325) for be in ("cuda", "metal")}
    assert got == {(6324, "cuda"): "0/37", (6324, "metal"): "37/37", (6325, "cuda"): "37/37",
                   (6325, "metal"): "37/37"}
    assert _view("b6324", n_gpu_layers=20)["offloaded_layers"] == "20/37"
    # an Apple chip is a Metal build
    assert _view("b6324", gpu="M2 Max", vram=None)["offloaded_layers"] == "37/37"


def test_quantized_v_needs_the_switch_before_b6325():
    # llama_init_from_model before PR #15434: "V cache quantization requires flash_attn" unless -fa was given
    with pytest.raises(OomkitError, match="quantized V cache requires flash_attn"):
        _view("b6324", cache_type_v="q8_0", cache_type_k="q8_0")
    assert _view("b6325", cache_type_v="q8_0", cache_type_k="q8_0")["flash_attn"] is True


def test_fa_forms_either_side_of_b6325():
    _, _, bare = parse_args(["-m", "x.gguf", "-fa"])
    _, _, valued = parse_args(["-m", "x.gguf", "-fa", "off"])
    assert (bare.flash_attn_form, valued.flash_attn_form) == ("switch", "value")
    assert bare == LlamaCppSettings(flash_attn="on")  # the form is not part of the settings' value
    kw = dict(quant="Q4_K_M", vram="24GiB", find_max_context=False, fit=False)
    # from b6325 -fa takes a value: a bare one is refused in one line
    with pytest.raises(OomkitError, match=r"^-fa: from b6325 \(PR #15434\)"):
        oomkit.estimate("Qwen/Qwen3-8B", "llama.cpp", settings=bare, engine_version="b6325", **kw)
    assert oomkit.estimate("Qwen/Qwen3-8B", "llama.cpp", settings=bare, engine_version="b6324",
                           **kw).engine_view["flash_attn"] is True
    # before it a value is read by its meaning, with a warning (oomkit writes every build's command that way)
    est = oomkit.estimate("Qwen/Qwen3-8B", "llama.cpp", settings=valued, engine_version="b6324", **kw)
    assert est.engine_view["flash_attn"] is False
    assert any(w.startswith("-fa off: llama.cpp builds before b6325") for w in est.warnings)
    est = oomkit.estimate("Qwen/Qwen3-8B", "llama.cpp", settings=valued, engine_version="b6325", **kw)
    assert not any("-fa off" in w for w in est.warnings)


@pytest.mark.parametrize("mode,before,from_", [("on", ["-fa"], ["-fa", "on"]), ("off", [], ["-fa", "off"]),
                                               ("auto", [], [])])
def test_written_commands_take_the_builds_fa_form(mode, before, from_):
    # the commands oomkit writes (fit's fix, the suggested command) run on the build they are for: a bare -fa
    # switch before PR #15434 (a value after it is refused there, and off is the default), -fa <value> from it
    def fa_args(build: str) -> list[str]:
        cmd = format_command("m.gguf", LlamaCppSettings(engine_version=build, flash_attn=mode))
        return [a for a in cmd if a == "-fa" or a in ("on", "off")]

    assert (fa_args("b6324"), fa_args("b6325")) == (before, from_)
    # the user's own bare switch survives a rewrite at an old build, and reads back as the same settings
    old = LlamaCppSettings(engine_version="b6324", flash_attn="on", n_ctx=4096)
    new = rewrite_command(["llama-server", "-m", "m.gguf", "-fa", "-c", "4096"], old, replace(old, n_ctx=2048))
    assert new == ["llama-server", "-m", "m.gguf", "-fa", "-c", "2048"]
    assert parse_args(new[1:])[2].flash_attn == "on"


def test_np_auto_from_b6925():
    # llama-server's default: one slot (its own stream) before PR #16736, 4 slots in one unified cache from it
    assert [(_view(_b(b))["n_seq_max"], _view(_b(b))["kv_unified"]) for b in (6924, 6925)] == [(1, False), (4, True)]


def test_pad_256_always_from_b6975():
    # without flash attention: 32-cell padding before PR #17046, 256 from it
    assert [_view(_b(b), n_ctx=4000, flash_attn="off")["n_ctx"] for b in (6974, 6975)] == [4000, 4096]


def test_fit_from_b7407():
    # PR #16653: before it no fit and common_params' -c default 4096; from it the trained context (40960), which
    # --fit (on by default) reduces to what 8 GiB holds
    old, new = (_view(_b(b), n_ctx=0, vram="8GiB", fit=True) for b in (7406, 7407))
    assert (old["n_ctx"], old.get("fit_n_ctx")) == (4096, None)
    assert 4096 < new["n_ctx"] == new["fit_n_ctx"] < 40960


def test_output_layer_first_from_b7467():
    # -ngl 10 of Qwen3-8B's 36 layers: the last 10 repeating layers before PR #18148; from it the output layer and 9
    old, new = (_view(_b(b), n_gpu_layers=10) for b in (7466, 7467))
    assert old["model_buffer_bytes"]["CUDA0"] != new["model_buffer_bytes"]["CUDA0"]
    assert new["model_buffer_bytes"]["CUDA0"] > old["model_buffer_bytes"]["CUDA0"]  # the output matrix is larger


def test_kq_mask_f16_from_b9410():
    # with flash attention the mask input is F16 from PR #23764: the host's compute buffer of issue #11337's shape
    # (32768 cells x a 512-token ubatch) holds the F32 mask (64 MiB) + the token rows (10 MiB) before, 32 + 10 after,
    # and in both builds the unread embeddings input PR #18550 (b7774) added (10 MiB more: ERAS embd_input; the
    # held-out logs at b9026 and b9849 print it, tests/test_llamacpp_heldout_logs.py)
    def host(b):
        return _view(_b(b), "Qwen/Qwen2.5-Coder-32B-Instruct", n_ctx=32768, n_parallel=1, cache_type_k="q8_0",
                     cache_type_v="q8_0", flash_attn="on")["compute_buffer_bytes"]["CUDA_Host"]
    # (+ 94 KiB of small inputs: token ids, positions, out_ids, K / V indices, the q8_0 rotations;
    # compute.token_index_inputs)
    assert [host(b) for b in (9409, 9410)] == [(64 + 10 + 10) * MiB + 94 * 1024, (32 + 10 + 10) * MiB + 94 * 1024]


def test_outputs_max_from_b9460():
    # PR #23861 (b9460) reserves n_outputs_max rows (llama-server: 1 per slot); PR #23988 (b9464) only refactored
    # the count, so b9460-b9463 already reserve the few rows
    spec = resolve("Qwen/Qwen3-8B:Q4_K_M")
    got = []
    for b in (9459, 9460, 9463, 9464):
        s = LlamaCppSettings(n_ctx=8192, engine_version=_b(b))
        got.append(compute.reserved_outputs(kv.resolve_context(spec, s), s))
    assert got == [512, 4, 4, 4]


# issue #12968's llama-server (ROCm, b5142), its command verbatim: -cd 512 gives the draft its context
DRAFT = Path(__file__).parent / "fixtures" / "engine_logs" / "llamacpp_draft" / \
    "rocm-qwen2.5-72b-draft-qwen2.5-0.5b-iq4xs-c512-b5142.json"


def test_ctx_size_draft_until_b9108():
    fx = json.loads(DRAFT.read_text())
    _, _, s = parse_args(fx["command"].split()[1:])
    assert (s.n_ctx, s.n_ctx_draft, s.flash_attn_form) == (512, 512, "switch")
    # the main context larger than the draft's: -cd sets the draft context alone (params_dft.n_ctx = speculative.n_ctx)
    s = LlamaCppSettings(program="llama-server", n_ctx=4096, n_ctx_draft=512, n_parallel=1, n_gpu_layers=999,
                         n_gpu_layers_draft=999, flash_attn="on", cache_type_k="q8_0", cache_type_v="q8_0",
                         hf_repo_draft=f'{fx["draft_catalog_model"]}:{fx["draft_weight_format"]}')
    kw = dict(quant=fx["weight_format"], find_max_context=False, backend=fx["backend"], fit=False, vram="256GiB")
    view = oomkit.estimate(fx["catalog_model"], "llama.cpp", settings=s, engine_version="b9108", **kw).engine_view
    assert (view["n_ctx"], view["draft_n_ctx"]) == (4096, 512)
    with pytest.raises(OomkitError, match=r"^-cd / --ctx-size-draft: removed in b9109 \(PR #22838\)"):
        oomkit.estimate(fx["catalog_model"], "llama.cpp", settings=s, engine_version="b9109", **kw)


@pytest.mark.parametrize("kind,first", [("draft-simple", 9131), ("draft-eagle3", 9131), ("draft-dflash", 9831)])
def test_spec_type_names_from_their_build(kind, first):
    # common_speculative_type_from_name_map: the name is unknown before the commit that added it
    with pytest.raises(OomkitError, match=rf"^--spec-type {kind}: llama.cpp builds before b{first} do not know it"):
        _view(_b(first - 1), spec_type=(kind,))
    assert _view(_b(first), spec_type=(kind,))["n_ctx"] == 8192


def test_dspark_refused_before_its_build_and_placed_at_newest():
    # PR #25173 (84075273c, b10163) is past NEWEST (b9999): its rules are the newest's, so NEWEST accepts it
    with pytest.raises(OomkitError, match=r"^--spec-type draft-dspark: llama.cpp builds before b10163"):
        _view("b9998", spec_type=("draft-dspark",))
    assert _view("newest", spec_type=("draft-dspark",))["n_ctx"] == 8192


def test_one_draft_context_per_slot_until_b9108():
    # tools/server/server.cpp before PR #22838 (68e7ea3ea, b9109): every slot creates its own draft context
    # (slot.ctx_dft = llama_init_from_model(model_dft, cparams_dft), one sequence each) of params_dft.n_ctx cells:
    # -c / -np before PR #16736 (b6925), llama_n_ctx_seq(ctx) from it (the whole context with -np auto's unified
    # cache); from b9109 one draft context serves every slot
    kw = dict(quant="Q4_K_M", find_max_context=False, fit=False, vram="80GiB")
    for build, n_parallel, n_dft, cells in (("b6924", 2, 2, 4096), ("b6925", -1, 4, 8192), ("b9108", -1, 4, 8192),
                                            ("b9109", -1, 1, 8192)):
        s = LlamaCppSettings(n_ctx=8192, n_parallel=n_parallel, hf_repo_draft="Qwen/Qwen2.5-0.5B-Instruct:Q4_K_M")
        v = oomkit.estimate("Qwen/Qwen2.5-7B-Instruct", "llama.cpp", settings=s, engine_version=build, **kw).engine_view
        assert (v["draft_contexts"], v["draft_n_ctx"]) == (n_dft, cells), build
        one = oomkit.estimate("Qwen/Qwen2.5-0.5B-Instruct", "llama.cpp", engine_version=build, n_ctx=cells,
                              n_parallel=1, **kw).devices[0]
        # Qwen2.5-0.5B: 24 layers, K and V rows of 2 KV heads x 64, f16
        assert one.kv_cache_bytes == 24 * cells * (2 * 64) * 2 * 2
        assert v["draft_bytes"]["CUDA0"] == one.weights_bytes + n_dft * (one.kv_cache_bytes + one.compute_bytes)
