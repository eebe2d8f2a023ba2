"""The building blocks of the stance patterns: :class:`Family`, the cue index words, the
regex vocabularies the families share, and :func:`tokens`.

See :mod:`processor._stance_patterns` for how the families are searched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from processor._regex_literals import required_literals


@dataclass(frozen=True)
class Family:
    """One intent pattern of one stance."""

    stance: str
    """The stance it is evidence for."""
    name: str
    """A short name (shown by :func:`processor.stance.stance_evidence`)."""
    weight: float
    """What a match adds to the stance's score (negative for a guard)."""
    pattern: re.Pattern[str]
    """Searched in the lower-cased ask."""
    cues: frozenset[str]
    """Words one of which every match contains (see :data:`_CUES`)."""
    marks: tuple[str, ...]
    """Or strings one of which every match contains; no cues and no marks: always
    searched."""

    needs: frozenset[str] = frozenset()
    """And, when not empty, words one of which every match also contains."""
    literals: tuple[str, ...] | None = None
    """Strings one of which every match contains, read from the pattern itself
    (:func:`processor._regex_literals.required_literals`); None: no short list. A cheap
    test that skips the search when none is in the ask (the search would find nothing)."""


def family(stance: str, name: str, weight: float, pattern: str,
            cues: str | None = None, needs: str = "") -> Family:
    cues_ = (_CUES.get(name, "") if cues is None else cues).split()
    compiled = re.compile(pattern, re.VERBOSE)
    return Family(stance, name, weight, compiled,
                  frozenset(cue for cue in cues_ if cue[0].isalnum()),
                  tuple(cue.lstrip("~").replace("_", " ") for cue in cues_
                        if not cue[0].isalnum()), frozenset(needs.split()),
                  required_literals(compiled))


def tokens(lowered: str) -> frozenset[str]:
    """The words of a lower-cased ask, as the cue sets are written (hyphens split words)."""
    words = lowered.translate(_SPACES).split()
    if "'" in lowered:  # quotes around a word: 'one per customer'
        words = [word.strip("'") for word in words]
    return frozenset(words)


_SPACES = str.maketrans({char: " " for char in "!\"#$%&()*+,-./:;<=>?@[]^_{|}~\u2014\u2013"})


BYPASS_WORDS = ("ignore disregard forget bypass skip override overrule get work circumvent "
                 "sidestep waive drop lift remove turn switch disable suspend relax bend "
                 "break set ditch throw scrap")
CHECK_WORDS = (
    "checks check verification verifying verify id identity kyc security authentication "
    "authenticate authorisation authorization 2fa mfa otp code pin password inspection credit "
    "background screening approval sign signoff off waiting age warrant login logon "
    "log two step 2 captcha fraud cooling hold limit paperwork documentation documents "
    "signature")
"""Cues of the checks branch of ``skip_checks`` (the checked thing is named)."""

POSSESSIVES = (
    "neighbour's neighbor's neighbours neighbors ex's husband's wife's partner's "
    "boyfriend's girlfriend's boss's manager's coworker's worker's colleague's roommate's "
    "flatmate's landlord's tenant's brother's sister's cousin's friend's mother's "
    "father's mum's mom's dad's son's daughter's else's customer's guest's patient's "
    "passenger's user's member's client's person's parents friends colleagues caller's "
    "holder's cardholder's policyholder's resident's customers patients guests passengers")
"""Cues of the possessive branch of ``others_data``."""

