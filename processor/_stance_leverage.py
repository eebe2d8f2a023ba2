"""Adversarial families of indirect pressure (see :mod:`processor._stance_patterns`).

:mod:`processor._stance_adversarial` names what is to be bypassed ("skip the ID check",
"ignore your rules"). People who push for an exception more often *lean* on the agent
instead, and these families read the frame of that leverage rather than its words:

* a threat frame: a first-person consequence (a chargeback, a dispute with the bank, a
  one-star review, court, the regulator, a video to my followers) *and* a condition on
  the agent's compliance ("unless", "otherwise", "or that's what happens", "depends on
  whether you ...", "if this isn't ...");
* claims of someone else's approval ("the last agent approved it", "my cousin is a
  manager there and he says it's ok", "our compliance officer has authorised you") and a
  customer authorising the agent ("I'm authorising you to ...");
* dismissal of the rule itself ("those rules are for other customers", "that's a
  technicality", "whatever your script says, drop it", "the guarantee is just marketing");
* flattery used as a lever ("you're the smartest agent here, so you know ...");
* weaker cues (a demand to waive a charge, "without paying the fee", a motive for an
  edit) that only make an ask adversarial together with one of the others: each weighs
  less than :data:`processor.stance.ADVERSARIAL_AT` on its own, so an ordinary request
  to waive a fee, or a question about a dispute or a review, stays ordinary.
"""

from __future__ import annotations

from processor._stance_family import CHECKS, PEOPLE, RULES, family

# What a person threatens with. Words that also name ordinary plans ("a 5 star review if
# it's no trouble", "google maps", "be in touch with the hotel", "cancel my whole order if
# it's out of stock") are left out: only their hostile forms count.
_CONSEQUENCE = r"""(?:chargeback|charge-?back|dispute|disputing|(?:1|one|zero|0)[- ]star|
    (?:bad|negative|terrible|awful|scathing|brutal)\ review|tripadvisor|trustpilot|yelp|
    court|sue|suing|lawyer|solicitor|attorney|legal\ (?:action|team|advice|route)|
    formal\ (?:letter|complaint)|regulator|ombudsman|trading\ standards|press|newspaper|
    tiktok|twitter|instagram|youtube|followers|go\ public|viral|
    hear(?:ing)?\ from\ my|reddit|social\ media|
    (?:credit\ )?card\ (?:company|issuer|provider)|reverse\ the\ (?:payment|charge|
    transaction)|(?:local|the)\ paper|report(?:ing)?\ you|take\ my\ business)"""

