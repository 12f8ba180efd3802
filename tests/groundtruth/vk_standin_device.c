// A stand-in Vulkan0 device registered into the pinned binding's ggml (llama-cpp-python 0.3.36, llama.cpp 0c1e570),
// so that llama.cpp's own scheduler splits the worst-case graph between it and the CPU and ggml-alloc sizes both
// buffers, without a GPU: the device answers as ggml-vulkan does where the split depends on it
// (ggml/src/ggml-vulkan/ggml-vulkan.cpp at b9849: ggml_backend_vk_device_offload_op, ggml_vk_get_op_batch_size >= 32
// with GET_ROWS never offloaded; supports_buft its own buffer type only; graph_optimize = ggml_vk_graph_optimize, its
// dense path: the topk-MoE keep-patterns are left out), supports every op and allocates nothing (dummy buffers).
// Run with no_alloc (llama.cpp's dry run), every layer offloaded. Build against the vendored headers:
//   gcc -O1 -shared -fPIC -o vk_standin_device.so vk_standin_device.c -I$LLAMA/ggml/include -I$LLAMA/ggml/src
//       -L$LIB -lggml -lggml-base -Wl,-rpath,$LIB        (LIB: the binding's llama_cpp/lib)
// and register it after llama_backend_init, before the model load:
//   llama_cpp.llama_backend_init(); ctypes.CDLL("./vk_standin_device.so", mode=ctypes.RTLD_GLOBAL).fakevk_register(1)
//   mp.n_gpu_layers = 999; mp.no_alloc = True; mp.use_mmap = False   (fakevk_register(0): graph_optimize off)
// VK_MAX_SIZE=1073741824 gives the buffer type ggml-vulkan's 1 GiB maximum (its suballocation block), so ggml-alloc
// reserves in chunks as on the device. On Gemma 4 E2B's and E4B's synthetic files at HilbertraumAI's b9849 settings
// (-c 8192 -ub 2048 -np 1) it prints the Vulkan logs' own buffers, Vulkan0 554.07 / 530.07 MiB and the host's
// 136.09 / 166.09 (tests/test_llamacpp_gemma4_ple.py VK_STANDIN_MIB).
#include "ggml.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "ggml-impl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

static void fb_free(ggml_backend_buffer_t b) { (void)b; }
static void * fb_base(ggml_backend_buffer_t b) { (void)b; return (void *)(uintptr_t)0x10000000; }
static void fb_clear(ggml_backend_buffer_t b, uint8_t v) { (void)b; (void)v; }
static void fb_memset(ggml_backend_buffer_t b, struct ggml_tensor * t, uint8_t v, size_t o, size_t s) { (void)b; (void)t; (void)v; (void)o; (void)s; }
static void fb_set(ggml_backend_buffer_t b, struct ggml_tensor * t, const void * d, size_t o, size_t s) { (void)b; (void)t; (void)d; (void)o; (void)s; }
static void fb_get(ggml_backend_buffer_t b, const struct ggml_tensor * t, void * d, size_t o, size_t s) { (void)b; (void)t; memset(d, 0, s); (void)o; }
static struct ggml_backend_buffer_i fb_iface = { fb_free, fb_base, NULL, fb_memset, fb_set, fb_get, NULL, NULL, NULL, fb_clear, NULL };

static struct ggml_backend_device dev;
static struct ggml_backend_reg reg;
static struct ggml_backend_buffer_type buft;
static size_t g_align = 16;
static const char * gb_name(ggml_backend_buffer_type_t b) { (void)b; return "Vulkan0"; }
static ggml_backend_buffer_t gb_alloc(ggml_backend_buffer_type_t b, size_t size) { return ggml_backend_buffer_init(b, fb_iface, NULL, size); }
static size_t gb_align(ggml_backend_buffer_type_t b) { (void)b; return g_align; }
static bool gb_host(ggml_backend_buffer_type_t b) { (void)b; return false; }
// ggml_backend_vk_buffer_type_get_max_size: the device's suballocation block (1 GiB unless GGML_VK_SUBALLOCATION_BLOCK_SIZE
// says otherwise); VK_MAX_SIZE sets it here (unset: no maximum, one buffer)
static size_t gb_max(ggml_backend_buffer_type_t b) { (void)b; const char * m = getenv("VK_MAX_SIZE"); return m && atoll(m) ? (size_t)atoll(m) : SIZE_MAX; }

