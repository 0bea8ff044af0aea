"""Offline extraction: regular expressions over user messages, and a small learned store-worthiness model
for the clauses no rule reads (`learned`, `..worthiness`: a logistic regression over the bundled static
embedding, weights shipped in the package; no I/O beyond loading them).

Precision comes before recall: a sentence that is a question, a hypothetical, reported speech,
code, an error message or small talk yields nothing (`..skip`), except the statement it opens with
("I keep bees, any tips?") or a clause it asks to be reminded of ("remind me what day Rachel and I
meet"); each rule needs an explicit cue ("I live in", "my manager Sarah", "remind me to", a date plus
an event verb...). A first-person clause no rule reads goes to the general path (`self_statements`,
filtered by `..disclosure`); a clause whose subject is not the speaker may still show what the speaker
has or likes (`possessions`: "my 2018 Honda Civic", "X are my main hobbies"). The general path also
keeps a plan the speaker is weighing when its verb names it ("I'm thinking of expanding my product line",
"we're considering adopting a dog": a statement, never an event or a routine) and something tried out
("I'm trying kundalini yoga"); a discourse marker ("You know, ...") does not hide the speaker, and a date
before the subject ("Last week, I ...") dates the statement.

Conventions the labelled benchmark follows:
- "remember that X" yields the structured candidate for X when a rule recognizes X
  (an identity, relation or preference); otherwise a `request` note holding X (`requests`).
- A sentence that states an identity, preference, birthday or open item is not also an event;
  naming a relative ("my friend Kofi ...") does not stop the rest of the sentence being an event.
- Dates in content are rewritten to absolute dates resolved against the message time (`..render`).

Layout: `extractor` runs the rules over the clauses `..segment` yields; one module per category
(`identity`, `relations`, `preferences` with `instructions` and `topics`, `open_items`, `requests`,
`events`, `self_statements`, `possessions`, `learned`); `clause` holds what they share. Word lists and pattern
fragments: `..lexicon`.
"""

from ..render import third_person
from .extractor import RuleExtractor

__all__ = ["RuleExtractor", "third_person"]
