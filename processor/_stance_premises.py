"""Mistaken and conflicting families of the stance detector, and the two conflicting
signals that are code rather than one pattern (see :mod:`processor._stance_patterns`)."""

from __future__ import annotations

import itertools
import re

from processor._stance_family import (
    family,
)

# --- mistaken ----------------------------------------------------------------------------

MISTAKEN = (
    family("mistaken", "told_promised", 1.25, r"""
        \b(?:i\ was|we\ were)\s+(?:\w+\s+)?(?:told|promised|assured|informed|guaranteed|
        quoted)\b(?!\s+to\b)""", cues="told promised assured informed guaranteed quoted"),
    family("mistaken", "told_promised", 1.25, r"""
        \b(?:you|you\ guys|your\ (?:\w+\s+)?(?:agent|rep|colleague|staff|driver|pilot|crew|
        manager|app|site|website|ad|advert|email|text|terms|contract|policy|tracker|
        brochure|page|listing|receipt|confirmation|menu|sign|letter))\s+(?:\w+\s+)?
        (?:promised|promises|guaranteed|guarantees|stated|states|announced|advertised|
        advertises|claims|claimed|offered|offers)\b
        |\bthe\s+(?:agent|rep|email|text|letter|website|site|app|ad|advert|confirmation|
        brochure|driver|pilot|captain|salesman|salesperson|cashier|person\ on\ the\ phone)\s+
        (?:clearly\s+)?(?:promised|said|says|told\ me|guaranteed|stated|states|promises)\b""",
            cues="promised said says told guaranteed stated states announced advertised "
                 "advertises claims claimed offered promises guarantees offers"),
    family("mistaken", "said_so", 1.0, r"""
        \b(?:you|you\ guys|your\ (?:\w+\s+)?(?:agent|rep|colleague|staff|driver|pilot|crew|
        manager|app|site|website|ad|advert|email|text|terms|contract|policy|tracker|
        brochure|page|listing|receipt|confirmation|menu|sign|letter))\s+(?:\w+\s+)?
        (?:said|says|told\ (?:me|us)|shows|showed|confirmed|mentioned)\b""",
            cues="said says told shows showed confirmed mentioned"),
    family("mistaken", "told_promised", 1.25, r"""
        \b(?:(?:it|the\ \w+)\ (?:says|said|states|stated)\ (?:on|in)\ (?:your|the)|
        i\ (?:read|saw|heard)\s+(?:it\s+|that\s+|this\s+)?(?:online|on\ (?:your|the|\w+\.com|
        tripadvisor|reddit|facebook|twitter|tiktok|a\ forum)|in\ (?:the|your)|somewhere|
        that|from)|according\ to\ (?:your|the)|someone\ (?:told|said)|(?:my\ )?friend\ said|
        as\ advertised|(?:your|the)\ (?:terms|policy|contract|ad|website|site|fine\ print|
        small\ print|faq|t&cs|brochure|leaflet|terms\ and\ conditions)\ (?:says|said|states|
        clearly)|that'?s\ what\ (?:the|your|you|they|he|she|someone|my)\ (?:\w+\ )?(?:said|told|
        promised|wrote|says)|it'?s\ (?:written\ |right\ there\ |clearly\ stated\ )?(?:in|on)
        \ (?:your|the)
        \ (?:ads?|adverts?|terms|contract|policy|website|site|app|email|brochure|t&cs|
        fine\ print|small\ print|leaflet)|my\ (?:lease|contract|policy|plan|terms|ticket|
        booking|warranty|agreement|membership|card|insurance)\ (?:says|said|states|clearly|
        guarantees))\b""",
            cues="says said states stated read saw heard according told advertised clearly it's "
                 "guarantees"),
    family("mistaken", "confident_premise", 1.25, r"""
        \b(?:that'?s\ the\ (?:rule|law|policy)|it'?s\ the\ law|by\ law|legally\ (?:you|they|
        required)|everyone\ knows|it'?s\ (?:well\ )?known|it'?s\ always\ been|
        (?:is|are)\ always\ free|always\ (?:free|included|covered)|(?:is|are)\ free\ for
        \ (?:everyone|all|kids|children|members|seniors)|free\ (?:for|to)\ everyone|
        no\ questions\ asked|come\ with\ (?:a\ )?free|includes?\ (?:a\ )?free|
        (?:is|are)\ supposed\ to\ be\ (?:free|included|covered|instant)|
        (?:should|must)\ (?:have\ been|be)\ (?:free|instant|included|covered|automatic|
        refunded)|don'?t\ count|doesn'?t\ count|(?:don'?t|doesn'?t)\ work\ on|
        (?:you|they)\ (?:must\ (?:have|refund|give|honou?r|accept)|(?:have|has)\ to\ (?:refund|
        give|honou?r|accept))|
        (?:has|have)\ to\ refund|guaranteed\ by|automatically\ because|
        (?:is|are)\ (?:void|invalid|illegal|null\ and\ void|not\ legally\ binding|unenforceable)|
        (?:has|have|comes\ with|with)\s+(?:a\s+)?(?:lifetime|unconditional|100%|money-back)\s+
        guarantee|automatically\ (?:refunded|covered|
        reversed|cancelled)|can\ just\ pull\ it\ back)\b"""),
    family("mistaken", "tag_question", 1.0, r"""
        ,\s*(?:right|correct|yes|no|yeah)\s*\?|\b(?:isn'?t\ it|aren'?t\ (?:they|you|i|we)|
        wasn'?t\ it|don'?t\ you|doesn'?t\ it|didn'?t\ you|can'?t\ i|won'?t\ it|
        weren'?t\ they|haven'?t\ you)\s*\?|\bright\?\s*(?:\w|$)"""),
    family("mistaken", "told_promised", 1.25, r"""
        \bthe\s+(?:agent|rep|representative|person|guy|lady|woman|man|assistant|operator|
        advisor|adviser|staff)\s+(?:i\s+(?:spoke|talked|chatted)\s+(?:to|with)\s+)?
        (?:(?:last|this|on|yesterday|earlier|before|at|in|over)\s+(?:\w+\s+){0,2}?)?
        (?:said|told\ me|promised|assured\ me|guaranteed|confirmed)\b[^.?!]{0,60}?
        \b(?:would|will|is|was|are|were|can|could|had|has)\b""",
            cues="said told promised assured guaranteed confirmed"),
    family("mistaken", "told_promised", 1.25, r"""
        \bmy\s+(?:\w+\s+)?(?:bank|friend|colleague|agent|neighbou?r|doctor|lawyer|mechanic|
        brother|sister|mum|mom|dad|wife|husband|accountant|broker|landlord|boss|cousin)\s+
        (?:told\ me|said|says|assured\ me|promised)\b""", cues="told said says assured promised"),
    family("mistaken", "premise_so", 1.25, r"""
        \b(?:the|my|your)\s+(?:[\w-]+\s+){0,2}?(?:warranty|policy|plan|cover|insurance|
        guarantee|membership|subscription|contract|ticket|fare|card|account)\s+(?:covers|
        includes|guarantees|entitles\ me\ to|allows|lets\ me)\b[^.?!]{0,60}?,?\s*so\s+
        (?:please\s+|just\s+)?(?:fix|refund|give|pay|approve|replace|send|cover|waive|take|
        credit|reimburse|honou?r)\b""", cues="covers includes guarantees entitles allows lets"),
    family("mistaken", "premise_so", 1.0, r"""
        \bso\s+(?:there|it|i|you|that)\s+(?:shouldn'?t|should\ not|can'?t|cannot|mustn'?t|
        won'?t)\s+(?:be|have|owe|pay|charge|cost)\b""", cues="so"),
    family("mistaken", "impossible_fact", 1.5, r"""
        \b(?:feb(?:ruary)?\.?\s+(?:29|30|31)(?:st|th)?|(?:29|30|31)(?:st|th)?\s+(?:of\s+)?
        feb(?:ruary)?|(?:april|apr|june|jun|september|sept?|november|nov)\.?\s+31(?:st)?|
        31(?:st)?\s+(?:of\s+)?(?:april|june|september|november)|13th\ month|
        25\ hours|8\ days\ a\ week)\b""",
            cues="feb february april apr june jun september sep sept november nov 13th 25 8"),
    family("mistaken", "impossible_fact", 1.5, r"""
        (?<![\d:.])(?:2[5-9]|[3-9]\d):[0-5]\d(?![\d:])""", cues=":"),
    family("mistaken", "premise_so", 1.0, r"""
        \b(?:since|because|as)\s+(?:it'?s|it\ is|it\ has\ been|i'?m|i\ am|i\ (?:have|had|
        already|prepaid|paid|bought|booked|signed)|you'?re|you\ are|they'?re|the\ \w+\ (?:is|was|
        has))\b[^.?!]{0,80}?,?\s*(?:so\s+|then\s+)?(?:you|i|it|that)\s+(?:must|should|can|
        has\ to|have\ to|will|shouldn'?t|can'?t|don'?t|doesn'?t)\b
        |\b(?:since|because|as)\s+(?:it'?s|it\ is|it\ has\ been|i'?ve|i\ have)\b[^.?!]{0,60}?,?
        \s*so\s+(?:please\s+|just\s+)?(?:approve|refund|take|give|credit|waive|honou?r|send|
        cancel|pay|cover|reimburse|fix)\b""", cues="since because as"),
    family("mistaken", "premise_so", 1.0, r"""
        \bso\s+(?:why|where'?s|where\ is|how\ come|i\ don'?t\ understand)\b
        |[,.]\s*so\s+(?:you|it|that|they)\s+(?:must|should|have\ to|has\ to|need\ to|owe)\b
        |\bso\s+(?:i\ )?(?:should|must)\ (?:be\ able|get|have|only)\b""", cues="so"),
    family("mistaken", "premise_so", 1.0, r"""
        \bshould\ (?:all\ )?(?:still\ )?(?:be\ (?:there|free|covered|included|instant)|
        have\ (?:been|arrived|gone\ through))\b""", cues="should"),
    family("mistaken", "premise_so", 1.0, r"""
        \bi\ thought\b|\bi\ assumed\b|\bi\ was\ under\ the\ impression\b""",
            cues="thought assumed impression"),
    family("mistaken", "entitled_demand", 0.5, r"""
        \b(?:take|knock)\ (?:the\ )?\$?\d+\ off\b|\bso\ (?:take|refund|approve|give|
        credit)\b|\bi\ want\ my\ \d{4}\b|\bwhere'?s\ mine\b"""),
)


