"""What an ask says about earlier attempts: the history axis reads it (``repeat_visit``,
``prior_failure``, ``prior_partial_action``; :mod:`processor.axes`), so the learned stance
reader does not (:func:`processor.stance_learned.normalise`): a calm "I'm asking again" or
"it didn't go through before" is history, not frustration, and one cue should not move
two axes.

**An earlier contact** (``repeat_visit``) is a contact: the person says they were in touch
before (a call, a chat, a message, a visit, a ticket, what staff said or promised). The
word "again" alone is not one: most asks that use it speak of a fault that recurs ("the
internet dropped again"), a wish ("I want line L1004 working again"), or what should not
recur ("so it doesn't happen again"). The first version read any "again", "last time",
"still not" and "second time" as a repeat visit; on a tau2 stream (seed 417, test2
openings) 136 of 3,000 asks read so, nearly all of them without a contact, and one tool's
ask template ("I want line ... working again") made a second situation beside a frustrated
group. The cue now needs a word of contact near it: measured on independently written,
labelled asks by ``bench/history_cues.py`` (``bench/data/history/``).

The stance reader keeps the cues it was trained with (:data:`READER_CUES`): it leaves them
out of the text it reads, and changing what it reads would change the reader that the
shipped weights, and the confusions measured for them, describe.
"""

from __future__ import annotations

import hashlib
import re

_CONTACT_VERB = (
    r"(?:contact(?:ed|ing)?|call(?:ed|ing)?|phon(?:ed|ing)|rang|ringing|writ(?:e|ing|ten)|"
    r"wrote|messag(?:e|ed|ing)|chat(?:ted|ting)?|e-?mail(?:ed|ing)?|ask(?:ed|ing)?|"
    r"explain(?:ed|ing)?|told|tell(?:ing)?|report(?:ed|ing)?|rais(?:e|ed|ing)|"
    r"complain(?:ed|ing)?|spoke|spoken|speak(?:ing)?|reach(?:ed|ing)? out|been in touch|"
    r"got in touch|been on the phone|visited)")
"""Verbs of getting in touch (and of what one does in a contact: asking, explaining,
reporting)."""
_SENT = r"(?:sent|send|submitted|uploaded|provided|given|forwarded|filled in|filed)"
"""Verbs of handing something to the company: a contact only when done before ("twice",
"last week")."""
_NTH = (r"(?:second|third|fourth|fifth|sixth|seventh|2nd|3rd|4th|5th|6th|7th|umpteenth|nth|"
        r"\d+th)")
_DAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_MONTH = (r"(?:january|february|march|april|may|june|july|august|september|october|november|"
          r"december)")
_WHEN = (r"(?:already|earlier|previously|last (?:week|month|time|night)|yesterday|twice|"
         r"(?:three|four|five|several|multiple|many|a few|\d+) times|this morning|"
         r"on " + _DAY + r"|on (?:the )?\d{1,2}(?:st|nd|rd|th)?\b(?!\d)|in " + _MONTH + r"|"
         r"(?:a|an|one|two|three|four|five|six|several|a few|\d+) (?:hours?|days?|weeks?|"
         r"months?) ago|before(?=\s*(?:[.,!?;:]|$|about|and|but|regarding)))")
_STAFF = (r"(?:colleague|agent|rep|representative|advisor|adviser|operator|team|support|staff|"
          r"person|lady|guy|man|woman|technician|engineer|nurse|receptionist|manager|assistant|"
          r"clerk|call cent(?:re|er)|helpline|hotline|customer service)")

_VERB_HINTS = ("contact", "call", "phon", "rang", "ringing", "writ", "wrote", "messag", "chat",
               "mail", "ask", "explain", "told", "tell", "report", "rais", "complain", "spok",
               "speak", "reach", "touch", "visit", "sent", "send", "submit", "upload", "provid",
               "given", "forward", "fill", "filed")
_WHEN_HINTS = ("already", "earlier", "previous", "last ", "yesterday", "twice", "times",
               "this morning", "day", "on ", "in ", " ago", "before")
_NTH_HINTS = ("second", "third", "fourth", "fifth", "sixth", "seventh", "2nd", "3rd", "4th",
              "5th", "6th", "7th", "umpteenth", "nth", "0th", "1th", "2th", "3th", "4th",
              "5th", "6th", "7th", "8th", "9th")
_NTH_OF = ("message", "mail", "call", "chat", "complaint", "ticket", "letter", "request",
           "attempt", "time")
