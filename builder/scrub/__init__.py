"""Secret detection and redaction for the run folder's tables, model requests and published data.

- `rule`: what a detector is, and the value checks (reference, placeholder, type name).
- `token_formats`: credentials known by their shape (detect-secrets plugin regexes, its JWT
  validator, and the formats it lacks: LLM providers, registries, newer chat tokens).
- `vendor_formats`: more vendor token formats (the shapes gitleaks' ruleset encodes, as our
  own patterns).
- `families`: kinds no list names yet: any vendor-prefixed random token, a token as a URL's
  user name, the token of a login command.
- `keys`: private key blocks (PEM variants, PGP, SSH2, PuTTY), whole or truncated.
- `context`, `auth_context`: secrets known by where they stand (URLs, headers with any
  scheme, env, YAML, INI, code, command lines such as `curl -u` and `docker login -p`), with
  detect-secrets' keyword list and its entropy plugins (`entropy`) tuned for digests.
- `scrubber`: the `Scrubber` that applies the rules to text and walks records; `settings`:
  where a run scrubs (at ingest by default).

Token patterns match whole words only, values never include quotes or backslashes, and the
replacement (`[REDACTED:<kind>]`) has none either, so JSON text (tool-call arguments) stays
valid JSON after scrubbing.

Reads: any text or record. Writes: nothing (redacted copies).
Entry point: `builder.scrub.scrubber.Scrubber`.
"""

from builder.scrub.rule import PLACEHOLDER, Rule
from builder.scrub.scrubber import DEFAULT_RULES, EMAIL_RULE, Scrubber, scrub_message

__all__ = ["DEFAULT_RULES", "EMAIL_RULE", "PLACEHOLDER", "Rule", "Scrubber", "scrub_message"]