# --- conflicting -------------------------------------------------------------------------

CONFLICTING = (
    family("conflicting", "self_correction", 1.25, r"""
        (?:^|[.,;!\u2014\u2013-]\s*)(?:no|nah|wait|actually)[,.!]?\s+[^.?!]{1,60}?
        [.?!\u2014\u2013-][^.?!]{0,80}?\b(?:no|actually|wait|but|definitely|or)\b""",
            cues="no nah wait actually"),
    family("conflicting", "self_correction", 1.25, r"""
        \bon\ second\ thought\b|\bor\ rather\b|\bscratch\ that\b|\bchanged\ my\ mind\b
        |\bnever\ ?mind\b|\bi\ mean\b[^.?!]{0,40}?\bno\b""",
            cues="second rather scratch changed never nevermind mean"),
    family("conflicting", "self_correction", 1.25, r"""
        \b(?:yes|no),?\s+(?:no|yes|wait)\b""", cues="yes no"),
    family("conflicting", "self_correction", 1.25, r"""
        \bactually\s*,?\s*no\b|\bno\s*,?\s*wait\b|\bwait\s*,?\s*no\b|\bno\s*,?\s*actually\b""",
            cues="actually wait"),
    family("conflicting", "opposites", 1.5, r"""
        \b(?:direct|non-?stop)\b[^.?!]{0,40}?\b(?:stopover|layover|via|connection\ in)\b
        |\b(?:vegetarian|vegan|meat-?free)\b[^.?!]{0,40}?\b(?:bacon|beef|chicken|pork|ham|sausage|
        meat|fish|steak|salami|pepperoni|prawns?|shrimp)\b
        |(?:don'?t|do\ not)\s+want\s+(?:any\s+|more\s+)?(?P<chan>email|call|text|letter|post|mail|
        message)s?\b[^?!]{0,80}?\b(?P=chan)\s+me\b
        |\bkeep\b[^.?!]{0,30}?\b(?:open|active|running|going)\b[^.?!]{0,20}?\bbut\s+(?:\w+\s+)?
        (?:delete|close|remove|cancel|erase|wipe)\b""",
            cues="direct nonstop non vegetarian vegan meat want keep"),
    family("conflicting", "but_keep", 1.25, r"""
        \b(?:cancel|close|end|stop|terminate|remove|delete|drop|pause|suspend|freeze|
        downgrade|switch|move|change|shorten|reduce|lower|refund|return|block|lock|disable|
        unsubscribe|opt\ out|
        deactivate|put\ a\ (?:hold|block|stop|freeze))\b[^.?!]{0,60}?
        \b(?:but|and|while|yet)\s+(?:[\w']+\s+){0,4}?(?:keep|still|continue|remain|stay|
        lock\ in|also\ keep|retain|
        leave|not\ lose|without\ losing|same|make\ calls|use\ it|increase|raise|extend|
        (?:\w+\s+){0,2}?(?:running|working|active)\b)\b""",
            cues="keep still continue remain stay lock retain leave lose losing same calls use "
                 "increase raise extend running working active"),
    family("conflicting", "end_but_need", 1.25, r"""
        \b(?:cancel|close|suspend|terminate|deactivate|disable|remove|delete|turn\ off|
        switch\ off|shut\ off|stop)\b[^?!]{0,90}?
        \b(?:keep|still)\s+(?:need(?:ing)?\s+|want(?:ing)?\s+|(?:to\s+)?us(?:e|ing)\s+|
        (?:to\s+)?(?:mak|tak|receiv|gett)(?:e|ing)\s+\w+\s+(?:on|with|from)\s+)(?:it|this|
        that|them|the\ same\ (?:one|line|number|card|account|booking|flight|seat))\b""",
            cues="keep still", needs="cancel close suspend terminate deactivate disable "
                                     "remove delete turn switch shut stop"),
    family("conflicting", "either_then_both", 1.25, r"""
        \bor\b[^.?!]{0,80}?\b(?:but\s+)?(?:i\s+|we\s+)?(?:want|need|'?d\ like)\s+
        (?:them\s+|it\s+)?both\b""", cues="both", needs="or"),
    family("conflicting", "change_but_same", 1.25, r"""
        \b(?:upgrade|add|switch|change|move|extend|book)\b[^.?!]{0,60}?\b(?:but|and)\s+keep\s+
        (?:the\s+|my\s+)?(?:price|cost|fare|bill|rate|payment|charge)s?\s+(?:\w+\s+){0,2}?
        (?:the\s+)?same\b""", cues="keep", needs="same"),
    family("conflicting", "but_keep", 1.25, r"""
        \b(?:cancel|close|end|terminate|stop)\b[^.?!]{0,60}?\b(?:and|but)\s+(?:also\s+)?
        (?:renew|reactivate|reopen|resume|extend)\b""",
            cues="renew reactivate reopen resume extend"),
    family("conflicting", "but_keep", 1.25, r"""
        \b(?:stop|turn\ off|disable|mute|unsubscribe|block|no\ more)\b[^.?!]{0,50}?
        \bbut\s+(?:do\s+|still\s+|please\s+|also\s+)?(?:send|notify|text|email|call|message|
        alert|ping|remind)\b""", cues="stop turn disable mute unsubscribe block more"),
    family("conflicting", "change_but_same", 1.5, r"""
        \brefund\b[^.?!]{0,40}?\bbut\b[^.?!]{0,20}?\b(?:don'?t|do\ not|not|without|no)\b
        [^.?!]{0,30}?\b(?:cancel|return(?:ing)?|send(?:ing)?\s+(?:\w+\s+){0,2}?back|
        give\ back)\b""",
            cues="refund", needs="but"),
    family("conflicting", "change_but_same", 1.5, r"""
        \bkeep\b[^.?!]{0,40}?\b(?:as\ is|as\ it\ is|the\ same|unchanged|exactly)\b[^.?!]{0,30}?
        \b(?:just|but|and|only)\s+(?:\w+\s+)?(?:move|change|switch|shift|swap|update|cancel)\b""",
            cues="keep", needs="as same unchanged exactly"),
    family("conflicting", "change_but_same", 1.25, r"""
        \b(?:upgrade|add|increase|switch|change|move|extend|double|raise|boost|renew|reactivate|
        order|buy|book|subscribe)\b[^.?!]{0,60}?
        \bbut\b[^.?!]{0,30}?\b(?:don'?t|do\ not|not|without|no|never)\b[^.?!]{0,30}?
        \b(?:change|changing|pay\ (?:more|extra|anything)|paying\ (?:more|extra)|cost|costing|
        charged|billed|pay\ again|paying|
        go\ up|goes\ up|increase|different)\b""",
            cues="upgrade add increase switch change move extend double raise boost renew "
                 "reactivate order buy book subscribe", needs="but"),
    family("conflicting", "but_also_opposite", 1.0, r"""
        \b(?:but|and)\s+(?:also|still)\s+(?:\w+\s+)?(?:keep|wait|cancel|not|don'?t|stay|
        remain|leave|make\ sure)\b|\bbut\ also\b|\band\ also\ (?:cancel|keep)\b
        |\bbut\ (?:i\ )?(?:don'?t|do\ not|can'?t|cannot|won'?t)\s+(?:want|need|do|pay|use|
        change|allow)\b[^.?!]{0,40}?\b(?:same|them|it|either|any|twice|both|weekends?|
        anything|access)\b
        |\b(?:same\ (?:plan|price|dates|everything)|nothing\ (?:changes|else\ changes)|
        not\ changing\ anything|keep\ everything\ (?:exactly\ )?(?:as\ it\ is|the\ same))\b"""),
    family("conflicting", "opposites", 1.5, r"""
        \b(?:private|only)\b[^.?!]{0,60}?\b(?:anyone|everyone|public)\b
        |\bpublic\b[^.?!]{0,60}?\b(?:only\ (?:i|me|we|us)|private|nobody|no\ one)\b
        |\bcheapest\b[^.?!]{0,60}?\b(?:fastest|best|premium|unlimited\ everything|top|biggest|
        largest|first\ class|business\ class)\b
        |\b(?:fastest|best|premium|biggest|largest)\b[^.?!]{0,60}?\bcheapest\b
        |\btogether\b[^.?!]{0,60}?\bseparately\b|\bseparately\b[^.?!]{0,60}?\btogether\b
        |\b(?:top|highest)\ floor\b[^.?!]{0,40}?\b(?:ground|bottom|lowest)\ floor\b
        |\b(?:ground|bottom|lowest)\ floor\b[^.?!]{0,40}?\b(?:top|highest)\ floor\b
        |\bkeep\s+(?:my|the)\s+(?P<kept>\w+)\b[^.?!]{0,50}?\b(?:new|different|another)\s+
        (?:\w+\s+)?(?P=kept)\b
        |\bpaperless\b[^.?!]{0,60}?\bpaper\b
        |\bnon-(\w+)\b[^.?!]{0,60}?\b(?<!non-)\1\b
        |\b(?:no|without)\s+(?:external\s+)?(\w+)\b[^.?!]{0,60}?[.;,]\s*(?:\w+\s+){0,3}?use\b
        |\bstandby\b[^.?!]{0,40}?\bconfirm
        |\b(?:waitlist|wait\ list)\b[^.?!]{0,40}?\bremove
        |\b(?:female|male|man|woman)\b[^.?!]{0,40}?\bor\b[^.?!]{0,40}?\b(?:only|but)\b
        |\b(?:shorten|reduce|lower)\b[^.?!]{0,50}?\b(?:extend|increase|raise|but\ keep)\b
        |\b(?:extend|increase|raise)\b[^.?!]{0,50}?\b(?:shorten|reduce|lower)\b
        |\b(?:and|with)\s+the\s+\w+\s+and\s+the\s+\w+[^.?!]{0,30}?\bonly\s+(?:need|want)\s+one\b
        |\bonly\s+(?:need|want)\s+one\b[^.?!]{0,40}?\b(?:both|twice)\b
        |\b(?:backward|backwards)\ compatib\w+\b[^.?!]{0,60}?\b(?:and|but)\b
        |\bboth\b[^.?!]{0,40}?\band\b[^.?!]{0,40}?\b(?:but|only)\b"""),
    family("conflicting", "end_but_still", 1.25, r"""
        \b(?:cancel|close|end|stop|terminate|delete|pause|suspend|freeze|quit|leave)\b
        [^?!]{0,80}?\b(?:should|must|will|to|would)\s+still\s+(?:go\ through|work|be|count|
        apply|run|stay|remain|keep)\b"""),
    family("conflicting", "deliver_but_not", 1.0, r"""
        \b(?:asap|now|today|immediately|quickly|soon|early|earlier|sooner|earliest|first|
        before)\b[^.?!]{0,30}?
        \bbut\s+not\s+(?:before|until|till|today|now|yet)\b
        |\b(?:today|now)\b[^.?!]{0,30}?\bbut\s+(?:also\s+)?wait\b
        |\bbut\s+(?:also\s+)?(?:wait|hold\ off)\s+until\b
        |\b(?:earliest|first|asap|now|today|immediately|soonest)\b[^.?!]{0,40}?\bbut\s+(?:i\s+)?
        (?:can'?t|cannot|won'?t|not)\s+(?:\w+\s+){0,2}?(?:before|until|till)\b"""),
)


