"""Fakes the benchmarks run against (and the tests share): an OpenAI-compatible server scripted by functions,
llama.cpp's server started with the bundled test model, and a pipeline that answers at once."""
