"""Ground truth from the engines themselves (llama.cpp through llama-cpp-python).

`synth` writes GGUF headers that carry real models' tensor names, shapes and types (the data is a sparse
hole); `llamacpp_run` loads a GGUF in a subprocess and returns the buffer sizes llama.cpp logs.
"""