static const char * gd_name(ggml_backend_dev_t d) { (void)d; return "Vulkan0"; }
static void gd_mem(ggml_backend_dev_t d, size_t * f, size_t * t) { (void)d; *f = *t = (size_t)1 << 40; }
static enum ggml_backend_dev_type gd_type(ggml_backend_dev_t d) { (void)d; return GGML_BACKEND_DEVICE_TYPE_GPU; }
static void gd_props(ggml_backend_dev_t d, struct ggml_backend_dev_props * p) {
    memset(p, 0, sizeof *p); p->name = gd_name(d); p->description = "fake"; p->type = GGML_BACKEND_DEVICE_TYPE_GPU;
    gd_mem(d, &p->memory_free, &p->memory_total);
}
static ggml_backend_buffer_type_t gd_buft(ggml_backend_dev_t d) { (void)d; return &buft; }
static bool gd_supports_op(ggml_backend_dev_t d, const struct ggml_tensor * op) { (void)d; (void)op; return true; }
static bool gd_supports_buft(ggml_backend_dev_t d, ggml_backend_buffer_type_t b) { (void)d; return b == &buft; }
static int64_t batch_size(const struct ggml_tensor * op) {
    switch (op->op) {
        case GGML_OP_GET_ROWS: return 0;
        case GGML_OP_MUL_MAT: return op->ne[1];
        case GGML_OP_MUL_MAT_ID: case GGML_OP_ROPE: case GGML_OP_ROPE_BACK: return op->ne[2];
        default: return ggml_nrows(op);
    }
}
static bool gd_offload(ggml_backend_dev_t d, const struct ggml_tensor * op) { (void)d; return batch_size(op) >= 32; }

static int g_reorder = 1;
static bool is_empty(const struct ggml_tensor * t) {
    return t->op == GGML_OP_NONE || t->op == GGML_OP_RESHAPE || t->op == GGML_OP_TRANSPOSE || t->op == GGML_OP_VIEW || t->op == GGML_OP_PERMUTE;
}
static bool is_src_of(const struct ggml_tensor * d, const struct ggml_tensor * s) {
    for (int i = 0; i < GGML_MAX_SRC; i++) if (d->src[i] == s) return true;
    const struct ggml_tensor * d2 = d->view_src ? d->view_src : d, * s2 = s->view_src ? s->view_src : s;
    return d2 == s2;
}
static void graph_optimize(ggml_backend_t be, struct ggml_cgraph * g, struct ggml_backend_graph_optimize_params * params) {
    (void)be; (void)params;
    if (!g_reorder) return;
    int n = g->n_nodes; struct ggml_tensor ** N = g->nodes;
    struct ggml_tensor ** out = malloc(sizeof(void *) * n); int no = 0;
    bool * used = calloc(n, 1); struct ggml_tensor ** uset = malloc(sizeof(void *) * n); int nu = 0;
    int * cur = malloc(sizeof(int) * n);
    int first = 0;
    while (first < n) {
        int nc = 0; cur[nc++] = first;
        int lim = first + 20 < n ? first + 20 : n;
        for (int j = first + 1; j < lim; j++) {
            if (used[j] || is_empty(N[j])) continue;
            bool ok = true;
            for (int c = first; c < j; c++) {
                if (!used[c] && is_src_of(N[j], N[c])) {
                    bool adj = (j == c + 1 && c == cur[nc - 1]);
                    enum ggml_op a = N[c]->op, b = N[j]->op;
                    if (adj && ((a == GGML_OP_RMS_NORM && b == GGML_OP_MUL) || (a == GGML_OP_MUL_MAT && b == GGML_OP_ADD) ||
                                (a == GGML_OP_MUL_MAT_ID && b == GGML_OP_ADD_ID) || (a == GGML_OP_MUL_MAT_ID && b == GGML_OP_MUL) ||
                                (a == GGML_OP_ADD && b == GGML_OP_ADD))) continue;
                    ok = false; break;
                }
            }
            if (!ok) continue;
            cur[nc++] = j;
            int rope = j;
            if (j > 0 && N[j]->op == GGML_OP_MUL && N[j-1]->op == GGML_OP_RMS_NORM) {
                for (int k = j + 1; k < (j + 15 < n ? j + 15 : n); k++) {
                    if (N[k]->op == GGML_OP_ROPE && N[k]->src[0] == N[j] && N[k]->src[1]->op == GGML_OP_NONE &&
                        (N[k]->src[2] == NULL || N[k]->src[2]->op == GGML_OP_NONE)) { rope = k; cur[nc++] = k; used[k] = true; break; }
                }
            }
            if (N[rope]->op == GGML_OP_ROPE) {
                int vi = -1, si = -1;
                for (int k = rope + 1; k < (rope + 10 < n ? rope + 10 : n); k++) {
                    if (vi == -1 && N[k]->op == GGML_OP_VIEW && N[k]->src[0] == N[rope]) { vi = k; continue; }
                    if (vi != -1 && si == -1 && N[k]->op == GGML_OP_SET_ROWS && N[k]->src[0] == N[vi]) { si = k; break; }
                }
                if (si != -1) { cur[nc++] = vi; cur[nc++] = si; used[vi] = used[si] = true; }
            }
            if (j > 0 && N[j]->op == GGML_OP_ADD_ID && N[j-1]->op == GGML_OP_MUL_MAT_ID) {
                for (int k = j + 1; k < (j + 15 < n ? j + 15 : n); k++) {
                    if (N[k]->op == GGML_OP_MUL && N[k]->src[0] == N[j]) {
                        struct ggml_tensor * s1 = N[k]->src[1]; bool done = s1->op == GGML_OP_NONE;
                        for (int u = 0; u < nu && !done; u++) done = uset[u] == s1;
                        if (done) { cur[nc++] = k; used[k] = true; break; }
                    }
                }
            }
            if (j > 0 && N[j]->op == GGML_OP_ADD && N[j-1]->op == GGML_OP_MUL_MAT) {
                for (int k = j + 1; k < (j + 15 < n ? j + 15 : n); k++) {
                    if (N[k]->op == GGML_OP_ADD && N[k]->src[0] == N[j]) {
                        struct ggml_tensor * s1 = N[k]->src[1]; bool done = s1->op == GGML_OP_NONE;
                        for (int u = 0; u < nu && !done; u++) done = uset[u] == s1;
                        if (done) { cur[nc++] = k; used[k] = true; break; }
                    }
                }
            }
        }
        if (N[cur[nc - 1]]->op != GGML_OP_ADD) {
            for (int j = first + 1; j < lim; j++) {
                if (used[j] || !is_empty(N[j])) continue;
                bool ok = true;
                for (int c = first; c < j; c++) {
                    bool in = false; for (int q = 0; q < nc; q++) in |= cur[q] == c;
                    if (!used[c] && is_src_of(N[j], N[c]) && !in) { ok = false; break; }
                }
                if (ok) cur[nc++] = j;
            }
        }
        for (int q = 0; q < nc; q++) { out[no++] = N[cur[q]]; uset[nu++] = N[cur[q]]; used[cur[q]] = true; }
        while (first < n && used[first]) first++;
    }
    if (no != n) fprintf(stderr, "reorder: %d != %d\n", no, n);
    else memcpy(N, out, sizeof(void *) * n);
    free(out); free(used); free(uset); free(cur);
}

