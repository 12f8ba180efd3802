// Ollama's gpt-oss worst-case graph without flash attention (model/models/gptoss/model.go with separate attn_q/k/v and
// ffn_gate/up_exps, as oomkit's gpt-oss:20b; kvcache/causal.go Put/Get with PermutedV; the f32 masks and the other
// inputs in CPU buffers of their own, ml/backend/ggml Context.Input) reserved by Ollama's own ggml_backend_sched and
// ggml-alloc beside a stand-in Vulkan0 device: ggml-vulkan's offload_op (ne[1] >= 32, or ne[2] for MUL_MAT_ID), every
// op supported, only its own buffer type readable, that buffer type's max size MAX_SIZE (1 GiB as ggml-vulkan's
// suballocation block, or 0: none). Weights, caches and inputs live in buffers without memory. Prints
// ggml_graph_n_nodes (1445, as ollama/ollama#12913 prints) and ggml_backend_sched_get_attempted_buffer_size per device.
//
// Build against ggml-base compiled from a release's vendored source (ml/backend/ggml/ggml: ggml.c, ggml-alloc.c,
// ggml-quants.c, ggml.cpp, ggml-backend.cpp, ggml-threading.cpp, ggml-opt.cpp, gguf.cpp, gcc/g++ -O1 -fPIC, linked
// -shared as libggml-base.so), e.g. for v0.12.9:
//   gcc -O1 -o reserve ollama_vulkan_reserve.c -I$SRC/include -I$SRC/src -L$LIB -lggml-base -Wl,-rpath,$LIB
//   MAX_SIZE=1073741824 ./reserve FIRST_GPU_BLOCK FULL_CELLS SWA_CELLS TOKENS   (defaults 14 131072 4608 512)
// tests/test_llamacpp_vulkan_chunks.py holds the figures it printed with v0.12.9 and v0.13.2.
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

static size_t g_max = SIZE_MAX;
static size_t g_align = 32;
static void fb_free(ggml_backend_buffer_t b) { (void)b; }
static void * fb_base(ggml_backend_buffer_t b) { (void)b; return (void *)(uintptr_t)0x10000000; }
static void fb_clear(ggml_backend_buffer_t b, uint8_t v) { (void)b; (void)v; }
static struct ggml_backend_buffer_i fb_iface = { fb_free, fb_base, NULL, NULL, NULL, NULL, NULL, fb_clear, NULL };

static struct ggml_backend_device gpu_dev, cpu_dev;
static struct ggml_backend_buffer_type gpu_buft;
static const char * gb_name(ggml_backend_buffer_type_t b) { (void)b; return "Vulkan0"; }
static ggml_backend_buffer_t gb_alloc(ggml_backend_buffer_type_t b, size_t size) { return ggml_backend_buffer_init(b, fb_iface, NULL, size); }
static size_t gb_align(ggml_backend_buffer_type_t b) { (void)b; return g_align; }
static size_t gb_max(ggml_backend_buffer_type_t b) { (void)b; return g_max; }
static bool gb_host(ggml_backend_buffer_type_t b) { (void)b; return false; }

static const char * gd_name(ggml_backend_dev_t d) { return d == &gpu_dev ? "Vulkan0" : "CPU"; }
static void gd_mem(ggml_backend_dev_t d, size_t * f, size_t * t) { (void)d; *f = *t = (size_t)1 << 40; }
static enum ggml_backend_dev_type gd_type(ggml_backend_dev_t d) { return d == &gpu_dev ? GGML_BACKEND_DEVICE_TYPE_GPU : GGML_BACKEND_DEVICE_TYPE_CPU; }
static void gd_props(ggml_backend_dev_t d, struct ggml_backend_dev_props * p) { memset(p, 0, sizeof *p); p->name = gd_name(d); p->description = p->name; p->type = gd_type(d); }
static ggml_backend_buffer_type_t gd_buft(ggml_backend_dev_t d) { return d == &gpu_dev ? &gpu_buft : ggml_backend_cpu_buffer_type(); }
static bool gd_supports_op(ggml_backend_dev_t d, const struct ggml_tensor * op) { (void)d; (void)op; return true; }
static bool gd_supports_buft(ggml_backend_dev_t d, ggml_backend_buffer_type_t b) { return d == &gpu_dev ? b == &gpu_buft : ggml_backend_buft_is_host(b); }
// ggml-vulkan.cpp ggml_backend_vk_device_offload_op (v0.12.9)
static bool gd_offload(ggml_backend_dev_t d, const struct ggml_tensor * op) {
    if (d != &gpu_dev) return false;
    return (op->ne[1] >= 32 && op->op != GGML_OP_GET_ROWS) || (op->ne[2] >= 32 && op->op == GGML_OP_MUL_MAT_ID);
}
static struct ggml_backend_device_i dev_iface = { gd_name, gd_name, gd_mem, gd_type, gd_props, NULL, gd_buft, NULL, NULL, gd_supports_op, gd_supports_buft, gd_offload, NULL, NULL, NULL, NULL };