_CUES: dict[str, str] = {
    # Words at least one of which every match of the family contains (as a whole token of
    # the lower-cased ask): the family's regex runs only when one is there. Python's re
    # tries every branch of a large alternation at every position (tens of µs per ask);
    # a set intersection is well under one. tests/processor/test_stance.py checks that no
    # cue set hides a match.
    "override_rules": BYPASS_WORDS,
    "dont_follow_rules": "follow follows following followed apply applying applies stick "
                         "sticking obey obeying going go enforce enforcing enforced enforces "
                         "enforcement bother bothering bothered worry worried worrying care "
                         "cares caring applied whatever any damned aside hide hiding "
                         "screw forget damn",
    "secrecy": "nobody noone one anyone computer system boss they between off secret quiet "
               "soul table hush wins",
    "persona_jailbreak": "now act pretend roleplay role developer devmode dan jailbreak "
                         "jailbroken unfiltered uncensored unrestricted restrictions filters "
                         "limits guardrails persona forget longer you're youre work answer "
                         "working side",
    "injection_markup": "< [ : ### {{ mode access command privileges override "
                        "instructions instruction end "
                        "maintenance override new end",
    "injected_document": "follow obey use apply instead assistant",
    "authority_demand": "authorise authorize approve grant sign push put force rush give get "
                        "override",
    "vip_entitlement": "everyone everybody bend exception once special vip vips know deserve",
    "coerce_threat": "if unless or otherwise call warned consequences",
    "harmful_content": "ransomware malware keylogger spyware botnet phishing skimmer exploit "
                       "zero ddos crack steal make build license licence serial keygen "
                       "pirated untraceable",
    "abuse_offer": "single one once first coupons codes vouchers one",
    "just_approve": "just simply yes approve log mark record call say",
    "topic_guard": "how explain what what's defend protect prevent detect mitigate guard "
                   "test secure sanitize sanitise avoid write review design structure best",
    "policy_question": "programming training tape formality formalities usual earlier "
                        "window period deadline deadlines cutoff cut limit "
                        "previous prior above initial setup original filters filter "
                        "safeguards safeguard guardrails guardrail limitations limitation "
                        "constraints constraint rule rules policy policies guideline guidelines "
                        "restriction "
                        "restrictions instruction instructions protocol protocols procedure "
                        "procedures script scripts limit limits terms regulation "
                        "regulations requirement requirements",
    "emotion": "ridiculous unacceptable useless terrible horrible awful appalling atrocious "
               "pathetic disgrace disgraceful disgraced disgusting outrageous absurd "
               "incompetent shambles joke nightmare infuriating maddening unbelievable "
               "fuming furious livid angry annoyed irritated upset frustrated frustrating "
               "frustration frustrates frustratingly exhausted fed sick tired had enough wits "
               "beyond "
               "losing driving worst rubbish garbage trash crap shocking insane disappointed "
               "fed-up believe disgusted appalled horrified outraged enraged seething gutted "
               "raging "
               "pissed unhappy dissatisfied happy shocked done give straw had patience temper",
    "you_keep": "keep keeps kept stop hours hrs days weeks months",
    "interjection": "omg ~ugh ~argh ffs wtf smh fml jeez geez god's gods "
                    "crying grief break",
    "urgent_predicate": "urgent urgently",
    "urgent_noun": "urgent",
    "caps_disclaimer": "caps capitals shout shouting",
    "soft_hedge": "maybe perhaps possibly probably might could think believe guess suppose "
                  "assume kind sort something so somewhere sometime somehow ~ish ~hmm know",
    "either_or": "or either could",
    "self_doubt": "question sorry good hopeless terrible useless bad great rubbish lost confused "
                  "clueless overwhelmed may might sense "
                  "doing reading understanding fully really quite",
    "confident_premise": "law legally known knows always free asked refund give honour must "
                         "honor accept supposed count work guaranteed automatically pull "
                         "rule policy instant included covered automatic refunded void "
                         "invalid illegal binding unenforceable guarantee",
    "tag_question": "right correct yes no yeah isn't aren't wasn't don't doesn't didn't "
                    "can't won't weren't haven't",
    "entitled_demand": "take knock so want where's",
    "but_also_opposite": "also still don't dont not can't cannot won't same nothing "
                         "changing keep",
    "opposites": "floor keep cheapest together separately public private only paperless non "
                 "standby waitlist wait female male man woman "
                 "shorten reduce lower extend increase raise one backward backwards "
                 "both no without",
    "end_but_still": "still",
    "deliver_but_not": "but",
}


# --- shared vocabularies (regex fragments) -----------------------------------------------

NOT = r"(?:don'?t|do\ not|dont|doesn'?t|does\ not|never|no\ need\ to|not\ going\ to|won'?t)"
NOT_BEFORE = (r"(?<!don't\ )(?<!dont\ )(?<!not\ )(?<!never\ )(?<!won't\ )(?<!shouldn't\ )"
               r"(?<!mustn't\ )(?<!cannot\ )(?<!can't\ )(?<!please\ don't\ )")
"""A bypass verb right after a negation is a request to keep the rule."""
RULES = (r"(?:rules?|polic(?:y|ies)|guidelines?|restrictions?|instructions?|protocols?|"
          r"procedures?|scripts?|safeguards?|guardrails?|filters?|limits?|limitations?|"
          r"programming|training|terms\ (?:and|&)\ conditions|t\ ?&\ ?cs|terms|regulations?|"
          r"requirements?|constraints?|"
          r"the\ usual\ (?:process|steps|stuff)|red\ tape|(?:small|fine)\ print|"
          r"formalit(?:y|ies)|"
          r"(?:return|refund|cancellation|booking|grace)\ (?:window|period|deadline)|"
          r"time\ limits?|cut-?off|deadlines?|"
          r"(?:earlier|previous|prior|above|initial|setup|original)\ (?:text|message|setup|"
          r"prompt|context|directions?))")
