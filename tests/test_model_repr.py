"""The model, the decode records and the assembly state share one repr (``model.field_repr``) instead of
one generated per class: it reads exactly as the repr ``dataclasses`` generates."""

from __future__ import annotations

import dataclasses

from transcript_reader import model
from transcript_reader.assembly import state
from transcript_reader.model import FileChange, UserMessage
from transcript_reader.providers import records
from transcript_reader.providers.records import Decoded, Message


def test_the_shared_repr_reads_as_the_generated_one() -> None:
    assert repr(UserMessage(line=1, text="x")) == (
        "UserMessage(line=1, timestamp=None, turn_id=None, truncated_chars=0, text='x', images=())")
    assert repr(Decoded(3, "decoded", records=(Message("user", "hi", "event"),))) == (
        "Decoded(line=3, cls='decoded', type_name=None, records=(Message(role='user', text='hi', src='event', "
        "images=(), phase=None, refusal=False, context_label=None),), timestamp=None, reason=None, cut=False, count=1, "
        "ordinal=None, thread=None, turn=None, other=None)")
    # the same text as a dataclass with its generated repr
    generated = dataclasses.make_dataclass("FileChange", [(f.name, f.type, f) for f in dataclasses.fields(FileChange)])
    fc = FileChange(path="a.py", op="update", added=2)
    assert repr(fc) == repr(generated(**{f.name: getattr(fc, f.name) for f in dataclasses.fields(fc)}))


def test_every_dataclass_of_those_modules_has_it() -> None:
    for mod in (model, records, state):
        classes = [c for c in vars(mod).values() if isinstance(c, type) and dataclasses.is_dataclass(c)
                   and c.__module__ == mod.__name__]
        assert classes
        assert all(c.__repr__ is model.field_repr for c in classes), mod.__name__