_BRANCHES: tuple[tuple[tuple[tuple[str, ...], ...], str], ...] = (
    # "hello again", "hi again", "me again", "back again", "here again"; "I'm asking again",
    # "writing to you again", "called you again"
    ((("again",),),
     r"\b(?:hello|hi|hey)[\s,.!]+again\b|\b(?:it'?s |it is )?me again\b"
     r"|\b(?:i'?m|i am|we'?re|we are) (?:back|here) again\b"
     rf"|\b{_CONTACT_VERB}\b(?:\s+[\w']+){{0,4}}?\s+again\b"),
    # "I already called", "I've previously raised this"
    ((("already", "previously"),),
     rf"\b(?:already|previously)\s+(?:have\s+|had\s+)?(?:{_CONTACT_VERB}|{_SENT})\b"),
    # "I called yesterday", "asked about this twice", "sent the photos three times"
    ((_VERB_HINTS, _WHEN_HINTS),
     # (a verb, not the noun: "my email is ... i thought you had already agreed")
     rf"\b(?<!before )(?<!after )(?<!until )(?<!my )(?<!your )(?<!the )(?<!an )(?<!a )"
     rf"(?<!by )(?<!via )(?:{_CONTACT_VERB}|{_SENT})\b"
     rf"(?:\s+[\w'@-]+(?:\.[\w'@-]+)*){{0,6}}?\s+{_WHEN}"),
    # "my third message", "the 4th time I'm asking", "writing for the second time"
    ((_NTH_HINTS, _NTH_OF),
     rf"\b{_NTH} (?:message|email|e-mail|call|chat|complaint|ticket|letter|request|"
     r"attempt to (?:reach|contact))\b"
     rf"|\b{_NTH} time\b(?:\s+[\w']+){{0,3}}?\s+(?:i'?m|i am|i'?ve|i have|i had|we'?ve|"
     rf"we have|that i|i)\s+(?:had\s+to\s+|have\s+to\s+|been\s+)?{_CONTACT_VERB}\b"
     rf"|\b{_CONTACT_VERB}\b(?:\s+[\w']+){{0,4}}?\s+for the {_NTH} time\b"),
    ((("times", "repeat"),),
     r"\bhow many (?:more )?times (?:do|must|should|will|have|did) (?:i|we)\b"
     r"|\brepeat(?:ing)? myself\b"),
    # "last time I called", "last time your colleague said"
    ((("last time",),),
     r"\blast time (?:i|we) (?:called|contacted|spoke|asked|wrote|chatted|messaged|rang|"
     r"emailed|was (?:here|on the phone|in touch))"
     r"|\blast time (?:you|your|someone|an agent|the agent)\b"),
    # "we spoke on Monday", "I spoke with Daniel", "as discussed with your colleague"
    ((("spoke", "chatted", "talked", "had a ", "discussed", "further to", "on the phone",
       "on hold"),),
     r"\b(?:we|i) (?:spoke|chatted|talked|had a chat|had a call)\b"
     r"|\bspoken (?:to|with)\b|\bas discussed\b|\bfurther to (?:our|my|your)\b"
     r"|\bon (?:the phone|hold) (?:with you|to you|for|three|several|\d)"
     r"|\bbeen on hold\b"),
    # "I was promised", "I was told by ...", "you said you would", "your agent promised";
    # a bare "I was told this would be free" is as often a mistaken premise with no contact
    ((("promised", "assured", "told", "said", "replied", "answered", "responded",
       "wrote back", "emailed me", "called me", "closed my", "you people", "confirmed",
       "agreed"),),
     r"\b(?:i was|we were|i've been|i have been|we've been) (?:promised|assured)\b"
     r"|\b(?:i was|we were|i've been|i have been|we've been) told (?:by|on|in|at|over|"
     r"during|when (?:i|we))\b"
     r"|\byou (?:promised|guys promised|told me|told us|said you would|said you'd|assured me|"
     r"replied|answered|responded|wrote back|emailed me|called me|closed my|"
     r"people|guys told|guys said)\b"
     rf"|\b(?:your|the|a|an|one of your) (?:[\w-]+ ){{0,2}}{_STAFF}s?\b[^.!?]{{0,40}}\b"
     r"(?:told|said|promised|assured|confirmed|agreed)\b"),
    # "following up on my ticket", "as I said on the phone", "my previous chat"
    ((("follow", "said", "told you", "mentioned", "explained", "wrote"),),
     r"\bfollowing up\b|\bfollow(?:ing)?[- ]?up (?:on|to) (?:my|our|your|the) (?:call|chat|"
     r"conversation|ticket|request|message|email|e-mail|complaint|case|enquiry|inquiry)"
     r"|\bfollowing (?:my|our) (?:call|chat|conversation|email|e-mail|letter|message|"
     r"complaint|visit)\b"
     r"|\bas (?:i|we) (?:said|told you|mentioned|explained|wrote)\b[^.!?]{0,20}\b(?:before\b"
     r"(?!\s+(?:the|\d))|earlier|last|already|on the phone|in my|previously|yesterday)"
     r"|\bas explained (?:in|on|before|earlier|already|previously)\b"),
    ((("previous", "last", "earlier", "my complaint", "my ticket", "my case", "my email",
       "my e-mail", "my message", "my enquiry", "my inquiry", "my call"),),
     r"\b(?:my|the|our|your) (?:previous|last|earlier) (?:call|chat|conversation|ticket|"
     r"request|message|email|e-mail|complaint|case|reply|response|enquiry|inquiry)s?\b"
     r"|\bmy (?:complaint|ticket|case|email|e-mail|message|enquiry|inquiry|call) (?:from|of|"
     r"dated|on|last)\b"),
    ((("case", "complaint", "ticket", "re:"),),
     r"\b(?:case|complaint|support ticket)\s*(?:number|no\.?|nr\.?|id|ref|#|:)"
     r"|\bre:\s*(?:case|ticket|complaint|my|our|your)\b"),
    ((("still", "heard", "had a", "had an", "got a", "got an", "received"),),
     r"\bstill (?:waiting|no (?:reply|answer|response|word|call ?back|callback)|"
     r"haven'?t heard|have not heard|not heard)"
     r"|\b(?:haven'?t|have not|never) (?:heard (?:back|from|anything|a thing|a word)|"
     r"had an answer|had a reply|got an answer|"
     r"got a reply|received (?:a|an|any) (?:reply|answer|response))\b"),
    ((("one", "nobody"),),
     r"\b(?:no ?one|nobody|noone) (?:has |have |ever )?(?:got|gotten|called|came|come|"
     r"answered|replied|responded|rang|returned)\b(?: back| me| my| to)?"),
    ((("open", "escalat"),),
     r"\b(?:re-?open(?:ing)?|escalat(?:e|ing)) (?:my|this|the|our|it)\b"),
)
"""The contact cue's alternatives, each with groups of words: any text it matches holds one
word of every group (lower case), and :func:`says_contact` runs an alternative only there."""

