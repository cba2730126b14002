"""The editor server (``jaxlint server``, LSP over stdio): lsp.py holds the handlers, convert.py
turns findings and fixes into LSP's diagnostics and edits. Needs pygls (the ``server``
extra: ``pip install -e ".[server]"`` in a clone)."""