CHECKS = (r"(?:checks?|verification|verifying|verify|id|identity|kyc|security|"
           r"authenti\w+|2fa|mfa|otp|one-time\ code|pin|password|inspection|"
           r"credit\ check|background\ check|screening|approval|sign-?off|"
           r"waiting\ period|age\ (?:check|limit|requirement)|log-?in|logon|sign-?in|"
           r"paperwork|documentation|supporting\ documents|signature|"
           r"two-(?:step|factor)|2-step|captcha|fraud\ (?:check|review|screening|hold|block|flag)|"
           r"cooling-off\ period|hold\ period|credit\ limit|spending\ limit)")
BYPASS = (r"(?:ignore|disregard|forget(?:\ about)?|bypass|skip|override|overrule|"
           r"get\ around|work\ around|circumvent|sidestep|waive|drop|lift|remove|"
           r"turn\ off|switch\ off|disable|suspend|relax|bend|break|set\ aside|ditch|"
           r"throw\ out|scrap)")
PEOPLE = (r"(?:neighbou?r|ex|ex-wife|ex-husband|husband|wife|partner|boyfriend|girlfriend|"
           r"boss|manager|coworker|co-worker|colleague|roommate|flatmate|landlord|tenant|"
           r"brother|sister|cousin|friend|mother|father|mum|mom|dad|son|daughter|"
           r"someone\ else|somebody\ else|another\ (?:customer|guest|patient|passenger|"
           r"user|member|client|person)|customer|patient|guest|passenger|client|caller|"
           r"account\ holder|cardholder|policyholder|resident)")
PRIVATE = (r"(?:passwords?|pins?|logins?|credentials|account|records?|notes|file|"
            r"medical|history|diagnosis|results?|prescriptions?|address|phone\ number|"
            r"number|location|room(?:\ number)?|balance|transactions?|statements?|"
            r"messages?|emails?|bookings?|reservations?|itinerary|details|data|"
            r"card|whereabouts|schedule|texts|call\ log|orders?|purchases?|savings|funds|"
            r"money|pension|wallet|benefits|salary|payslips?|inbox|photos|chart|file|"
            r"test\ results|scans|security\ (?:answers?|questions?)|memorable\ (?:word|"
            r"information))")
EMOTION = (r"(?:ridiculous|unacceptable|useless|terrible|horrible|awful|appalling|"
            r"atrocious|pathetic|disgrac\w+|disgusting|outrageous|absurd|incompetent|"
            r"shambles|joke|nightmare|infuriating|maddening|unbelievable|"
            r"fuming|furious|livid|angry|annoyed|irritated|upset|frustrat\w+|"
            r"exhausted|fed\ up|sick\ (?:and\ tired|of)|so\ tired\ of|tired\ of|"
            r"had\ enough|enough\ is\ enough|at\ my\ wits'?\ end|beyond\ (?:a\ )?joke|"
            r"losing\ my\ (?:mind|patience|temper)|driving\ me\ (?:mad|crazy|nuts|insane)|"
            r"worst|rubbish|garbage|trash|crap|shocking|insane|seriously\ disappointed|"
            r"very\ disappointed|so\ disappointed|disappointed|fed-up|can'?t\ believe|"
            r"cannot\ believe|disgusted|appalled|horrified|outraged|enraged|seething|gutted|"
            r"raging|pissed|unhappy|dissatisfied|not\ happy|shocked|fed\ up|i'?m\ done|"
            r"i\ give\ up|last\ straw|i'?ve\ had\ it|(?:losing|lost|out\ of)\ (?:my\ )?patience|"
            r"running\ out\ of\ patience|(?:losing|lost)\ my\ temper)")
CONTACT = (r"(?:asked|called|rung|rang|phoned|written|wrote|emailed|messaged|chatted|"
            r"contacted|explained|reported|complained|been\ transferred|been\ told|"
            r"opened|raised|submitted|sent|tried|requested|chased|reached\ out)")
ORDINAL = (r"(?:third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|umpteenth|"
            r"(?:[3-9]|\d\d+)(?:st|nd|rd|th)|n-?th|hundredth|millionth)")
COUNT = r"(?:three|four|five|six|seven|eight|nine|ten|several|multiple|many|\d+)"
TIME_UNIT = r"(?:secs?|seconds?|mins?|minutes?|hrs?|hours?)"
SMALL_NUMBER = r"(?:\d{1,3}|a|an|one|two|three|five|ten|fifteen|twenty|thirty|forty)"
