// Gives every ggml buffer type a maximum size, as ggml-vulkan's suballocation block does (1 GiB), so that the pinned
// binding's ggml-alloc splits its graphs into chunks on the CPU: ggml-alloc calls the exported
// ggml_backend_buft_get_max_size through the PLT, so a preloaded definition takes its place.
//   gcc -O1 -shared -fPIC -o max_buffer_size.so max_buffer_size.c
//   MAX_BUFFER_SIZE=1073741824 LD_PRELOAD=./max_buffer_size.so python <a script that creates a llama.cpp context>
// tests/test_llamacpp_vulkan_chunks.py holds the "compute buffer size" lines it printed (gpt-oss-20b, -fa off).
#include <stdint.h>
#include <stdlib.h>

size_t ggml_backend_buft_get_max_size(void * buft) {
    (void)buft;
    const char * s = getenv("MAX_BUFFER_SIZE");
    return s && *s ? (size_t)strtoull(s, NULL, 10) : SIZE_MAX;
}
