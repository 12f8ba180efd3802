// Writes every graph llama.cpp hands to ggml-alloc's reserve (ggml_gallocr_reserve_n / _n_size), leafs then nodes
// in the order ggml-alloc walks them, one tensor a line: kind (L / N), address, op, ggml_nbytes, flags, whether it
// already has a buffer (a weight or a cache), its view source, name, type, ne, nb and its sources' addresses. The
// pinned binding's libggml-base calls both through the PLT, so a preloaded definition takes their place; the real
// ones are looked up in libggml-base itself (the binding loads it RTLD_LOCAL, out of RTLD_NEXT's reach).
//   gcc -O1 -shared -fPIC -o gallocr_dump.so gallocr_dump.c -ldl
//   DUMP_DIR=/tmp/g LD_PRELOAD=./gallocr_dump.so python tests/groundtruth/llamacpp_run.py FILE.gguf -c 8192 --no-cache
// Lowered to galloc.Node (size 0 for views and buffered tensors, in place for galloc.INPLACE_OPS, outputs by flag 2)
// and replayed through galloc.placement, each dump gives the compute buffer llama.cpp prints and every node's offset:
// how compute_graphs.falcon_h1_graph / jamba_graph / nemotron_h_graph were checked node for node.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct ggml_tensor {  // ggml.h at llama.cpp@0c1e57098 (GGML_MAX_DIMS 4, GGML_MAX_OP_PARAMS 64, GGML_MAX_SRC 10)
    int type; void * buffer; int64_t ne[4]; size_t nb[4]; int op; int32_t op_params[16]; int32_t flags;
    struct ggml_tensor * src[10]; struct ggml_tensor * view_src; size_t view_offs; void * data; char name[64];
    void * extra; char padding[8];
};
struct ggml_cgraph {  // ggml-impl.h
    int size; int n_nodes; int n_leafs; struct ggml_tensor ** nodes; struct ggml_tensor ** grads;
    struct ggml_tensor ** grad_accs; struct ggml_tensor ** leafs;
};

static void * base(void) {
    static void * h;
    if (!h) h = dlopen("libggml-base.so.0", RTLD_NOLOAD | RTLD_LAZY);
    return h;
}

static void dump(struct ggml_cgraph * g) {
    static int counter;
    static size_t (*nbytes)(const struct ggml_tensor *);
    static const char * (*op_name)(int);
    const char * dir = getenv("DUMP_DIR");
    if (!dir) return;
    if (!nbytes) { nbytes = dlsym(base(), "ggml_nbytes"); op_name = dlsym(base(), "ggml_op_name"); }
    char path[512];
    snprintf(path, sizeof path, "%s/g%03d.txt", dir, counter++);
    FILE * f = fopen(path, "w");
    if (!f) return;
    for (int k = 0; k < 2; k++) {
        int n = k ? g->n_nodes : g->n_leafs;
        struct ggml_tensor ** a = k ? g->nodes : g->leafs;
        for (int i = 0; i < n; i++) {
            struct ggml_tensor * t = a[i];
            fprintf(f, "%c %p %s %zu %d %d %p [%s] t%d ne=%ld,%ld,%ld,%ld nb=%zu,%zu,%zu,%zu :", k ? 'N' : 'L',
                    (void *)t, op_name(t->op), nbytes(t), t->flags, t->buffer != NULL, (void *)t->view_src, t->name,
                    t->type, (long)t->ne[0], (long)t->ne[1], (long)t->ne[2], (long)t->ne[3], t->nb[0], t->nb[1],
                    t->nb[2], t->nb[3]);
            for (int j = 0; j < 10; j++) if (t->src[j]) fprintf(f, " %p", (void *)t->src[j]);
            fprintf(f, "\n");
        }
    }
    fclose(f);
}

bool ggml_gallocr_reserve_n(void * galloc, struct ggml_cgraph * g, const int * node_ids, const int * leaf_ids) {
    static bool (*real)(void *, struct ggml_cgraph *, const int *, const int *);
    if (!real) real = dlsym(base(), "ggml_gallocr_reserve_n");
    dump(g);
    return real(galloc, g, node_ids, leaf_ids);
}

void ggml_gallocr_reserve_n_size(void * galloc, struct ggml_cgraph * g, const int * node_ids, const int * leaf_ids,
                                 size_t * sizes) {
    static void (*real)(void *, struct ggml_cgraph *, const int *, const int *, size_t *);
    if (!real) real = dlsym(base(), "ggml_gallocr_reserve_n_size");
    dump(g);
    real(galloc, g, node_ids, leaf_ids, sizes);
}
