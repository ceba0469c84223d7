"""Free-form post-mortems into the labeled template: reading files and exports into source documents,
and extracting each template field with the source span it came from.

``document.SourceDocument`` is one post-mortem as plain text (after the readers' HTML, CSV or JSON
decoding); ``extract.extract`` fills the template's fields from it by rules alone (headings first, then
the roles of sentences in prose without headings); ``draft.draft_row`` turns the result into an import
row a person reviews before memory takes it.

May import the rest of ``memory`` and third-party libraries; never ``incidents``, ``agent``, ``web`` or
``evals``.
"""