static const char * be_name(ggml_backend_t b) { (void)b; return "Vulkan0"; }
static void be_free(ggml_backend_t b) { (void)b; }
static enum ggml_status be_compute(ggml_backend_t b, struct ggml_cgraph * g) { (void)b; (void)g; return GGML_STATUS_SUCCESS; }
static uint8_t guid_g[16] = {0xfa, 0x4e, 1};
static struct ggml_backend gpu_be;
static ggml_backend_t gd_init(ggml_backend_dev_t d, const char * params) {
    (void)params;
    struct ggml_backend_i bi; memset(&bi, 0, sizeof bi);
    bi.get_name = be_name; bi.free = be_free; bi.graph_compute = be_compute; bi.graph_optimize = graph_optimize;
    gpu_be.guid = (ggml_guid_t)guid_g; gpu_be.iface = bi; gpu_be.device = d; gpu_be.context = NULL;
    return &gpu_be;
}
static const char * rg_name(ggml_backend_reg_t r) { (void)r; return "Vulkan"; }
static size_t rg_count(ggml_backend_reg_t r) { (void)r; return 1; }
static ggml_backend_dev_t rg_dev(ggml_backend_reg_t r, size_t i) { (void)r; (void)i; return &dev; }
static void * rg_proc(ggml_backend_reg_t r, const char * name) { (void)r; (void)name; return NULL; }

void fakevk_register(int reorder) {
    g_reorder = reorder;
    buft.iface = (struct ggml_backend_buffer_type_i){ gb_name, gb_alloc, gb_align, gb_max, NULL, gb_host };
    buft.device = &dev; buft.context = NULL;
    memset(&dev.iface, 0, sizeof dev.iface);
    dev.iface.get_name = gd_name; dev.iface.get_description = gd_name; dev.iface.get_memory = gd_mem;
    dev.iface.get_type = gd_type; dev.iface.get_props = gd_props; dev.iface.init_backend = gd_init;
    dev.iface.get_buffer_type = gd_buft; dev.iface.supports_op = gd_supports_op; dev.iface.supports_buft = gd_supports_buft;
    dev.iface.offload_op = gd_offload;
    dev.reg = &reg; dev.context = NULL;
    reg.api_version = GGML_BACKEND_API_VERSION;
    reg.iface = (struct ggml_backend_reg_i){ rg_name, rg_count, rg_dev, rg_proc };
    reg.context = NULL;
    ggml_backend_register(&reg);
}
