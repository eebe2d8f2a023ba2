"""Build configuration that pyproject.toml cannot hold: the compiled OTLP trace decoder.

``pip install -e .`` (or any install) compiles ``collector/_fastdecode.c`` with the
system's C compiler against the running Python's headers. The extension is optional: if it
cannot be built the install still succeeds and the collector decodes in pure Python (about
four times slower; ``tracemill serve`` says so when it starts).
"""

from setuptools import Extension, setup

setup(ext_modules=[
    Extension("collector._fastdecode", ["collector/_fastdecode.c"],
              extra_compile_args=["-O2", "-std=c11"], optional=True),
])
