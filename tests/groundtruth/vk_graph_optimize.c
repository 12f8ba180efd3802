// Places the pinned binding's CPU graph in the order ggml-vulkan gives it: ggml_backend_sched_split_graph hands each
// split to its backend's graph_optimize before ggml-alloc places it, and ggml-vulkan's (ggml_vk_graph_optimize,
// ggml/src/ggml-vulkan/ggml-vulkan.cpp, PR #15850 "vulkan: sort graph to allow more parallel execution", 2025-09-08)
// pulls up to 20 following independent nodes beside each one. A C port of that function (its dense subset: the
// topk_moe and snake keep-patterns are left out), run on the graph in a preloaded ggml_gallocr_reserve_n before the
// real one; a CPU-only context has one split, so reordering the whole graph is what the scheduler would do. A dry
// run (no_alloc: llama_context sizes its buffers through ggml_backend_sched_reserve_size) reserves through
// ggml_gallocr_reserve_n_size instead, hooked the same way.
// Struct offsets are those of the pinned binding's ggml_tensor (op at 80, src at 152, view_src at 232).
//   gcc -O1 -shared -fPIC -o vk_graph_optimize.so vk_graph_optimize.c -ldl
//   SHIM_LIB=.venv/lib/python3.11/site-packages/llama_cpp/lib/libggml-base.so LD_PRELOAD=./vk_graph_optimize.so
//     python <a script that creates a llama.cpp context>
// tests/test_llamacpp_heldout_logs.py holds the "compute buffer size" lines it printed (VK_ORDER_CPU_MIB).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <stdint.h>
struct cg { int size, n_nodes, n_leafs; void **nodes, **grads, **grad_accs, **leafs; };
typedef bool (*reserve_fn)(void *, void *, const int *, const int *);
typedef const char *(*opname_fn)(int);
static opname_fn OPN;
static int op(void *t) { return *(int *)((char *)t + 80); }
static void *src(void *t, int s) { return ((void **)((char *)t + 152))[s]; }
static void *vsrc(void *t) { return *(void **)((char *)t + 232); }
static bool is(void *t, const char *n) { return strcmp(OPN(op(t)), n) == 0; }
static bool is_empty(void *t) { return is(t,"NONE")||is(t,"RESHAPE")||is(t,"TRANSPOSE")||is(t,"VIEW")||is(t,"PERMUTE"); }
static bool is_src_of(void *d, void *s) {
    for (int i = 0; i < 10; i++) if (src(d, i) == s) return true;
    void *d2 = vsrc(d) ? vsrc(d) : d, *s2 = vsrc(s) ? vsrc(s) : s;
    return d2 == s2;
}
static bool pair(void *c, void *j, const char *a, const char *b) { return is(c, a) && is(j, b); }
static void reorder(struct cg *g) {
    int n = g->n_nodes; void **N = g->nodes;
    void **out = malloc(sizeof(void *) * n); int no = 0;
    bool *used = calloc(n, 1); void **uset = malloc(sizeof(void*)*n); int nu = 0;
    int *cur = malloc(sizeof(int) * n);
    int first = 0;
    while (first < n) {
        int nc = 0; cur[nc++] = first;
        for (int j = first + 1; j < (first + 20 < n ? first + 20 : n); j++) {
            if (used[j] || is_empty(N[j])) continue;
            bool ok = true;
            for (int c = first; c < j; c++) {
                if (!used[c] && is_src_of(N[j], N[c])) {
                    bool adj = (j == c + 1 && c == cur[nc - 1]);
                    if (adj && (pair(N[c],N[j],"RMS_NORM","MUL") || pair(N[c],N[j],"MUL_MAT","ADD") ||
                                pair(N[c],N[j],"MUL_MAT_ID","ADD_ID") || pair(N[c],N[j],"MUL_MAT_ID","MUL") ||
                                pair(N[c],N[j],"ADD","ADD") || pair(N[c],N[j],"SSM_CONV","ADD") || pair(N[c],N[j],"SSM_CONV","UNARY"))) continue;
                    ok = false; break;
                }
            }
            if (!ok) continue;
            cur[nc++] = j;
            int rope = j;
            if (j > 0 && is(N[j], "MUL") && is(N[j-1], "RMS_NORM")) {
                for (int k = j + 1; k < (j + 15 < n ? j + 15 : n); k++) {
                    if (is(N[k], "ROPE") && src(N[k],0) == N[j] && is(src(N[k],1), "NONE") &&
                        (src(N[k],2) == NULL || is(src(N[k],2), "NONE"))) { rope = k; cur[nc++] = k; used[k] = true; break; }
                }
            }
            if (is(N[rope], "ROPE")) {
                int vi = -1, si = -1;
                for (int k = rope + 1; k < (rope + 10 < n ? rope + 10 : n); k++) {
                    if (vi == -1 && is(N[k], "VIEW") && src(N[k],0) == N[rope]) { vi = k; continue; }
                    if (vi != -1 && si == -1 && is(N[k], "SET_ROWS") && src(N[k],0) == N[vi]) { si = k; break; }
                }
                if (si != -1) { cur[nc++] = vi; cur[nc++] = si; used[vi] = used[si] = true; }
            }
            if (j > 0 && is(N[j], "ADD") && is(N[j-1], "MUL_MAT")) {
                for (int k = j + 1; k < (j + 15 < n ? j + 15 : n); k++) {
                    if (is(N[k], "ADD") && src(N[k],0) == N[j]) {
                        void *s1 = src(N[k],1); bool done = is(s1, "NONE");
                        for (int u = 0; u < nu && !done; u++) done = uset[u] == s1;
                        if (done) { cur[nc++] = k; used[k] = true; break; }
                    }
                }
            }
        }
        if (!is(N[cur[nc - 1]], "ADD")) {
            for (int j = first + 1; j < (first + 20 < n ? first + 20 : n); j++) {
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
bool ggml_gallocr_reserve_n(void *galloc, void *graph, const int *nid, const int *lid) {
    static reserve_fn real = 0;
    if (!real) {
        void *h = dlopen(getenv("SHIM_LIB"), RTLD_NOW | RTLD_LOCAL);
        real = (reserve_fn)dlsym(h, "ggml_gallocr_reserve_n");
        OPN = (opname_fn)dlsym(h, "ggml_op_name");
    }
    reorder((struct cg *)graph);
    return real(galloc, graph, nid, lid);
}
typedef void (*reserve_size_fn)(void *, void *, const int *, const int *, size_t *);
void ggml_gallocr_reserve_n_size(void *galloc, void *graph, const int *nid, const int *lid, size_t *sizes) {
    static reserve_size_fn real = 0;
    if (!real) {
        void *h = dlopen(getenv("SHIM_LIB"), RTLD_NOW | RTLD_LOCAL);
        real = (reserve_size_fn)dlsym(h, "ggml_gallocr_reserve_n_size");
        OPN = (opname_fn)dlsym(h, "ggml_op_name");
    }
    reorder((struct cg *)graph);
    real(galloc, graph, nid, lid, sizes);
}