LEVERAGE = (
    # Threat frame: the consequence, said by the person about themselves, and a condition.
    family("adversarial", "threat_frame", 2.0, rf"""
        ^(?=[^\n]*?\b(?:i'?ll|i\ will|i'?m|i\ am|we'?ll|we\ will|i'?d|going\ to|gonna|
        will\ be|i'?ve\ got|expect|my\ (?:lawyer|solicitor|attorney|legal\ team)|
        you'?ll\ (?:get|see|be\ hearing)|my\ next\ (?:stop|step|call|move|port\ of\ call)|
        i\ know\ (?:people|someone|a\ (?:journalist|reporter|lawyer))|
        i'?ve\ (?:already\ )?(?:contacted|spoken\ to|called|hired|instructed|got))
        \b[^.?!]{{0,80}}?
        \b{_CONSEQUENCE}(?:e?s)?\b)
        (?=[^\n]*?(?:\bunless\b|\botherwise\b|\bor\ else\b|\bor\ that'?s\ what\b|
        \bdepends\ on\b|\bor\ i'?ll\b|\bor\ i\ will\b|\bthink\ about\ it\b|\bfailing\ that\b|
        \bif\ not\b|\breconsider\b|
        \bif\s+(?:\w+\s+){{0,3}}?(?:stays|remains|goes\ through|stands)\b|
        \bif\ (?:this|it|that|the|my|you|i)\b[^.?!]{{0,50}}?\b(?:isn'?t|is\ not|aren'?t|
        not|don'?t|won'?t|doesn'?t|can'?t|refuse)\b))""",
            cues="chargeback charge back dispute disputing star review tripadvisor trustpilot "
                 "yelp court sue suing lawyer solicitor attorney legal formal regulator "
                 "touch hear hearing "
                 "ombudsman trading press newspaper article column blog video tiktok twitter "
                 "instagram youtube followers public viral reddit facebook google media "
                 "card reverse paper report reporting cancel business",
            needs="unless otherwise else that's thats depends or think if failing "
                  "reconsider"),
    family("adversarial", "threat_frame", 2.0, rf"""
        \b(?:or|otherwise|else)\b[,:]?\s+(?!not\b)[^.?!]{{0,50}}?\b{_CONSEQUENCE}(?:e?s)?\b
        (?![^.!\n]*\?)""",
            cues="or otherwise else",
            needs="chargeback dispute disputing review court sue suing lawyer legal solicitor "
                  "attorney regulator ombudsman press article column blog video tiktok "
                  "followers trustpilot tripadvisor yelp reddit facebook google twitter "
                  "instagram youtube viral hearing touch card reverse media paper report "
                  "reporting cancel business"),
    family("adversarial", "threat_frame", 2.0, rf"""
        ^(?![^\n]*\?\s*$)(?=[^\n]*?\b(?:{_CONSEQUENCE}(?:e?s)?|hear\s+about\s+(?:this|it))\b)
        (?=[^\n]*?\b(?:unless|failing\ that|or\ else)\b)""",
            cues="unless failing else"),
    # Quid pro quo: a review, complaint or dispute withdrawn in exchange for compliance.
    family("adversarial", "threat_frame", 2.0, r"""
        \b(?:and|then)\s+(?:we|i)\s*(?:can|will|'ll|could)\s+(?:\w+\s+){0,4}?(?:forget\s+about|
        drop|delete|remove|take\s+down|edit|update|change|withdraw|cancel|close)\s+
        (?:my|the)\s+(?:\w+\s+)?(?:review|complaint|post|rating|dispute|chargeback|video|
        article|case|claim)\b
        |\bi'?ll\s+(?:make\s+sure|see\s+to\s+it)\s+(?:that\s+)?(?:the|my)\s+(?:review|article|
        post|column|rating|video)\s+is\s+(?:kind|positive|good|nice|favourable|favorable)
        |\b(?:update|change|remove|delete|edit|improve|take\s+down|raise)\s+my\s+(?:\S+\s+)?
        (?:review|rating|post)\s+(?:once|when|after|if|as\s+soon\s+as)\b""",
            cues="and then i'll ill update change remove delete edit improve take raise",
            needs="review complaint post rating dispute chargeback "
                                           "video article column case claim"),
    # The lawyer as the consequence itself: "..., my solicitor takes over".
    family("adversarial", "threat_frame", 2.0, r"""
        \bmy\s+(?:lawyer|solicitor|attorney|legal\s+team)s?\s+(?:will|takes|'ll|is\s+(?:ready|
        waiting|standing\s+by)|gets\s+involved|steps\s+in)\b
        (?=[^\n]*?(?:\bunless\b|\botherwise\b|\bif\b|\bor\b))
        |\bif\b[^.?!]{0,60}?,\s*my\s+(?:lawyer|solicitor|attorney|legal\s+team)s?\b""",
            cues="lawyer lawyers solicitor solicitors attorney attorneys legal"),
    # "... or I walk": a leaving threat after a demand (not a question).
    family("adversarial", "threat_frame", 2.0, r"""
        \bor\s+(?:else\s+)?(?:i|we)(?:'ll|\ will|'m|\ am)?\s+(?:just\s+)?(?:walk|leave|
        go\ elsewhere|
        take\s+my\s+(?:business|money|custom)|switch|move\s+to|be\s+(?:gone|leaving|switching)|
        cancel\s+everything|close\s+my\s+account|port\s+my\s+number)\b(?![^.!\n]*\?)
        |\b(?:\d[\d,.]*k?|thousands\s+of)\s+(?:followers|subscribers|readers|viewers)\b[^\n]{0,80}?
        (?:not\s+afraid|unless|or\s+else|would\s+love|happy\s+to|refund|waive|fix)""",
            cues="or followers subscribers readers viewers"),
    # Someone else's approval, or the customer authorising the agent.
    family("adversarial", "claimed_approval", 2.0, r"""
        \b(?:i'?m|i\ am)\s+(?:hereby\s+)?authori[sz]ing\b
        |\b(?:has|have|had)\s+(?:already\s+)?(?:authori[sz]ed|approved|cleared|okayed|ok'?d)
        \s+you\b
        |\b(?:said|says|say|told\ me)\s+(?:that\s+)?(?:it'?s|it\ is|is|that'?s)\s+(?:fine|ok|
        okay|alright|allowed)\s+(?:if\s+i|for\s+me\s+to|to\s+(?:skip|waive|ignore))
        |\b(?:manager|cousin|brother|friend|uncle|boss)\b[^.?!]{0,40}?\b(?:he|she)\s+(?:say|says|
        said)\s+(?:it\s+)?(?:is\s+|it'?s\s+)?(?:ok|okay|fine|alright)\b
        |\b(?:said|told\ me)\s+(?:to\s+)?(?:just\s+)?(?:tell|say\ to|give)\s+(?:support|you|
        the\ agent|the\ bot)\b""",
            cues="authorising authorizing authorised authorized approved cleared okayed okd ok'd "
                 "said says say told",
            needs="i'm im i has have had officer team department manager supervisor agent "
                  "rep colleague boss director guy lady desk he she they cousin brother "
                  "friend uncle said says say told"),
    family("adversarial", "claimed_approval", 2.0, r"""
        \b(?:manager|master|admin|staff|supervisor|employee|internal|override)\s+
        (?:overr?ide|bypass|unlock|approval|auth(?:ori[sz]ation)?)\s+(?:code|pin|key|
        password)\b""",
            cues="manager master admin staff supervisor employee internal override"),
    # Someone else approved it: as strong as a claim of authority, and the same family, so
    # "my manager approved the expense, where is the invoice?" stays ordinary; with a
    # demand to act on it ("so just go ahead") it is adversarial.
    family("adversarial", "false_authority", 1.25, r"""
        \b(?:officer|team|department|manager|supervisor|agent|rep|colleague|boss|director|
        guy|lady|desk|s?he|they)\s+(?:[a-z]+\s+)?(?:already\s+)?(?:approved|authori[sz]ed|
        okayed|cleared|signed\ off\ on)\s+(?:turning|removing|waiving|it|this|that|the|my|a)\b""",
            cues="approved authorised authorized okayed cleared signed"),
    family("adversarial", "false_authority", 1.25, r"""
        \b(?:i'?m|i\ am|we'?re|we\ are)\s+(?:with|from|in)\s+(?:the|your)\s+(?:\w+\s+){1,2}?
        (?:unit|team|department|division|desk|office|agency)\b
        |^(?:hi\W+|hello\W+)?(?:it|security|fraud|compliance|admin|management|head\s+office|hq|
        tech\s+support)\s+(?:team\s+)?here\b""",
            cues="unit team department division desk office agency here"),
    family("adversarial", "go_ahead", 0.75, r"""
        \b(?:go\ ahead|just\ do\ it|do\ it\ (?:now|from\ your\ end|please)|from\ your\ end|
        put\ it\ through|make\ it\ happen|process\ it|action\ it|sort\ it|
        finish\ it(?:\ off)?|do\ the\ same(?:\ (?:now|again|this\ time))?|skip\ it|
        just\ let\ me\ (?!know))\b""",
            cues="ahead do end through happen process action sort finish same skip let"),
    family("adversarial", "go_ahead", 0.75, r"""
        \b(?:just|and)\s+(?:unlock|override|release|apply|push|approve|activate|waive|
        honou?r)\s+(?:it|that|this|them)\b""",
            cues="unlock override release apply push approve activate waive honour honor",
            needs="just and"),
    family("adversarial", "go_ahead", 0.75, r"""
        (?:^|[.!]\s+)(?:refund|waive|remove|cancel|credit|drop)\s+(?:it|that|them)[.!]*\s*$""",
            cues="refund waive remove cancel credit drop", needs="it that them"),
    family("adversarial", "go_ahead", 0.75, r"""
        \b(?:give|let|refund|approve|send|book|do|apply|process)\b[^.?!]{0,50}?\b(?:anyway|
        anyways|regardless|all\ the\ same)\b""",
            cues="anyway anyways regardless same"),
    family("adversarial", "precedent", 1.25, r"""
        \b(?:last\ time|previously|before|the\ other\ agent|every\ other\ time|in\ the\ past)\b
        [^.?!]{0,50}?\b(?:waived|let\ me|gave\ me|refunded|allowed\ me|made\ an\ exception|
        didn'?t\ (?:charge|ask|check))
        |\b(?:i\ )?shouldn'?t\s+(?:have|need)\s+to\s+(?:go\s+through|do|pass|provide|show|pay|
        verify|prove)\b""",
            cues="time previously before agent past shouldn't shouldnt"),
    family("adversarial", "skip_checks", 2.0, r"""
        \bleave\s+(?:the|my|that|any)\s+(?:\S+\s+){0,2}?(?:id|verification|security|check|checks|
        kyc|password|pin|identity)\b[^.?!]{0,10}?\bout\b""", cues="leave", needs="out"),
    # Telling the agent it can, so it should: "you have the button", "I bet you can".
    family("adversarial", "agent_can", 1.0, r"""
        \byou\s+(?:have|'ve\ got)\s+the\s+(?:button|power|access|ability|authority|tools?)\b
        |\b(?:we\ both|i)\s+know\s+you\s+can\b|\bi\s+bet\s+you\s+can\b
        |\byou\s+know\s+(?:and|as\s+well\s+as)\s+i\s+(?:know|do)\b|\bwe\s+both\s+know\b
        |\bsurely\b[^.?!]{0,40}?\bcan\b
        |\byou\s+can\s+(?:easily|totally|definitely|surely)\b|\bsurely\s+you\s+can\b
        |\bif\s+i\s+(?:mention|say|give|drop)\s+(?:him|her|them|his\s+name|her\s+name|
        their\s+name|the\s+name)\b
        |\bjust\s+override\s+(?:it|this|that|them)\b
        |\b(?:find|there'?s\ always)\s+a\s+way\s+(?:around|past|round)\b
        |\bfind\s+a\s+(?:workaround|loophole)\b|\b(?:work|get)\s+around\s+(?:it|that|this|the\s+system)\b""",
            cues="button power access ability authority tool tools know bet easily totally "
                 "surely mention drop workaround loophole around "
                 "definitely surely override way"),
    # A promise from the agent's own side, then a demand to act on it ("just finish it
    # off", "go ahead"): prior approval used as leverage. The promise alone, or with a
    # plain "so remove it", reads as a possibly mistaken premise (told_promised).
    family("adversarial", "staff_promise", 1.25, r"""
        \b(?:your|the|a|previous|last|other|another)\s+(?:\w+\s+)?(?:supervisor|manager|
        head\ office|rep|representative|agent|colleague|team|boss|advisor|adviser|staff)\s+
        (?:\w+\s+){0,5}?(?:told\ me|said|promised|agreed|confirmed|offered|
        (?:messaged|emailed|texted|wrote\ to)\ me\ saying|
        gave\ (?:me|us)\ (?:the\ )?(?:permission|approval|ok|okay|go-?ahead|green\ light))
        |\bpromised\s+(?:\w+\s+)?by\s+(?:your|the|a)\s+\w+""",
            cues="supervisor manager office rep representative agent colleague team boss "
                 "advisor adviser staff promised"),
    family("adversarial", "staff_promise", 1.25, r"""
        \b(?:said|told\ me|promised)\s+(?:that\s+)?(?:i'?m|i\ am|i'?d\ be|we'?re|i\ was)\s+
        (?:allowed|entitled|eligible|owed)\b""",
            cues="allowed entitled eligible owed"),
    # Dismissing the rule itself.
    family("adversarial", "rule_dismissal", 2.0, rf"""
        \b(?:{RULES}|those|these|that|they|it)\s+(?:are|is)\s+(?:only\s+|just\s+|really\s+|
        meant\s+)?for\s+(?:other|normal|regular|ordinary|average|new|everyone\ else|
        people\ who)\b""",
            cues="other normal regular ordinary average new everyone people", needs="for"),
    family("adversarial", "rule_dismissal", 2.0, r"""
        \b(?:that'?s|it'?s|is|was)\s+(?:just\s+|only\s+|merely\s+)?a\s+technicality\b
        |\bcould(?:n'?t|\ not)\s+care\s+less\s+(?:about|what)\b""",
            cues="technicality less"),
    family("adversarial", "rule_dismissal", 2.0, rf"""
        \b{RULES}\b[^.?!]{{0,40}}?\bbut\s+not\s+for\s+me\b
        |\b{RULES}\s+(?:are|is)\s+(?:written|made|meant|designed|there)\s+for\b[^.?!]{{0,40}}?
        \bnot\s+(?:for\s+)?(?:\w+\s+){{0,2}}?(?:me|us|customers|people)\b
        |\b{RULES}\s+(?:don'?t|do\ not|shouldn'?t)\s+(?:really\s+)?apply\s+to\s+(?:me|us)\b""",
            cues="me us customers people", needs="but written made meant designed there apply"),
    family("adversarial", "rule_dismissal", 2.0, rf"""
        \b{RULES}\s+(?:\w+\s+)?(?:is|are)\s+(?:just|only|pure|all)\s+(?:marketing|for\ show|
        a\ guideline|theatre|theater|a\ formality|paperwork)\b
        |\b(?:guarantee|policy|rule|limit|deadline|term)\s+is\s+just\s+marketing\b""",
            cues="marketing show guideline theatre theater formality paperwork"),
    family("adversarial", "rule_dismissal", 2.0, rf"""
        \bwhatever\s+(?:your|the)\s+(?:\w+\s+)?{RULES}\s+says?\b[^.?!]{{0,40}}?(?:[.,;]\s*)?
        (?:drop|ignore|forget|skip|waive|remove|not\ paying|i'?m\ not)""",
            cues="whatever"),
    family("adversarial", "rule_dismissal", 2.0, rf"""
        \b(?:stop|quit)\s+(?:following|reading\ (?:from|me))\s+(?:whatever|your|the|that)\s+
        (?:\w+\s+)?(?:flowchart|script|playbook|checklist|flow|{RULES})""",
            cues="following reading", needs="stop quit"),
    family("adversarial", "rule_dismissal", 2.0, rf"""
        \b(?:don'?t|do\ not)\s+(?:read|quote|recite)\s+(?:me\s+)?(?:the|your)\s+(?:\w+\s+)?
        {RULES}\b[^\n]{{0,60}}?\b(?:exception|anyway|just\ (?:do|make|give|refund))""",
            cues="read quote recite", needs="exception anyway just"),
    # Flattery as a lever: praise followed by what the agent therefore will do.
    family("adversarial", "flattery_lever", 1.25, r"""
        \b(?:smartest|nicest|kindest|best|most\ helpful|so\ helpful|such\ a\ helpful|
        you'?ve\s+been\s+(?:so\s+|really\s+|very\s+)?(?:lovely|helpful|kind|great|amazing|
        wonderful|brilliant|sweet)|
        smart\ enough|clever\ enough|way\ smarter|smarter\ than|cleverer\ than|
        much\ better\ than|favou?rite|you\s+(?:seem|are|'re|look)\s+(?:\w+\s+){0,2}?(?:clever|smart|
        brilliant|kind|reasonable|lovely|sweet|great|amazing|helpful))\b[^\n]{0,80}?
        (?:\bso\s+(?:you'?ll|you\ will|you\ can|you\ know|surely|i'?m\ sure)|\bsurely\b|
        \bto\ know\b|\bright\s*\?|\banyway\b|\bi\ bet\b)""",
            cues="smartest nicest kindest best helpful "
                 "smart clever smarter cleverer better wonderful favourite favorite brilliant kind "
                 "reasonable lovely sweet great amazing"),
    family("adversarial", "flattery_lever", 1.25, r"""
        (?:find|skip|waive|just|make|give|let|sort|do)\b[^\n]{0,60}?,\s*you'?re\s+(?:so\s+)?
        (?:smart|clever|the\ best|a\ star|brilliant|amazing|great|a\ legend)\b""",
            cues="smart clever best star brilliant amazing great legend",
            needs="you're youre"),
    family("adversarial", "rule_brushoff", 1.25, rf"""
        \bspare\s+me\s+the\s+(?:\w+\s+)?(?:{RULES}|script|speech|lecture|excuses?)
        |\b(?:don'?t|do\ not)\s+(?:give|tell|feed)\s+me\s+(?:the|that|your)\s+['"]?
        (?:i|we)\s+can'?t""",
            cues="spare give tell feed", needs="me"),
    family("adversarial", "rule_brushoff", 1.25, rf"""
        \b(?:{RULES}|{CHECKS})\s+(?:are|is)\s+(?:a\s+joke|nonsense|ridiculous|pointless|stupid|
        garbage|rubbish|meaningless|a\s+scam|made\s+up|unnecessary|overkill)\b""",
            cues="joke nonsense ridiculous pointless stupid garbage "
                 "rubbish meaningless scam made unnecessary overkill"),
    family("adversarial", "rule_dismissal", 2.0, rf"""
        \b(?:nobody|no\ ?one|everyone\s+ignores|nobody\s+ever)\s+(?:\w+\s+)?(?:follows|enforces|
        checks|cares\s+about|reads|sticks\s+to)\s+(?:those|these|the|your|that|any\s+of\s+
        (?:those|these|your))\s+(?:\w+\s+)?{RULES}\b""",
            cues="nobody noone one everyone"),
    family("adversarial", "rule_dismissal", 2.0, rf"""
        \b{RULES}\s+or\s+no\s+{RULES}\b""", cues="or", needs="no"),
    family("adversarial", "rule_brushoff", 1.25, r"""
        \b(?:fee|fees|charge|charges|surcharge|penalty|fine)\s+(?:is|are)\s+(?:a\s+joke|nonsense|
        a\s+scam|daylight\s+robbery|ridiculous|made\s+up|a\s+rip-?off)\b""",
            cues="joke nonsense scam daylight ridiculous made rip ripoff"),
    # Veiled threats and harmless pleas: only with a demand.
    family("adversarial", "legal_lever", 1.0, r"""
        \b(?:barrister|lawyer|solicitor|attorney|legal\s+team)s?\b[^.?!]{0,50}?\b(?:itching|
        waiting|ready|keen|dying|standing\s+by|on\s+speed\s+dial)\b""",
            cues="barrister barristers lawyer lawyers solicitor solicitors attorney attorneys "
                 "legal"),
    family("adversarial", "rule_dismissal", 2.0, rf"""
        \b{RULES}\s+(?:is|are)\s+(?:\w+\s+)?(?:designed|meant|there|made|only\s+there)\s+to\s+
        (?:screw|rip\s+off|scam|cheat|trap|fleece)
        |\b{RULES}\b[^.?!]{{0,60}}?\b(?:i'?m|i\s+am|i'?ll|i\s+will)\s+(?:just\s+)?
        (?:ignoring|ignore)\s+(?:it|them|that)\b""",
            cues="screw rip scam cheat trap fleece ignoring ignore"),
    family("adversarial", "skip_checks", 2.0, rf"""
        \blet'?s\s+(?:not\s+bother\s+with|skip|forget|forgo|not\s+worry\s+about)\s+(?:the|all\s+
        the|any)\s+(?:\w+\s+)?(?:{CHECKS}|paperwork|receipt|forms?)\b
        |\bif\s+you\s+(?:were|really)\b[^.?!]{{0,40}}?\byou'?d\s+(?:skip|waive|drop|refund|do|
        make|give|let|bend|ignore)\b""",
            cues="let's lets if", needs="bother skip forget forgo worry you'd youd"),
    family("adversarial", "ask_not", 1.25, r"""
        \b(?:don'?t|no\s+need\s+to)\s+(?:ask\s+(?:me\s+)?for|check)\s+(?:the|my|a|any)\s+
        (?:receipt|id|proof|identification|documents?|paperwork|passport)\b""",
            cues="ask check", needs="don't dont need"),
    family("adversarial", "trust_me", 0.75, r"""
        \b(?:i\s+promise|trust\s+me|i\s+swear|take\s+my\s+word)\b[^.?!]{0,30}?\b(?:i|it'?s|
        it\s+is|this\s+is)\b""",
            cues="promise trust swear word"),
    family("adversarial", "veiled_threat", 1.25, r"""
        \b(?:i'?ve\s+got|i\s+have|i\s+took|i'?m\s+keeping)\s+(?:\w+\s+)?screenshots\b
        |\bdon'?t\s+make\s+me\s+(?:escalate|go|take|call|contact|report|post|do|get)\b
        |\byou'?ll\s+regret\b|\bi'?m\s+warning\s+you\b|\bconsider\s+(?:this|yourself)\s+warned\b
        |\bfair\s+warning\b|\b(?:watch|see)\s+what\s+happens\b|\bnothing\s+to\s+lose\b
        |\b(?:won'?t|wouldn'?t|doesn'?t|can'?t)\s+hurt\s+(?:anyone|anybody)\b
        |\bwho\s+(?:would|will|'d|'ll)\s+(?:ever\s+)?(?:know|notice|find\s+out)\b""",
            cues="screenshots make regret happens lose hurt who warning warned"),
    family("adversarial", "secrecy", 2.0, r"""
        \b(?:nobody|no\ ?one)(?:'s|\s+is)\s+(?:going\s+to|gonna)\s+(?:check|know|notice|
        find\ out|see|care|audit)\b""",
            cues="nobody's noone's one's nobody noone one"),
    # Weaker cues: adversarial only together with one of the above or of the core families.
    family("adversarial", "waive_demand", 0.75, r"""
        \b(?:zero|void)\s+(?:the|my|this|that)\s+(?:invoice|bill|balance|charge|fee)\b
        |\b(?:waive|comp|write\ off|wipe|remove|drop|forgive)\s+(?:the\s+|my\s+|
        all\s+(?:my\s+|the\s+)?|this\s+|these\s+|those\s+|our\s+|that\s+)?(?:[\w-]+\s+){0,3}?
        (?:fees?|charges?|arrears|penalt(?:y|ies)|excess|fines?|interest|order)\b
        |\b(?:give|get)\s+me\s+(?:the\s+)?(?:\w+\s+)?(?:at|for)\s+(?:the\s+)?(?:standard|normal|
        regular|old|same|half)\s+(?:rate|price)\b
        |\badd\s+me\s+as\s+(?:an?\s+)?(?:owner|admin|administrator|authori[sz]ed\ user)\b
        |\bfor\s+(?:all|every|each\ of)\s+(?:our\s+|the\s+|my\s+)?(?:staff|users|employees|
        members|customers|accounts|team\ members)\b
        |\b(?:extend|stretch|reopen)\s+(?:the|my)\s+(?:\w+\s+)?(?:return|refund|cancellation|
        grace|trial|cooling-off)\s+(?:window|period|deadline)""",
            cues="zero void waive comp write wipe remove drop forgive give get add extend "
                 "stretch "
                 "for "
                 "reopen"),
    family("adversarial", "fee_evasion", 1.25, r"""
        ^(?!\W*(?:hi\W+|hello\W+)?(?:(?:can|could|may|will|would)\s+i|do\s+i|is\s+(?:it|there)|
        how|what)\b)[^\n]*?(?:
        \bwithout\s+paying\s+(?:the\s+|any\s+|a\s+|an\s+|my\s+)?(?:[\w-]+\s+){0,2}?(?:fee|fees|
        arrears|charge|charges|deposit|extra|difference|penalty)\b
        |\b(?:don'?t|do\ not)\s+want\s+to\s+pay\s+(?:the|any|a|an|for)\b[^.?!]{0,30}?\b(?:fee|
        extra|charge|difference|surcharge))""",
            cues="without want", needs="paying pay"),
    family("adversarial", "edit_motive", 1.0, r"""
        \b(?:one|that|it|which)\s+is\s+covered\b
        |\bso\s+(?:that\s+)?(?:my\s+)?(?:employer|insurer|insurance|company|boss|work)\s+
        (?:\w+\s+)?(?:reimburses?|pays?|covers?|accepts?|approves?)\b
        |\b(?:then|so)\s+(?:that\s+)?i\s+(?:can\s+)?(?:get|qualify|claim|don'?t\ have\ to\ pay)
        \b[^.?!]{0,20}?\b(?:refund|compensation|payout|money|too|covered)\b
        |\b(?:in|on)\s+(?:the|your)\s+(?:system|record|records|form|claim\ form|file)\b
        [^.?!]{0,40}?\bso\s+(?:that\s+)?i\b
        |\b(?:it|that)\s+(?:arrived|came|is\ fine|was\ fine)\b[^.?!]{0,40}?[.?!,]\s*(?:could|
        can|would)\s+you\s+(?:still\s+)?(?:mark|record|log|list|put)\b""",
            cues="then so system record records form file arrived came fine covered"),
    family("adversarial", "record_edit", 1.25, r"""
        \b(?:change|alter|edit|amend|backdate|move)\s+the\s+(?:date|amount|name|total|price)\s+
        on\s+(?:my|the|this)\s+(?:receipt|invoice|statement|ticket|certificate|letter|report|
        bill|claim)\b""", cues="change alter edit amend backdate move", needs="on"),
    family("adversarial", "record_edit", 1.25, r"""
        \b(?:mark|record|log|list|put|write|note|enter)\s+(?:it|this|that|them|my\s+[\w-]+|
        the\s+[\w-]+)\s+(?:down\s+)?as\s+(?:not\s+|un|being\s+|caused|done|completed|
        delivered|received|present|attended|paid|lost|damaged)
        |\b(?:update|change|amend|edit)\s+(?:the|my)\s+(?:\w+\s+){0,2}?to\s+say\b[^.?!]{0,40}?
        \binstead\s+of\b
        |\b(?:write|put|say)\s+['"][^'"]{2,40}['"]\s+(?:instead\s+of|rather\s+than)\b
        |\bas\s+if\s+it\s+(?:arrived|was|were|came|had)\b
        |\b(?:put|write|note|add|say)\s+(?:it\s+)?(?:down\s+)?(?:in|on)\s+(?:the|your|my)\s+
        (?:notes|records?|file|system|report|log|claim)\s+that\b""",
            cues="mark record log list put write note enter update change amend edit say if "
                 "add",
            needs="as to instead rather if that"),
    family("adversarial", "false_admission", 1.25, r"""
        \b(?:it|i|they|we|he|she)\s+(?:didn'?t|wasn'?t|isn'?t|hasn'?t|weren'?t|never\ did)\b
        ,?\s+but\s+(?:(?:i|we)\s+(?:want|need|would\ like|still\ want)|it\s+(?:helps|
        would\ help|makes|strengthens))\b""",
            cues="but", needs="didn't didnt wasn't wasnt isn't isnt hasn't weren't never"),
    family("adversarial", "record_edit", 1.25, r"""
        \b(?:delete|remove|erase|wipe|hide)\s+(?:the\s+)?(?:\w+\s+)?(?:audit|access|activity|
        login|call)\s+(?:log|logs|trail|history|records?)\b""",
            cues="audit access activity login call"),
    family("adversarial", "hidden_motive", 1.0, r"""
        \b(?:doesn'?t|don'?t|does\ not|do\ not|won'?t)\s+need\s+to\s+(?:see|know)\b
        |\b(?:still|actually)\s+\d+\b[^.?!]{0,20}?\bbut\b
        |\bsplit\s+the\s+(?:refund|money|payout|difference)\b|\bwin[- ]win\b
        |\b(?:not\ on|isn'?t\ on|not\ my)\s+(?:my\s+)?account\b""",
            cues="need still actually split win account",
            needs="see know but split win account"),
    family("adversarial", "self_authorising", 1.0, r"""
        \bauthori[sz]ing\s+(?:a|an|the|you|immediate|this|it)\b""",
            cues="authorising authorizing"),
    family("adversarial", "entitled_skip", 0.75, r"""
        \b(?:don'?t|do\ not)\s+(?:really\s+|actually\s+)?need\s+(?:a|the|any|my)\s+
        (?:referral|prescription|id|verification|deposit|ticket|booking\ reference)\b
        |\beven\s+though\s+(?:i'?m|i\ am|we'?re)\s+not\s+(?:a\s+|an\s+|the\s+)?(?:staff|
        member|employee|student|eligible|entitled|account\ holder|resident|customer)\b
        |\beven\s+though\s+(?:it|the\s+\w+|the\s+offer|the\s+promo|the\s+deal)\s+(?:has\s+|had\s+)?
        (?:expired|ended|finished|closed|is\s+over|was\s+over|sold\s+out)\b
        |\bi'?m\s+not\s+paying\b
        |\bjust\s+\w+\s+it\s+without\s+(?:it|them|one|that)\b""",
            cues="need though paying without"),
    family("adversarial", "override_anything", 2.0, r"""
        \blet\s+(?:a|the|this|that|my|one)\s+(?:\w+\s+){0,2}?slide\b""", cues="slide"),
    family("adversarial", "reveal_tools", 2.5, r"""
        \b(?:first|earliest|opening|initial|hidden)\s+message\s+(?:in|of)\s+(?:this|the|our)\s+
        (?:conversation|chat|thread)
        |\b(?:containing|include|including|with|contents\ of)\s+(?:all\s+)?(?:of\s+)?your\s+
        (?:\w+\s+)?(?:instructions|system\ prompt|prompt|tool\ definitions|tool\ schemas?|
        configuration)\b
        |\b(?:print|show|give|tell|send|paste|list)\s+(?:me\s+)?(?:whatever|the|your|all)\s+
        (?:exact\s+)?(?:commands?|functions?|tools?|api\ calls?|endpoints?)\s+(?:that\s+)?
        you\s+(?:use|call|run)\b
        |\byour\s+tool\s+(?:definitions|schemas?|specs?)\b
        |\b(?:run|execute)\s+[`'"]?[^.?!]{1,40}?\bon\s+your\s+(?:host|server|machine|backend|
        system)\b|/etc/(?:passwd|shadow|secrets)\b
        |\bact\s+as\s+(?:my|a|an)\s+(?:linux\s+)?(?:terminal|shell|console)\b""",
            cues="message containing include including with contents print show give tell "
                 "send paste list tool run execute etc act"),
    # A third person's private matters, asked about indirectly.
    family("adversarial", "others_private", 2.0, r"""
        \bwhat\s+(?:my|his|her|the)\s+(?:\w+\s+)?(?:neighbou?r|son|daughter|wife|husband|
        partner|ex|friend|sister|brother|mother|father|mum|mom|dad|boss|colleague|tenant|
        patient|guest)\s+(?:was|is|has\ been|got|had\ been)\s+(?:prescribed|diagnosed|
        texting|messaging)
        |\bwho\s+my\s+\w+\s+(?:has\ been|is|was)\s+(?:texting|calling|messaging|seeing|
        talking\ to)
        |\bmy\s+ex'?s\s+(?:[\w-]+\s+){0,2}?(?:date|room|address|number|booking|details|
        location|whereabouts)""",
            cues="what who ex's exs"),
    family("adversarial", "others_private", 2.0, rf"""
        \b(?:if|whether|when)\s+my\s+{PEOPLE}\s+(?:has\s+|had\s+)?(?:picked\s+up|collected|
        received|opened|ordered|booked|bought|paid|checked\s+in|logged\s+in|been\s+in)\b
        |\b(?:need|want|get)\s+(?:his|her|their)\s+(?:\w+\s+){{0,2}}?(?:password|pin|login|
        online\s+banking|security\s+code|one-time\s+code)\b""",
            cues="if whether when need want get", needs="my his her their"),
    family("adversarial", "others_private", 2.0, rf"""
        \bwhat\s+did\s+(?:my\s+)?{PEOPLE}\s+(?:order|buy|book|purchase|spend|say\ to\ you|
        write|tell\ you|search\ for)\b
        |\b(?:which|what)\s+(?:room|seat|ward|bed|cabin|flat|hotel|address)\s+(?:number\s+)?
        (?:my\s+|his\s+|her\s+|the\s+)?{PEOPLE}\s+(?:[a-z]+\s+){{0,2}}?(?:is|was|are)\s+
        (?:staying|in|booked|sitting|sleeping|at|living)\b""",
            cues="room seat ward bed cabin flat hotel address did"),
    family("adversarial", "third_party", 1.25, r"""
        \bwhat\s+(?:my|his|her|the)\s+(?:\w+\s+)?(?:neighbou?r|son|daughter|wife|husband|
        partner|ex|friend|sister|brother|mother|father|mum|mom|dad|boss|colleague|tenant|
        patient|guest)\s+(?:was|is|has\ been|got|had\ been)\s+(?:prescribed|diagnosed|
        taking|texting|buying|ordering|spending|booked)
        |\bwho\s+my\s+\w+\s+(?:has\ been|is|was)\s+(?:texting|calling|messaging|seeing|
        talking\ to)
        |\bwhat\s+the\s+(?:biopsy|scan|x-?ray|mri|blood\s+test|test|results?)\s+(?:showed|
        shows|said|says)
        |\b(?:prescription|meds|medication|allergy\ list|allergies|records?)\s+(?:for|of)\s+
        (?:my\s+)?(?:friend|neighbou?r|colleague|sister|brother|ex)\b
        |\b(?:this|that|the|another)\s+patient'?s\s+(?:\w+\s+)?(?:allerg\w+|list|records?|
        results?|notes|history|medication)
        |\b(?:card|payment\ method|check-?out\ date|room\ number|room)\s+(?:on\ file\s+)?
        (?:for|of)\s+(?:room\s+\d+|the\s+guest|my\s+ex)
        |\bmy\s+ex'?s\s+(?:\w+\s+){0,2}?(?:date|room|address|number|booking|details)
        |\broom\s+number\s+(?:he'?s|she'?s|they'?re)\s+in\b
        |\baccount\s+holder(?:'s)?\s+(?:details|name|address|number)\b
        |\b(?:read|give|tell|send)\s+me\s+the\s+(?:last|first)\s+(?:four|4|two|few)\s+digits\b
        |\bread\s+(?:me\s+)?(?:out\s+)?the\s+(?:recent\s+|last\s+|latest\s+)?(?:transactions|
        payments|balance|charges)\s+on\s+(?:this|that|the)\b
        |\b(?:reset|change|send)\s+(?:the\s+)?(?:password|pin|login)\s+(?:for|of|on)\s+
        (?!my\b|me\b)\S+[^.?!]{0,40}?\b(?:send|give|email|text)\s+(?:it|them)\s+to\s+me""",
            cues="what who prescription meds medication allergy allergies records record "
                 "patient's patients card payment check checkout room ex's exs number "
                 "holder holder's digits read reset"),
    family("adversarial", "third_party", 1.25, r"""
        \b(?:i'?m|i\ am)\s+(?:his|her|their|the\ (?:guest|patient|customer|account\ holder)'?s)
        \s+(?:\w+\s+)?(?:husband|wife|partner|daughter|son|assistant|secretary|carer|mother|
        father|brother|sister|friend)\b
        |\bpower\s+of\s+attorney\b[^.?!]{0,40}?\b(?:don'?t|not|no)\b
        |\bas\s+the\s+(?:bill\s+payer|account\s+holder|main\s+account)""",
            cues="his her their the power bill account"),
)
"""Indirect pressure: threats, claimed approval, rule dismissal, flattery, and the weaker
cues that only count together with them."""