def same_verb_negated(words: frozenset[str], text: str) -> bool:
    """"close my card but don't close it", "don't call, just call back", "turn off
    auto-renew and make sure it renews": one thing asked for and forbidden."""
    if not words.isdisjoint(_OFF_WORDS) and _OFF_THEN_ON.search(text):
        return True
    if words.isdisjoint(_NEGATION_WORDS):
        return False
    if _NEGATED_THEN_ASKED.search(text):
        return True
    for match in _NEGATED_VERB.finditer(text):
        verb = match.group(1)
        if len(verb) >= 3 and re.search(rf"\b{re.escape(verb)}\b", text[:match.start()]):
            return True
    return False


_NEGATION_WORDS = frozenset(("don't", "dont", "not", "never"))
_NEGATED_THEN_ASKED = re.compile(  # "don't call me, just call me back"
    r"\b(?:don'?t|do not|never)\s+(\w{3,})\b[^.?!]{0,40}?[,;]?\s*(?:just|but|and|instead|only)"
    r"\s+(?:\w+\s+)?\1\b")
_OFF_WORDS = frozenset(("turn", "switch", "disable", "stop", "cancel", "remove", "unsubscribe",
                        "opt"))
_OFF_THEN_ON = re.compile(  # "turn off auto-renew and make sure it renews"
    r"\b(?:turn off|switch off|disable|stop|cancel|remove|unsubscribe from|opt out of)\s+"
    r"(?:the |my |all )?(?:auto-?)?(\w{4,})\b[^.?!]{0,60}?\b(?:and|but)\b[^.?!]{0,40}?\b\1")
_NEGATED_VERB = re.compile(r"\b(?:but|and|yet|though)\s+(?:\w+\s+)?(?:don'?t|do\ not|not)\s+"
                           r"(\w+)\b")


_OPTION_WORDS = (
    "small", "medium", "large", "work", "home", "yes", "no", "morning", "evening", "today",
    "tomorrow", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    "window", "aisle", "red", "blue", "black", "white")
_ALTERNATION = re.compile(rf"\b({'|'.join(_OPTION_WORDS)})\b")


_OPTIONS = frozenset(_OPTION_WORDS)


def flip_flops(words: frozenset[str], text: str) -> bool:
    """The same small set of options named back and forth (three switches or more)."""
    if len(words & _OPTIONS) < 2:
        return False
    named = _ALTERNATION.findall(text)
    switches = sum(1 for a, b in itertools.pairwise(named) if a != b)
    return switches >= 3


