"""`nap-builder view`: one self-contained HTML file to browse what the gate decided per step.

`data` gathers each step's rows from the run tables into compact JSON-able dicts; `write`
embeds them with the inline script and style (`assets/`) into one offline page.

Reads: the run folder's tables (and `eval/`). Writes: one HTML file.
Entry point: `builder.view.write.write_view`.
"""
