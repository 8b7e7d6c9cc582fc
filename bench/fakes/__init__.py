"""Fakes the benchmarks run against (and the tests share): an OpenAI-compatible server scripted by functions, and
llama.cpp's server started with the bundled test model."""