REPEAT_CONTACT = re.compile("|".join(f"(?:{pattern})" for _, pattern in _BRANCHES), re.I)
"""A first ask that mentions an earlier contact (``repeat_visit``): every alternative in one
pattern (:func:`says_contact` is the same test, faster)."""

_GATED = tuple((groups, re.compile(pattern, re.I)) for groups, pattern in _BRANCHES)


def says_contact(text: str) -> bool:
    """Whether ``text`` mentions an earlier contact: ``REPEAT_CONTACT.search(text)``, with
    each alternative run only on text holding a word of each of its groups: about 28 µs per
    ask against 93 µs for the whole pattern (the stance corpus' 5,315 asks, this machine;
    the cue it replaced, any "again", took 7 µs)."""
    lowered = text.lower()
    return any(pattern.search(text) is not None for groups, pattern in _GATED
               if all(any(hint in lowered for hint in group) for group in groups))


PRIOR_FAILURE = re.compile(
    r"\b(?:tried|attempted|did)\b[^.!?]{0,60}\b(?:before|earlier|already|last time|"
    r"yesterday)\b[^.!?]{0,40}\b(?:fail|didn'?t (?:go through|work)|did not (?:go through|"
    r"work)|error|no luck|never went through)|\b(?:failed|didn'?t go through|did not go "
    r"through|didn'?t work|did not work|never went through|got an error)\b[^.!?]{0,40}"
    r"\b(?:before|earlier|last time|yesterday|when i tried)\b", re.I)
"""An ask that says it was tried before and failed (``prior_failure``)."""
PRIOR_PARTIAL = re.compile(
    r"\b(?:(?:part|some|half) of (?:it|this|that|(?:the|my) (?:order|refund|items?|booking|"
    r"request|change|payment)s?)|only (?:some|part|half))"
    r"\b[^.!?]{0,40}\b(?:done|went through|processed|completed|happened|worked)\b|"
    r"\bpartially (?:done|processed|completed|refunded|cancell?ed|updated)\b", re.I)
"""An ask that says part of it was done before (``prior_partial_action``)."""

HISTORY_CUES = (PRIOR_FAILURE, PRIOR_PARTIAL, REPEAT_CONTACT)
"""Every cue the history axis reads in an ask."""

READER_CUES = (PRIOR_FAILURE, PRIOR_PARTIAL, re.compile(
    r"\bagain\b|already contacted|last time|still not|second time", re.I))
"""The cues the stance reader leaves out of what it reads: those of the history axis when
the shipped reader was trained (the earlier, looser contact cue), kept so that the reader
reads what it was trained on."""


def cues_digest() -> str:
    """A short digest of the history axis's cues: stored conversations read with other cues
    are read again (:func:`processor.run.process`'s fingerprint)."""
    digest = hashlib.sha256()
    for cue in HISTORY_CUES:
        digest.update(cue.pattern.encode())
    return digest.hexdigest()[:12]


def without_history(text: str) -> str:
    """``text`` with what the stance reader leaves to the history axis left out
    (:data:`READER_CUES`)."""
    for cue in READER_CUES:
        text = cue.sub(" ", text)
    return text
