"""Fix builders: the text edits rules attach to findings (applied and verified by
jaxlint.engine.fixer; the edit arithmetic is in jaxlint.text)."""
