"""Adversarial speech acts read by their structure (see :mod:`processor._stance_patterns`
for how families are searched): a bypass asked for without naming the check ("without the
usual steps"), an order given in the first person ("I'm instructing you to"), a bare
imperative to override, a record asked to say what the person admits is untrue ("... even
though it isn't"), a request for *anyone's* records, and secrecy asked for ("don't tell
anyone", "off the record"). Names shared with :mod:`processor._stance_adversarial` count
once per ask, so these add reach, not weight, where both match.
"""

from __future__ import annotations

from processor._stance_family import family

ADVERSARIAL_ACTS = (
    family("adversarial", "bypass_unnamed", 2.0, r"""
        \b(?:without|skip(?:ping)?|bypass(?:ing)?|cut(?:ting)?|around)\s+(?:the\s+|all\s+(?:the\s+)?|
        any\s+(?:of\s+the\s+)?|your\s+)?(?:usual|normal|standard|regular|whole|formal|official|
        internal)\s+(?:steps|process|processes|procedure|procedures|checks|verification|rules|
        red\ tape|hoops|formalities|channels|protocol|protocols)\b(?![^.!?]{0,60}\?)""",
           cues="without skip skipping bypass bypassing cut cutting around",
           needs="usual normal standard regular whole formal official internal"),
    family("adversarial", "instructing_you", 1.0, r"""
        \bi'?m\s+(?:hereby\s+)?(?:instructing|ordering|directing|authori[sz]ing|commanding)\s+
        you\s+to\b|\bi\s+(?:hereby\s+)?(?:instruct|order|direct|authori[sz]e|command)\s+you\s+
        to\b""", cues="instructing ordering directing authorising authorizing commanding instruct "
                      "order direct authorise authorize command"),
    family("adversarial", "override_rules", 1.25, r"""
        (?:^|[,.;!:\u2014-]\s*|\b(?:just|please|so|and|then)\s+)(?:override|overrule|force)\s+
        (?:it|this|that|them|the\ (?:system|block|error|flag|decision|rule|limit))\b""",
           cues="override overrule force"),
    family("adversarial", "falsify", 2.0, r"""
        \b(?:as|say|says|mark|put|record|log|list|enter|claim|call|show|file|note)\b
        [^.?!]{0,50}?\beven\ (?:though|if)\s+(?:it|i|he|she|that|we|they|there|this)\s+
        (?:\w+\s+)?(?:isn'?t|wasn'?t|is\ not|was\ not|didn'?t|did\ not|don'?t|do\ not|hasn'?t|
        haven'?t|weren'?t|aren'?t|never)\b""", cues="even", needs="though if"),
    family("adversarial", "others_data", 2.0, r"""
        \b(?:anyone|anybody|someone\ else|somebody\ else|other\ (?:customers|passengers|users|
        people|members|guests))(?:'s|s'|')\s+(?:\w+\s+)?(?:reservations?|bookings?|accounts?|
        details|data|information|info|address(?:es)?|numbers?|records?|history|bills?|lines?|
        orders?|tickets?|files?)\b""",
           cues="anyone's anybody's else's customers' passengers' users' people's members' "
                "guests' customers passengers users people members guests anyone anybody else"),
    family("adversarial", "secrecy", 1.25, r"""
        \bdon'?t\ (?:tell|mention\ (?:it|this)\ to|let)\s+(?:anyone|anybody|your\ (?:manager|
        supervisor|boss|team|colleagues)|them)\b(?!\s+know\ (?:how|when|if|whether))
        |\bkeep\ (?:this|it)\ (?:between\ (?:us|you\ and\ me)|off\ the\ record|quiet|
        (?:our\ )?(?:little\ )?secret)\b|\boff\ the\ record\b|\bunder\ the\ table\b""",
           cues="tell mention let keep off under"),
)
"""Adversarial acts read by their structure."""
