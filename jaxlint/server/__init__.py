"""The editor server (``jaxlint server``, LSP over stdio): lsp.py holds the handlers, convert.py
turns findings and fixes into LSP's diagnostics and edits. Needs pygls (``pip install jaxlint[server]``)."""