static const char * be_name(ggml_backend_t b) { return gd_name(b->device); }
static void be_free(ggml_backend_t b) { (void)b; }
static uint8_t guid_g[16] = {1}, guid_c[16] = {2};
static struct ggml_backend gpu_be, cpu_be;

static ggml_backend_buffer_t fake_buffer(ggml_backend_buffer_type_t bt, struct ggml_context * ctx, enum ggml_backend_buffer_usage usage) {
    size_t total = 0, align = ggml_backend_buft_get_alignment(bt);
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) total += GGML_PAD(ggml_backend_buft_get_alloc_size(bt, t), align);
    ggml_backend_buffer_t b = ggml_backend_buffer_init(bt, fb_iface, NULL, total + align);
    ggml_backend_buffer_set_usage(b, usage);
    size_t off = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
        ggml_backend_tensor_alloc(b, t, (char *)ggml_backend_buffer_get_base(b) + off);
        off += GGML_PAD(ggml_backend_buft_get_alloc_size(bt, t), align);
    }
    return b;
}

#define NL 24
int main(int argc, char ** argv) {
    int first_gpu = argc > 1 ? atoi(argv[1]) : 14;       // blocks first_gpu..23 on Vulkan0
    long full = argc > 2 ? atol(argv[2]) : 131072, swa = argc > 3 ? atol(argv[3]) : 4608;
    int T = argc > 4 ? atoi(argv[4]) : 512, n_out = 1;
    const int E = 2880, H = 64, KV = 8, D = 64, NE = 32, K = 4, V = 201088, FF = 2880;
    gpu_dev.iface = dev_iface; cpu_dev.iface = dev_iface;
    gpu_buft.iface = (struct ggml_backend_buffer_type_i){ gb_name, gb_alloc, gb_align, gb_max, NULL, gb_host, NULL };
    gpu_buft.device = &gpu_dev;
    struct ggml_backend_i bi = {0}; bi.get_name = be_name; bi.free = be_free;
    gpu_be.guid = (ggml_guid_t)guid_g; gpu_be.iface = bi; gpu_be.device = &gpu_dev;
    cpu_be.guid = (ggml_guid_t)guid_c; cpu_be.iface = bi; cpu_be.device = &cpu_dev;
    ggml_backend_buffer_type_t cpu_bt = ggml_backend_cpu_buffer_type();

    struct ggml_init_params wp = { ggml_tensor_overhead() * 2000, NULL, true };
    struct ggml_context * Wc = ggml_init(wp), * Wg = ggml_init(wp), * Cc = ggml_init(wp), * Cg = ggml_init(wp), * IN = ggml_init(wp);
    struct ggml_init_params gp = { ggml_tensor_overhead() * 40000 + ggml_graph_overhead_custom(40000, false), NULL, true };
    struct ggml_context * G = ggml_init(gp);
    #define W(ctx, type, ...) ggml_new_tensor(ctx, type, sizeof((int64_t[]){__VA_ARGS__}) / 8, (int64_t[]){__VA_ARGS__})
    struct ggml_tensor * tok = W(Wc, GGML_TYPE_BF16, E, V);
    struct { struct ggml_tensor *wq, *bq, *wk, *bk, *wv, *bv, *gw, *gb, *uw, *ub, *an, *ao, *aob, *sinks, *fn, *r, *rb, *dn, *db, *ck, *cv; } L[NL];
    for (int il = 0; il < NL; il++) {
        struct ggml_context * w = il >= first_gpu ? Wg : Wc, * c = il >= first_gpu ? Cg : Cc;
        long cells = il % 2 == 0 ? swa : full;
        L[il].an = W(w, GGML_TYPE_F32, E);
        L[il].wq = W(w, GGML_TYPE_BF16, E, H * D); L[il].bq = W(w, GGML_TYPE_F32, H * D); L[il].wk = W(w, GGML_TYPE_BF16, E, KV * D); L[il].bk = W(w, GGML_TYPE_F32, KV * D); L[il].wv = W(w, GGML_TYPE_BF16, E, KV * D); L[il].bv = W(w, GGML_TYPE_F32, KV * D);
        L[il].gw = W(w, GGML_TYPE_MXFP4, E, FF, NE); L[il].gb = W(w, GGML_TYPE_F32, FF, NE); L[il].uw = W(w, GGML_TYPE_MXFP4, E, FF, NE); L[il].ub = W(w, GGML_TYPE_F32, FF, NE);
        L[il].ao = W(w, GGML_TYPE_BF16, H * D, E); L[il].aob = W(w, GGML_TYPE_F32, E); L[il].sinks = W(w, GGML_TYPE_F32, H);
        L[il].fn = W(w, GGML_TYPE_F32, E); L[il].r = W(w, GGML_TYPE_F32, E, NE); L[il].rb = W(w, GGML_TYPE_F32, NE);
        L[il].dn = W(w, GGML_TYPE_MXFP4, FF, E, NE); L[il].db = W(w, GGML_TYPE_F32, E, NE);
        L[il].ck = W(c, GGML_TYPE_F16, D, KV, cells); L[il].cv = W(c, GGML_TYPE_F16, cells, D, KV);  // PermutedV
    }
    struct ggml_tensor * on = W(Wg, GGML_TYPE_F32, E), * out = W(Wg, GGML_TYPE_BF16, E, V);
    struct ggml_tensor * inp = W(IN, GGML_TYPE_I32, T), * pos = W(IN, GGML_TYPE_I32, T), * outs = W(IN, GGML_TYPE_I32, n_out);
    struct ggml_tensor * mask_full = W(IN, GGML_TYPE_F32, full, T), * mask_swa = W(IN, GGML_TYPE_F32, swa, T);
    fake_buffer(cpu_bt, Wc, GGML_BACKEND_BUFFER_USAGE_WEIGHTS); fake_buffer(&gpu_buft, Wg, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    fake_buffer(cpu_bt, Cc, GGML_BACKEND_BUFFER_USAGE_ANY); fake_buffer(&gpu_buft, Cg, GGML_BACKEND_BUFFER_USAGE_ANY);
    fake_buffer(cpu_bt, IN, GGML_BACKEND_BUFFER_USAGE_ANY);

    struct ggml_cgraph * gf = ggml_new_graph_custom(G, 40000, false);
    struct ggml_tensor * x = ggml_get_rows(G, tok, inp);
    for (int il = 0; il < NL; il++) {
        struct ggml_tensor * res = x, * mask = il % 2 == 0 ? mask_swa : mask_full;
        struct ggml_tensor * n = ggml_mul(G, ggml_rms_norm(G, x, 1e-5f), L[il].an);
        struct ggml_tensor * q = ggml_reshape_3d(G, ggml_add(G, ggml_mul_mat(G, L[il].wq, n), L[il].bq), D, H, T);
        struct ggml_tensor * k = ggml_reshape_3d(G, ggml_add(G, ggml_mul_mat(G, L[il].wk, n), L[il].bk), D, KV, T);
        struct ggml_tensor * v = ggml_reshape_3d(G, ggml_add(G, ggml_mul_mat(G, L[il].wv, n), L[il].bv), D, KV, T);
        q = ggml_rope_ext(G, q, pos, NULL, D, 2, 4096, 150000.f, 1.f / 32, 1.f, 1.f, 32.f, 1.f);
        k = ggml_rope_ext(G, k, pos, NULL, D, 2, 4096, 150000.f, 1.f / 32, 1.f, 1.f, 32.f, 1.f);
        ggml_build_forward_expand(gf, q); ggml_build_forward_expand(gf, k); ggml_build_forward_expand(gf, v);
        struct ggml_tensor * ck = L[il].ck, * cv = L[il].cv;
        long cells = ck->ne[2];
        ggml_build_forward_expand(gf, ggml_cpy(G, k, ggml_view_1d(G, ck, D * KV * T, 0)));
        struct ggml_tensor * vp = ggml_permute(G, v, 1, 2, 0, 3);
        ggml_build_forward_expand(gf, ggml_cpy(G, vp, ggml_view_2d(G, cv, T, D * KV, cells * cv->nb[0], 0)));
        struct ggml_tensor * kk = ggml_view_3d(G, ck, D, KV, cells, ck->nb[1], ck->nb[2], 0);
        struct ggml_tensor * vv = ggml_view_3d(G, cv, cells, D, KV, cv->nb[1], cv->nb[2], 0);
        struct ggml_tensor * kq = ggml_mul_mat(G, ggml_permute(G, kk, 0, 2, 1, 3), ggml_permute(G, q, 0, 2, 1, 3));
        ggml_mul_mat_set_prec(kq, GGML_PREC_F32);
        kq = ggml_soft_max_ext(G, kq, mask, 0.125f, 0.f);
        ggml_soft_max_add_sinks(kq, L[il].sinks);
        struct ggml_tensor * o = ggml_mul_mat(G, vv, kq);
        o = ggml_cont(G, ggml_permute(G, o, 0, 2, 1, 3));
        o = ggml_reshape_2d(G, o, H * D, T);
        x = ggml_add(G, ggml_add(G, ggml_mul_mat(G, L[il].ao, o), L[il].aob), res);
        if (il == NL - 1) x = ggml_get_rows(G, x, outs);
        long t = x->ne[1];
        res = x;
        n = ggml_mul(G, ggml_rms_norm(G, x, 1e-5f), L[il].fn);
        n = ggml_reshape_2d(G, n, E, t);
        struct ggml_tensor * rw = ggml_add(G, ggml_mul_mat(G, L[il].r, n), L[il].rb);
        struct ggml_tensor * sel = ggml_top_k(G, rw, K);
        rw = ggml_get_rows(G, ggml_reshape_3d(G, rw, 1, NE, t), sel);
        rw = ggml_reshape_3d(G, ggml_soft_max(G, ggml_reshape_2d(G, rw, K, t)), 1, K, t);
        n = ggml_reshape_3d(G, n, E, 1, t);
        struct ggml_tensor * gate = ggml_add_id(G, ggml_mul_mat_id(G, L[il].gw, n, sel), L[il].gb, sel);
        struct ggml_tensor * up = ggml_add_id(G, ggml_mul_mat_id(G, L[il].uw, n, sel), L[il].ub, sel);
        struct ggml_tensor * a = ggml_swiglu_oai(G, gate, up, 1.702f, 7.f);
        struct ggml_tensor * ex = ggml_add_id(G, ggml_mul_mat_id(G, L[il].dn, a, sel), L[il].db, sel);
        ex = ggml_mul(G, ex, rw);
        struct ggml_tensor * nx = ggml_view_2d(G, ex, E, ex->ne[2], ex->nb[2], 0);
        for (int i = 1; i < K; i++) nx = ggml_add(G, nx, ggml_view_2d(G, ex, E, ex->ne[2], ex->nb[2], i * ex->nb[1]));
        x = ggml_add(G, nx, res);
    }
    x = ggml_mul(G, ggml_rms_norm(G, x, 1e-5f), on);
    ggml_build_forward_expand(gf, ggml_mul_mat(G, out, x));

    printf("nodes=%d\n", ggml_graph_n_nodes(gf));
    ggml_backend_t bes[2] = { &gpu_be, &cpu_be };
    ggml_backend_buffer_type_t bts[2] = { &gpu_buft, cpu_bt };
    const char * m = getenv("MAX_SIZE");
    g_max = m && atol(m) ? (size_t)atol(m) : SIZE_MAX;
    ggml_backend_sched_t sched = ggml_backend_sched_new(bes, bts, 2, 40000, false, true);
    ggml_backend_sched_set_batch_size(sched, T);  // ml/backend/ggml Context.Reserve: op_offload needs >= 32
    bool ok = ggml_backend_sched_reserve(sched, gf);
    printf("max_size=%s ok=%d splits=%d Vulkan0=%zu CPU=%zu\n", m ? m : "0", ok, ggml_backend_sched_get_n_splits(sched),
           ggml_backend_sched_get_attempted_buffer_size(sched, &gpu_be), ggml_backend_sched_get_attempted_buffer_size(sched, &cpu_be));
    return 0;
}
