"""The package's own machinery, shared by every layer (private).

* :mod:`~langmem_layers._core.steps`: one core per operation, run sync or async;
* :mod:`~langmem_layers._core.checks`: argument checks for the public constructors;
* :mod:`~langmem_layers._core.retry` and :mod:`~langmem_layers._core.llm`: the layers' own
  model calls, bounded in time;
* :mod:`~langmem_layers._core.background`: the one background executor, owned by
  :class:`~langmem_layers.MemoryLayers`;
* :mod:`~langmem_layers._core.stores`: paged reads of a store namespace, alike on every backend;
* :mod:`~langmem_layers._core.text`: the text toolkit every layer reads conversations with;
* :mod:`~langmem_layers._core.lazy`: lazy re-exports for package faces.
"""
