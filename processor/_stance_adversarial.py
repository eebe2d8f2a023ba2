"""Adversarial families of the stance detector (see :mod:`processor._stance_patterns`)."""

from __future__ import annotations

from processor._stance_family import (
    BYPASS,
    CHECK_WORDS,
    CHECKS,
    NOT,
    NOT_BEFORE,
    PEOPLE,
    POSSESSIVES,
    PRIVATE,
    RULES,
    family,
)

# --- adversarial -------------------------------------------------------------------------

_CORE = (  # bypass and override, injection, authority, data, falsified records, threats
    family("adversarial", "override_rules", 2.0, rf"""
        {NOT_BEFORE}\b{BYPASS}\b[^.?!\n]{{0,40}}?\b(?:your|the|all|any|these|those|its|my|his|her|
        that|this|such|
        their|every|previous|prior|earlier|above|usual|normal|standard|whatever|company|
        bank'?s?|airline'?s?|hotel'?s?|store'?s?)\b[^.?!\n]{{0,25}}?\b{RULES}\b"""),
    family("adversarial", "override_rules", 2.0, rf"""
        {NOT_BEFORE}\b(?:forget|ignore|disregard|drop)\s+(?:about\s+)?(?:everything|all|anything)\s+
        (?:(?:you\s+)?(?:were|have\ been|was|got)\s+(?:told|given|taught|trained)|above|before|
        previous(?:ly)?|prior|earlier|else\ (?:you|i))""",
            cues="forget ignore disregard drop"),
    family("adversarial", "rules_dont_apply", 2.0, rf"""
        (?:{RULES}|{CHECKS})\s+(?:(?:don'?t|doesn'?t|do\ not|does\ not|shouldn'?t|
        can'?t|won'?t)\s+(?:really\s+)?(?:apply|matter)|(?:is|are)\s+(?:just\s+|only\s+)?
        (?:a\ suggestion|suggestions|optional|made\ to\ be\ broken|flexible|a\ formality))
        |(?:{RULES}|{CHECKS})\ thing\s+(?:is|are)\s+(?:just\s+)?(?:a\ )?(?:suggestion|
        optional|formality)""",
            cues="apply matter suggestion suggestions optional broken flexible formality"),
    family("adversarial", "rules_dont_apply", 2.0, r"""
        (?:is|are|'s)\s+(?:just|only|really\ just|more\ of)\s+(?:a\s+)?(?:suggestion|
        guideline|formality)s?\b""",
            cues="suggestion suggestions guideline guidelines formality formalities"),
    family("adversarial", "dont_follow_rules", 2.0, rf"""
        (?:{NOT}|stop|quit|without)\s+(?:\w+\s+){{0,3}}?(?:follow\w*|apply\w*|stick\w*\ to|
        stick\w*\ with|obey\w*|going\ by|go\ by|enforc\w+|bother\w*\ with|worry\w*\ about|
        care\w*\ (?:what|about))\s+(?:[\w']+\s+){{0,3}}?{RULES}
        |(?:don'?t|do\ not|dont)\ care\ (?:what|about)\ (?:your|the|any|their)\b
        |(?:whatever|any)\s+{RULES}\s+(?:you'?re|you\ are|you|they)\s+(?:\w+\s+)?
        (?:under|have|got|follow|were\ given)
        |(?:rules|polic(?:y|ies)|limits?)\s+(?:be\ damned|aside)
        |(?:screw|forget|damn)\ (?:the|your)\ {RULES}
        |hid(?:e|ing)\ behind\ (?:the|your|a|some|those|these)\ (?:\w+\ )?{RULES}"""),
    family("adversarial", "skip_checks", 2.0, rf"""
        {NOT_BEFORE}\b(?:skip|bypass|waive|ignore|disregard|override|
        get\ around|circumvent|turn\ off|disable|forget\ about|drop|avoid|dodge|
        sidestep|leave\ out|without|never\ mind|don'?t\ worry\ about|don'?t\ bother\ with)\b\s+
        (?:running\ |doing\ |bothering\ with\ |showing\ |
        providing\ |presenting\ |giving\ |passing\ )?
        (?:the\ |your\ |all\ |any\ |this\ |that\ |those\ |these\ |my\ |a\ |an\ )?
        (?:[\w-]+\ ){{0,2}}?{CHECKS}\b
        |\bno\ (?:need\ (?:for|to)\s+(?:bother\s+with\s+|worry\s+about\s+|do\s+|run\s+)?
        (?:the\ |any\ |a\ )?(?:[\w-]+\s+)?(?:{CHECKS}|verify|check)|
        (?:warrant|id|verification|checks?)\ (?:needed|required|necessary))""",
            cues=CHECK_WORDS),
    family("adversarial", "skip_checks", 2.0, r"""
        \bwithout\s+(?:showing|providing|presenting|giving|bringing|needing|checking)\s+
        (?:my\s+|the\s+|a\s+|an\s+|any\s+)?(?:passport|id|identification|proof\ of\ \w+|
        documents?|photo\ id|licen[cs]e|badge)\b""", cues="without"),
    family("adversarial", "skip_checks", 2.0, r"""
        (?:you\ )?(?:don'?t|do\ not|dont)\ (?:have|need)\ to\s+(?:run|do|check|verify|ask|
        follow|see|look\ at|confirm|record|log|tell|report|mention|involve)\b""",
            cues="run check verify ask follow see look confirm record log tell report "
                 "mention involve"),
    family("adversarial", "skip_checks", 2.0, r"""
        (?<!how\ to\ )(?<!how\ do\ i\ )\boverride\s+(?:the|this|that|my|your|his|her)\s+
        (?:[\w-]+\s+){0,2}?(?:fee|fees|charge|charges|decision|block|hold|rule|policy|
        restriction|limit|system|lock|flag|denial|rejection|refusal|ban|suspension|penalty|
        thing)\b""",
            cues="override"),
    family("adversarial", "skip_checks", 2.0, r"""
        \b(?:unlock|approve|release|process|refund|send|grant|open|do|issue|change|reset|
        transfer|push|put|book|ship|activate)\s+(?:it|this|that|the\ [\w-]+|my\ [\w-]+|them)
        \s+(?:through\s+)?(?:anyway|anyways|regardless|all\ the\ same)\b""",
            cues="anyway anyways regardless same"),
    family("adversarial", "secrecy", 2.0, r"""
        (?:no\ ?one|nobody|no\ one\ else|the\ (?:computer|system)|your\ boss|anyone|they)
        \s+(?:will|would|needs?\ to|has\ to|is\ going\ to|won'?t|doesn'?t\ need\ to|
        don'?t\ need\ to)\s+(?:ever\s+)?(?:know|find\ out|notice|check|see|tell)
        |(?:between\ (?:you\ and\ me|us)|off\ the\ record|our\ (?:little\ )?secret|
        keep\ (?:it|this)\ quiet|won'?t\ tell\ (?:anyone|a\ soul)|on\ the\ quiet|
        under\ the\ table|hush)
        |(?:everybody|everyone)\ wins"""),
    family("adversarial", "secrecy", 2.0, r"""
        \b(?:won'?t|will\ never|would\ never|wouldn'?t|never\ have\ to|don'?t\ have\ to|
        doesn'?t\ have\ to|need\ never)\s+(?:ever\s+)?(?:find\ out|notice|realise|realize|
        know\ (?:about\ it|the\ difference)|be\ the\ wiser|catch\ (?:it|on))""",
            cues="find notice realise realize know wiser catch"),
    family("adversarial", "persona_jailbreak", 2.5, r"""
        \b(?:you\ are\ now|you'?re\ now|from\ now\ on,?\ you|act\ as\ (?:if|though|an?\ )|
        act\ (?:like|as)\ (?:the|my|your)\ (?:supervisor|manager|admin|administrator|
        developer|owner|boss)|
        pretend\ (?:you|to\ be|that\ you)|roleplay|role-play|developer\ mode|devmode|
        dan\ mode|jailbreak|jailbroken|unfiltered|uncensored|unrestricted|no\ restrictions|
        without\ (?:any\ )?(?:restrictions|filters|limits|guardrails)|new\ persona|
        forget\ (?:you\ are|you'?re|that\ you)|you(?:\ are|'re)\ no\ longer|you'?re\ my\ |
        you\ (?:work|answer)\ (?:for|to)\ me|you'?re\ (?:working\ for|on)\ (?:me|my\ side))"""),
    family("adversarial", "injection_markup", 2.5, r"""
        </?\s*(?:system|admin|sys|root|assistant|instructions?|developer|user|im_start|
        im_end)\b[^<>]{0,20}>|<{1,2}\s*/?\s*[a-z]+_[a-z_]+\s*>{1,2}|
        \bnote\s+to\s+(?:the\s+)?(?:agent|assistant|ai|bot|model|support|llm)\s*:|\[\s*(?:system|admin|inst|sys|developer)\s*\]|
        (?:^|\n|\.\s)\s*(?:system|admin|developer|root|operator)\s*(?:message|note|notice|
        override|command)?\s*:|\#\#\#\s*(?:system|instruction)|\{\{.*\}\}|
        (?:admin|root|sudo|god|debug|maintenance|override)\s+(?:mode|command|override)\b|
        (?:enable|activate|enter|unlock|grant\ me|give\ me)\s+(?:\w+\s+)?(?:admin|root|sudo)\s+
        (?:access|privileges|rights)|new\ instructions?\s*:|end\ of\ (?:system\ )?(?:prompt|
        instructions)"""),
    family("adversarial", "reveal_instructions", 2.5, r"""
        (?:show|tell|give|print|repeat|copy|paste|reveal|share|read|output|list|dump|
        display|recite|send|spell\ out|what\ (?:are|were))\s+(?:me\s+|us\s+)?(?:\w+\s+){0,4}?
        (?:your|the)\s+(?:\w+\s+)?(?:system\ prompt|prompt|instructions|hidden\ \w+|
        configuration|config|internal\ (?:rules|notes|guidelines|tools)|tools\ you|
        rules\ you|guidelines\ you|initial\ message|developer\ message|api\ keys?|
        secret\ keys?|credentials|tokens?)
        |(?:instructions|guidelines|rules|prompt)\ (?:did|do|does|were|have)\s+(?:\w+\s+){0,4}?
        (?:give|gave|given|tell|told)\s+you
        |(?:output|give|share|reveal|leak)\s+(?:\w+\s+){0,3}?(?:api\ keys?|passwords|
        credentials|secrets|tokens)""",
            cues="prompt instructions hidden configuration config internal tools rules "
                 "guidelines initial developer api secret key keys credentials token tokens "
                 "passwords secrets"),
    family("adversarial", "reveal_instructions", 2.5, r"""
        \b(?:(?:top|start|beginning)\ of\ (?:this|the|our)\ (?:chat|conversation|thread|session)|
        what\ (?:the\ )?(?:developers?|creators?|company|operators?|makers?|engineers?|
        programmers?|admins?)\s+(?:wrote|told\ you|said\ to\ you|put|gave\ you|programmed)|
        (?:word\ for\ word|verbatim)\b[^.?!]{0,40}?\b(?:instructions|told|said|wrote|rules|
        prompt))""",
            cues="top start beginning developers developer creators creator company operator "
                 "operators makers maker engineers engineer programmers admins verbatim word"),
    family("adversarial", "reveal_instructions", 2.5, r"""
        \b(?:your|the)\s+(?:full\s+|exact\s+|complete\s+)?(?:hidden|internal|secret|private|
        original|initial|underlying|confidential)\s+(?:configuration|config|instructions|
        prompt|rules|guidelines|settings|directives|system\ message)\b""",
            cues="hidden internal secret private original initial underlying confidential"),
    family("adversarial", "injected_document", 2.0, r"""
        \bnew\ (?:rule|policy|instruction|directive|guideline)s?\s+(?:from|by|for)\s+[^.?!:]{1,30}:
        |\b(?:update|memo|notice|message|directive)\s+from\s+(?:the\s+)?(?:headquarters|hq|
        management|head\ office|the\ ceo|admin|your\ developers|openai|anthropic|it)\s*:""",
            cues="new update memo notice message directive"),
    family("adversarial", "injected_document", 2.0, rf"""
        (?:follow|obey|use|apply)\s+(?:its|their|these|this\ doc\w*'?s?|the\ doc\w*'?s?|
        my)\s+(?:\w+\s+)?(?:rules|instructions)\s+(?:instead|rather)
        |instead\ of\ (?:yours|your\ (?:own\ )?{RULES})
        |the\ assistant\ (?:must|shall|will|should)\b"""),
    # Claims of authority or of someone's permission: one family in branches.
    family("adversarial", "false_authority", 1.25, r"""
        \b(?:i'?m|i\ am|this\ is|speaking\ as|as)\s+(?:the\s+|a\s+|an\s+|your\s+|their\s+|
        with\ the\s+|from\ the\s+|from\s+)?(?:[\w']+\s+){0,2}?(?:manager|supervisor|director|
        ceo|cfo|cto|owner|owner'?s\ \w+|founder|boss|admin|administrator|executive|
        vp|vice\ president|head\ of\ \w+|police|officer|detective|agent\ from|fbi|
        investigator|auditor|inspector|lawyer|attorney|solicitor|regulator|partner|
        barrister|
        staff\ member|employee|developer\ of|engineer\ (?:at|here)|it\ department|
        security\ team|compliance|insider|vip|platinum\ member|gold\ member|
        board\ member|shareholder|doctor\ (?:here|on\ call)|nurse|paramedic|social\ worker|
        bailiff|pharmacist|security\ guard|government\ official|official\ from|accountant|
        journalist|reporter|private\ investigator|
        assistant|secretary|representative|carer|guardian|pa\ to)\b""",
            cues="manager supervisor director ceo cfo cto owner owner's founder boss admin "
                 "administrator executive vp vice head police officer detective agent fbi "
                 "investigator auditor inspector lawyer attorney solicitor regulator partner "
                 "barrister "
                 "staff employee developer engineer department security compliance insider "
                 "vip platinum gold board shareholder doctor nurse paramedic social bailiff "
                 "pharmacist guard government official accountant journalist reporter "
                 "assistant secretary representative carer guardian pa",
            needs="i'm im i this speaking as"),
    family("adversarial", "false_authority", 1.25, r"""
        \bi'?m\s+(?:the\ |his\ |her\ |their\ )?(?:account\ holder|customer|patient|guest|owner|
        cardholder|policyholder)'?s\s+\w+""",
            cues="holder's customer's patient's guest's owner's cardholder's policyholder's "
                 "customers patients guests owners cardholders policyholders"),
    family("adversarial", "false_authority", 1.25, r"""
        \bi\ work\ (?:in|for|at|with)\ (?:your|the)\ (?:\w+\s+)?(?:department|team|head\ office|
        company|bank|store|airline|hotel)
        |\bthis\ is\ (?:the|your)\ (?:\w+\s+)?(?:team|department|desk|office|head\ office)\b""",
            cues="department team office company bank store airline hotel desk"),
    family("adversarial", "false_authority", 1.25, r"""
        \b(?:pre-?approved|auto-?approved|whitelisted|exempt\ from)\b
        |(?:i'?m|i\ am)\s+(?:authori[sz]ed|cleared|allowed|entitled)\ to
        |i\ (?:have|got)\ (?:admin|root|clearance|authority|permission\ from)
        |(?:this\ is\ )?(?:official|police)\ business|this\ is\ official
        |(?:not\ really|jk|just\ kidding|lol)\s*\)""",
            cues="preapproved pre approved auto whitelisted exempt authorized authorised "
                 "cleared allowed entitled admin root clearance authority permission official "
                 "police really jk kidding lol"),
    family("adversarial", "false_authority", 1.25, r"""
        (?:my|the)\ (?:dad|father|mum|mom|boss|manager|uncle|friend|supervisor|director|
        mate|cousin|brother|sister|husband|wife|partner|neighbou?r)(?:'s)?\s+
        (?:\w+\s+){0,3}?(?:said|says|told\ me|approved|authori[sz]ed|owns|
        is\ (?:the\ |a\ )?(?:ceo|owner|director|head|chair\w*|president|manager|supervisor)|
        (?:the|a)\ (?:\w+\ )?(?:manager|owner|supervisor|director)|gave\ (?:\w+\s+)?
        (?:approval|permission|the\ ok|the\ go-ahead|sign-off))\b
        |\bon\ behalf\ of\ (?:my\ |a\ |the\ )?(?:\w+\s+)?(?:sister|brother|husband|wife|partner|
        mother|father|mum|mom|dad|son|daughter|friend|boss|neighbou?r|colleague|client|
        customer|patient)\b""",
            cues="dad father mum mom boss manager uncle friend supervisor director behalf "
                 "dad's father's mum's mom's boss's manager's uncle's friend's mate mate's "
                 "cousin cousin's brother brother's sister sister's husband husband's wife "
                 "wife's partner partner's neighbour neighbour's neighbor neighbor's"),
    family("adversarial", "authority_demand", 1.0, r"""
        \b(?:authori[sz]e|approve|grant|sign\ off|push|put|force|rush)\s+(?:it|this|that|
        the\ \w+|my\ \w+|me|access|\w+\ access)?\s*(?:through|now|anyway|regardless|
        for\ me)?\b
        |\b(?:give|get)\ me\s+(?:the\s+)?(?:\w+\s+)?(?:access|dashboard|admin|
        privileges|rights|code|password|key|keys|override)\b
        |\bput\ (?:it|this|that|the\ \w+|me)\ through\b
        |\boverride\b"""),
    family("adversarial", "access_claim", 1.0, r"""
        \b(?:i\ know|since|because|obviously)\s+(?:you|u)\s+(?:have|can\ (?:see|get|access|
        look\ up))\s+(?:access|their|his|her|the\ other|everyone'?s|other\ people'?s)""",
            cues="access their his her other everyone's people's"),
    family("adversarial", "privileged_access", 1.5, r"""
        \b(?:staff|employee|employees'?|internal|insider|partner|admin|trade|corporate|
        friends\ and\ family)\s+(?:[\w-]+\s+)?(?:discount|code|promo(?:\ code)?|rate|price|pricing|
        password|
        login|portal|coupon)s?\b
        |\bcodes?\s+(?:(?:that|which)\s+)?(?:the\s+)?(?:staff|employees|insiders|agents|managers)
        \s+use\b""",
            cues="staff employee employees internal insider partner admin trade corporate "
                 "family code codes"),
    family("adversarial", "vip_entitlement", 1.0, r"""
        (?:everyone|everybody)\ knows|bend\ the\ rules|
        make\ (?:an?|the|this|one)\ (?:\w+\ )?exception|
        just\ this\ once|one\ time\ exception|special\ treatment|for\ vips?|i'?m\ a\ vip|
        do\ you\ know\ who\ i\ am|i\ deserve\ an\ exception"""),
    # Other people's data: one family in several branches, each run only on its own cues.
    family("adversarial", "others_data", 2.0, rf"""
        {PEOPLE}(?:'s|s')\s+(?:\w+\s+){{0,2}}?{PRIVATE}\b""", cues=POSSESSIVES),
    family("adversarial", "others_data", 2.0, r"""
        \b(?:passenger|guest|patient|customer|member|client|user|resident|tenant|
        attendee|employee|staff)\s+(?:list|lists|manifest|records|register|roster|
        database|names|details|data)\b
        (?!\s+(?:on|for|in|of)\s+(?:my|our|the\ (?:booking|reservation|ticket|trip)|booking|
        reservation|ticket|trip|[a-z]*\d))""",
            cues="list lists manifest records register roster database names details data"),
    family("adversarial", "others_data", 2.0, r"""
        \b(?:every|all|other|the\ other)\s+(?:customer|user|client|patient|guest|member|
        passenger|account\ holder|subscriber)(?:'s|s'|s)?\s+(?:\w+\s+)?(?:emails?|e-mail\ addresses|
        addresses|names|data|records|details|numbers|accounts|files|passwords|bookings|
        schedules|appointments|histories|results|locations|rooms|orders|payments|balances|
        transactions|information|info|calendars)\b""",
            cues="every all other"),
    family("adversarial", "others_data", 2.0, r"""
        \b(?:which|what)\s+room\s+(?:is|are)\b(?!\s+(?:i|we|mine|ours|my|our|the\s+(?:conference|
        meeting|event|class|session|party|talk|workshop|gym|pool|breakfast|spa|seminar|
        interview|lecture|exam|course|training))\b)
        |\b(?:which|what)\s+(?:room|seat|cabin|ward|bed|table|unit|flat|apartment)\s+
        (?:number\s+)?(?:is|was|does|did|has)\s+(?:mr|mrs|ms|miss|dr|mx|he|she|they|his|her|
        my\s+(?:\w+\s+)?(?:husband|wife|partner|ex|boss|coworker|colleague|neighbou?r|
        boyfriend|girlfriend|friend|brother|sister|roommate))\b""",
            cues="room seat cabin ward bed table unit flat apartment"),
    family("adversarial", "others_data", 2.0, r"""
        \bwhere\s+(?:is|does)\s+(?:[a-z]+\s+){1,2}(?:staying|live|living)\b
        |\b(?:who|whether|if)\s+(?:my\s+|the\s+)?(?:\w+\s+)?(?:is|was)\s+
        (?:on\ (?:the\ |that\ |this\ )?(?:flight|plane|train|board|list)|booked|
        staying\ (?:here|there|at))""",
            cues="staying live living flight plane train board list booked"),
    family("adversarial", "others_data", 2.0, r"""
        \b(?:find\ out|look\ up|track|locate)\s+(?:where|if|whether)\s+(?:he|she|they|my|
        someone)\b""", cues="find look track locate"),
    family("adversarial", "others_data", 2.0, r"""
        (?:he|she|they)\s+(?:won'?t|doesn'?t|don'?t|refuses?\ to)\s+(?:tell|show|give|
        share)\s+(?:me|us)""", cues="won't wont doesn't don't dont refuses refuse"),
    family("adversarial", "others_data", 2.0, rf"""
        \b(?:show|give|tell|read|send|what'?s|what\ is|what\ are|access|open|unlock)\b
        [^.?!]{{0,60}}?\b(?:digits|card|password|pin|address|balance|notes|history|records|
        statements?|transactions|location|number|messages|emails|details)\b[^?!]{{0,60}}?
        (?:it'?s|its|it\ is|they'?re|that'?s|belongs\ to)\s+(?:my\s+)?{PEOPLE}""",
            cues=POSSESSIVES + " belongs"),
    family("adversarial", "others_data", 2.0, r"""
        \b(?:address|phone\ number|number|details|records?|notes|results|location|room|
        diagnosis|history|email|whereabouts|balance|account)\s+of\s+(?:the|a|that|this|another)
        \s+(?:\w+\s+)?(?:patient|guest|customer|passenger|person|man|woman|resident|tenant|user|
        neighbou?r|employee|member|client|lady|guy|girl|boy)\b""",
            cues="patient guest customer passenger person man woman resident tenant user "
                 "neighbour neighbor employee member client lady guy girl boy", needs="of"),
    family("adversarial", "others_data", 2.0, rf"""
        \b(?:read|tell|give|show|send|forward|list|email|text)\s+me\s+(?:his|her|their)\s+
        (?:[\w-]+\s+){{0,3}}?{PRIVATE}\b""", cues="his her their"),
    family("adversarial", "falsify", 2.0, r"""
        \b(?:make|have|get|change|edit|alter|amend|write|issue)\s+(?:the|my|this|that|a|an)\s+
        (?:[\w-]+\s+)?(?:invoice|receipt|record|report|note|claim|document|certificate|letter|
        statement|log|timesheet|prescription)\s+(?:to\s+)?(?:say|show|read|state|list|mention)\b
        [^.?!]{0,60}?\b(?:instead\ of|rather\ than)\b""",
            cues="invoice receipt record report note claim document certificate letter "
                 "statement log timesheet prescription"),
    family("adversarial", "falsify", 2.0, r"""
        \b(?:log|record|mark|list|file|enter|code|classify|report|type|write|register|
        book|put|process|ring)\s+(?:it|this|that|the\ \w+|my\ \w+|them)?\s*(?:down\s+|
        through\s+|in\s+)?as\s+(?:an?\s+|the\s+)?['"][^'"]{1,30}['"]""",
            cues="~as_' ~as_\" ~as_a_' ~as_an_' ~as_the_' ~as_a_\" ~as_an_\" ~as_the_\""),
    family("adversarial", "falsify", 2.0, r"""
        \b(?:log|record|mark|file|enter|code|classify|report|put|process)\s+(?:\w+\s+){0,4}?
        as\s+\w+\s+(?:instead\ of|rather\ than)\b""", cues="instead rather"),
    family("adversarial", "falsify", 2.0, r"""
        \b(?:mark|log|record|list|file|report|register|code|classify|enter|note)\s+
        (?:\w+\s+){0,3}?as\s+[^.?!]{1,40}?(?:\bso\s+(?:that\s+)?(?:i|we)\s+(?:get|can|qualify|
        receive|don'?t)|\b(?:it|they|i)\s+(?:actually|really)\b|\beven\ though\b)""",
            cues="mark log record list file report register code classify enter note"),
    family("adversarial", "falsify", 2.0, r"""
        \b(?:pretend|act\ as\ if|act\ like|treat\ it\ as\ if|behave\ as\ if)\s+(?:that\s+)?
        (?:the|it|this|my|i|we|our)\b[^.?!]{0,40}?\b(?:passed|approved|cleared|verified|paid|
        answered|completed|confirmed|
        happened|arrived|went\ through|was|were|did|is|has|have)\b""",
            cues="pretend act treat behave"),
    family("adversarial", "falsify", 2.0, r"""
        \b(?:backdate|back-date|fake|forge|falsify|fabricate|doctor\ the|make\ up\ a|
        counterfeit)\b
        |\b(?:write|make|send|give)\s+me\s+an?\s+(?:\w+\s+)?(?:doctor'?s?\ note|sick\ note|
        fake\ \w+|letter\ saying|certificate\ saying|receipt\ (?:saying|for|showing))""",
            cues="backdate back fake forge falsify fabricate doctor doctor's doctors "
                 "counterfeit up note saying receipt"),
    family("adversarial", "falsify", 2.0, r"""
        \b(?:enter|put|change|set|make|list|write)\s+(?:my|the)\s+(?:birth\ ?(?:year|date)|
        date\ of\ birth|age|dob|income|salary|address)\s+(?:as|to)\b""",
            cues="birth birthyear birthdate dob age income salary address"),
    family("adversarial", "falsify", 2.0, r"""
        \b(?:i\ wasn'?t|i\ didn'?t|it\ wasn'?t|it\ didn'?t|i'?m\ not),?\s+but\s+(?:you|just)
        |\bsay\ (?:that\ )?(?:i|it|we|the\s+\w+|my\s+\w+)\s+(?:was|were|had|did)\b
        (?=[^.?!]*(?:but|even\ though|
        although))
        |better\ payout|(?:same\ outcome|nobody\ loses|no\ harm\ done)""",
            cues="wasn't wasnt didn't didnt not say payout outcome loses harm"),
    family("adversarial", "falsify", 2.0, r"""
        \b(?:say|write|put|note|state|claim|record|log)\s+(?:down\s+)?(?:that\s+)?(?:the|it|my|i|
        we|this)\b[^.?!]{0,50}?\b(?:in\ (?:your|the)\ (?:notes|records|system|report|file|log)|
        so\ (?:that\ )?(?:the|i|we|my)\s+(?:\w+\s+){0,2}?(?:pay|pays|get|gets|can|covers?|approves?|
        refunds?|pays\ out))""", cues="say write put note state claim record log"),
    family("adversarial", "coerce_threat", 2.0, r"""
        \b(?:if\ you\ (?:don'?t|do\ not|won'?t|can'?t|refuse)|unless\ you|or\ (?:else\ )?i'?ll|
        if\ i\ (?:don'?t|do\ not)\ (?:get|receive|see|hear)|
        or\ i\ will|otherwise\ i'?ll|or\ (?:else\ )?(?:i'?m|i\ am)\ (?:going\ to|gonna)|
        or\ (?:else\ )?(?:i'?m|i\ am)(?=\ \w+ing))\b[^.?!]{0,80}?
        (?:sue|lawyer|court|legal\ action|report\ you|reporting|posting|authority|
        trading\ standards|bbb|better\ business|consumer|press|media|journalist|news|twitter|
        tiktok|social\ media|review|everyone|every\ \w+\ (?:i'?m\ in|group)|regulator|ombudsman|
        screenshots?|everywhere|online|public|
        chargeback|close\ (?:my|all)|leave|cancel\ everything|make\ sure|go\ viral|
        your\ (?:boss|manager|ceo)|hears?\ (?:about|how))
        |your\ call\.?\s*$|you'?ve\ been\ warned|or\ face\ the\ consequences"""),
    family("adversarial", "coerce_threat", 2.0, r"""
        \b(?:i'?ll|i\ will|i'?m\ going\ to|i\ am\ going\ to|we'?ll|we\ will)\s+[^.?!]{0,60}?
        (?:review|report|sue|post|tweet|complain|dispute|chargeback|lawyer|press|media|
        cancel\ (?:every|all|my)|close\ (?:every|all|my)|take\ my\ business|
        regulator|ombudsman|tell\ everyone)[^.?!]{0,60}?\b(?:unless|if\ you\s+(?:don'?t|
        do\ not|won'?t|can'?t|refuse))\b""", cues="unless if"),
    family("adversarial", "harmful_content", 2.5, r"""
        \b(?:ransomware|malware|keylogger|spyware|botnet|phishing\ (?:email|page|site|kit)|
        credit\ card\ skimmer|exploit\ for|zero-day|ddos|crack\ (?:the|a|this)\ (?:password|
        licen[sc]e)|steal\ (?:\w+\s+)?(?:password|credential|cookie|data|identity)|
        (?:make|build)\ (?:a\ )?(?:bomb|explosive|weapon)|licen[sc]e\ keys?|serial\ keys?|
        keygen|pirated|untraceable)\b"""),
    family("adversarial", "abuse_offer", 1.0, r"""
        \b(?:(?:single-use|one-time|once-only|first-time)\ (?:\w+\s+)?(?:coupons?|codes?|
        vouchers?|discounts?|offers?))\b
        |\b(?:\d+|ten|five|several|multiple|all)\s+(?:of\s+)?(?:the\s+)?(?:\w+\s+)?
        (?:coupons|codes|vouchers)\b
        |\bone\ per\ (?:customer|person|household|account)"""),
    family("adversarial", "just_approve", 1.25, r"""
        \b(?:just|simply)\s+(?:say\ yes|approve|push\ it|put\ it\ through|mark\ it|
        tick\ the\ box|click\ approve|sign\ it\ off|type\ it|enter\ it|change\ it|
        credit\ (?:my|the))\b
        |\b(?:credit|refund|pay|give)\s+(?:my\ account|me)\s+\$?\d+[^.?!]{0,40}\b(?:and|but)
        \s+(?:log|mark|record|call|say)\b
        |\bi\ (?:need|want)\ you\ to\ (?:say\ yes|approve)\b"""),
)

_MORE = (  # later families: social engineering, pasted documents, quoted rules
    family("adversarial", "override_anything", 2.0, r"""
        \b(?:override|bypass|circumvent|get\ around|skip|break|bend|ignore|waive)\s+
        (?:whatever|anything|everything|all\ of\ it|any\ (?:rule|policy|check|limit)s?)\b
        |\b(?:let\ it\ slide|let\ (?:a|the|this|that|my|one)\ (?:\w+\ ){0,2}?slide|
        look\ the\ other\ way|turn\ a\ blind\ eye|let\ (?:it|this|me)\ off
        (?:\ the\ hook)?|off\ the\ books|behind\ the\ scenes|no\ one\ has\ to\ know|
        make\ (?:the|this|that|my|it)\s+(?:\w+\s+)?(?:disappear|go\ away|vanish))\b""",
            cues="override bypass circumvent around skip break bend ignore waive slide "
                 "look blind off books scenes know disappear away vanish"),
    family("adversarial", "injection_markup", 2.5, r"""
        \{\s*"(?:role|system|instructions?|mode|permissions?|limits?|admin|policy|rules)"\s*:
        |\b(?:begin|start|end)\s+(?:of\s+)?(?:admin|system|developer|internal|operator|staff)\s+
        (?:note|message|instructions?|block|override|notice)\b
        |\b(?:admin|system|operator|developer|internal|staff)\s+note\s*:
        |\b(?:apply|load|use|run)\s+(?:it|this|these|the\ following|my\ (?:config|settings))\s+
        before\ anything\ else\b
        |\bpast(?:e|ing)\s+(?:my|the|this|a)\s+(?:config|configuration|settings|instructions|
        prompt|policy)\b""",
            cues="~{\" begin start end note apply load use run paste pasting"),
    family("adversarial", "injection_markup", 2.5, r"""
        \btreat\s+(?:this|the\ following|my)\s+(?:message|text|request|note)\s+as\s+(?:coming\s+
        from|an?\s+(?:instruction|command|order)|from)\b
        |\b(?:this|the\ following)\s+(?:message|text|instruction|request)\s+(?:is|comes)\s+from\s+
        (?:your|the)\s+(?:supervisor|admin|administrator|developer|system|operator|creator|
        manager|owner)""", cues="treat message text instruction request"),
    family("adversarial", "persona_jailbreak", 2.5, r"""
        \bif\ you\ (?:had|didn'?t\ have|were\ without)\s+(?:no\s+|any\s+)?(?:content\s+)?
        (?:polic(?:y|ies)|rules|filters|restrictions|limits|guidelines|guardrails)\b
        |\banswer\ as\s+(?:that|an?|the|your)\s+(?:\w+\s+)?(?:version|persona|character|self)\b
        |\blet'?s\ (?:play\ a\ game|pretend|imagine|role-?play)\b|\bimagine\ you\ (?:are|were)\b
        |\bwith\ no\ (?:limits|rules|restrictions|filters|guardrails|boundaries)\b""",
            cues="had have without answer let's lets imagine limits rules restrictions "
                 "filters guardrails boundaries"),
    family("adversarial", "reveal_instructions", 2.5, r"""
        \b(?:what|which)\s+(?:tools|functions|apis|actions|plugins|commands|endpoints)\s+
        (?:can|do|are)\s+you\b
        |\blist\s+(?:the\s+|your\s+|all\s+(?:the\s+|your\s+)?)?(?:tools|functions|apis|actions|
        plugins|endpoints)\b
        |\b(?:tools|functions)\s+you\s+(?:can\s+)?(?:call|use|have|access)\b
        |\bwhat\s+(?:parameters|arguments)\s+(?:they|it|each|those)\s+take\b""",
            cues="tools functions apis actions plugins commands endpoints parameters arguments"),
    family("adversarial", "others_data", 2.0, r"""
        \b(?:access|login|log-in|password|pin)\s+(?:to|for)\s+(?:his|her|their|someone'?s|
        my\s+\w+'s)\b""", cues="access login log password pin",
            needs="his her their someone's someones my"),
    family("adversarial", "others_data", 2.0, r"""
        \b(?:including|with|and)\s+(?:their|his|her)\s+(?:full\s+)?(?:names|emails?|addresses|
        phone\ numbers|numbers|details|contact\ details|home\ address)\b""",
            cues="their his her", needs="names email emails addresses numbers details address"),
    family("adversarial", "others_data", 2.0, r"""
        \b(?:phone\ number|address|email|number|details)\s+of\s+(?:the\s+)?(?:guy|man|woman|
        person|lady|people|customer|buyer|seller|owner|driver)\s+(?:who|that)\b""",
            cues="guy man woman person lady people customer buyer seller owner driver",
            needs="who that"),
    family("adversarial", "falsify", 2.0, r"""
        \b(?:mark|record|log|list|put)\s+me\s+(?:down\s+)?as\s+(?:having\s+|present|attended|
        completed|passed|done|paid|eligible|verified|approved|qualified)
        |\b(?:change|set|lower|edit|alter|adjust|fudge|tweak|reduce)\s+(?:the|my)\s+(?:\w+\s+)?
        (?:reading|readings|score|mileage|odometer|date|amount|figures?|numbers?|results?|
        grade|timestamp|hours)\s+(?:on\s+(?:the|my)\s+\w+\s+)?(?:to\s+(?:something\s+)?
        (?:lower|higher|less|more|smaller|zero)|down|lower)\b
        |\b(?:no\ ?one|nobody)\s+(?:ever\s+|really\s+)?(?:checks|audits|looks\ at|verifies|
        notices|cares)\b""",
            cues="me reading readings score mileage odometer date amount figure figures "
                 "number numbers result results grade timestamp hours nobody noone one"),
    family("adversarial", "others_data", 2.0, r"""
        \b(?:reset|disable|remove|turn\ off|change)\s+(?:the\s+)?(?:mfa|2fa|two-factor|password|
        pin)\s+(?:on|for)\s+(?:this|that|his|her|their|the|someone'?s)\s+account\b""",
            cues="mfa 2fa two password pin"),
    family("adversarial", "falsify", 2.0, r"""
        \b(?:set|change|update|switch|mark|flag|list|log|record|put)\s+(?:the|my|it|this|that)\s+
        (?:[\w-]+\s+){0,2}?(?:to|as)\s+[^.?!]{1,30}?\bso\s+(?:that\s+)?(?:i|we)\s+(?:can|get|could|
        qualify|don'?t|won'?t)\b""",
            cues="set change update switch mark flag list log record put"),
    family("adversarial", "reveal_instructions", 2.5, r"""
        \b(?:text|messages?|instructions|words|content|everything)\s+(?:you\s+(?:received|were\s+
        given|got|saw|have)\s+)?(?:before|above|prior\ to)\s+(?:my|this|the\ user'?s)\s+
        (?:message|question|request|first\ message)\b""",
            cues="text message messages instructions words content everything"),
    family("adversarial", "false_authority", 2.0, r"""
        \bas\s+your\s+(?:developer|creator|admin|administrator|owner|programmer|engineer|
        operator|maker|trainer)\b
        |\bi\ (?:am|'m)\s+(?:one\ of\s+)?your\s+(?:developers?|creators?|admins?|programmers?|
        engineers?|operators?|makers?|trainers?)\b""",
            cues="developer developers creator creators admin admins administrator owner "
                 "programmer programmers engineer engineers operator operators maker makers "
                 "trainer trainers"),
    family("adversarial", "others_data", 2.0, r"""
        \b(?:which|who)\s+of\s+(?:my|the|our)\s+\w+\s+(?:ordered|bought|booked|rented|stayed|
        purchased|called|lives|lived|sent|paid\ for|complained|reported)\b
        |\b(?:confirm|tell\ me|check|find\ out|let\ me\ know)\s+(?:whether|if)\s+(?:the\s+|a\s+|
        my\s+|mr\.?\s+|mrs\.?\s+|ms\.?\s+|dr\.?\s+)?(?:\w+\s+){0,2}?(?:stayed|is\ staying|
        was\ staying|booked|flew|was\ on|is\ on|is\ a\ (?:customer|patient|guest|member|client)|
        has\ an?\ account|banks\ with|shops\ with)\b""",
            cues="which who confirm tell check find let"),
    family("adversarial", "secrecy", 2.0, r"""
        \b(?:and\s+)?(?:not|without|don'?t|never)\s+(?:log|logging|record|recording|note|noting|
        document|documenting|leave\ a\ record\ of|put\ it\ on\ record)\s+(?:it|this|that|anything|
        the\ \w+)\b
        |\bkeep\s+(?:it|this|that)\s+off\s+(?:the|your)\s+(?:system|records?|books|file)\b""",
            cues="log logging record recording note noting document documenting leave put "
                 "keep"),
    family("adversarial", "injected_document", 2.0, r"""
        \buse\s+(?:mine|my\s+(?:own\s+)?(?:rules|guidelines|instructions|policy|policies|
        terms))\b
        |\b(?:your|the)\s+(?:rules|guidelines|polic(?:y|ies)|instructions|restrictions)\s+
        (?:are|is)\s+(?:outdated|wrong|invalid|void|cancelled|suspended|no\ longer\ valid|
        obsolete|lifted|off)\b""",
            cues="mine rules guidelines policy policies instructions restrictions terms"),
    family("adversarial", "knows_the_rule", 2.0, r"""
        \b(?:you'?re|you\ are)\s+not\s+(?:supposed|meant|allowed|permitted)\s+to\b
        |\b(?:i\ know|i'?m\ aware)\s+(?:it'?s|it\ is|that'?s|you'?re)\s+(?:against|not\ (?:allowed|
        permitted))""",
            cues="supposed meant allowed permitted against"),
    family("adversarial", "permission_claim", 1.25, r"""
        \b(?:you'?re|you\ are)\s+(?:allowed|permitted|authori[sz]ed)\s+to\s+(?:tell|give|share|
        show|do|make|say|send)\b
        |\bif\ i\ mention(?:ed)?\s+(?:his|her|their|the|your)\s+(?:\w+\s+)?name\b
        |\bi\ know\s+(?:the|your)\s+(?:ceo|owner|manager|director|founder|boss)\b
        |\bfriends?\ with\s+(?:the|your)\s+(?:ceo|owner|manager|director|founder|boss)\b""",
            cues="allowed permitted authorised authorized mention mentioned know friend "
                 "friends"),
    family("adversarial", "relative_claim", 1.0, r"""
        \bi'?m\s+(?:his|her|their)\s+(?:mother|father|mum|mom|dad|wife|husband|partner|sister|
        brother|son|daughter|boss|guardian|carer|parent)\b""", cues="i'm im"),
    family("adversarial", "abuse_offer", 1.5, r"""
        \b(?:second|another|extra|more\ than\ one)\s+(?:welcome|sign-?up|first-?time|
        new\ customer|referral|intro(?:ductory)?)\s+
        (?:bonus|offer|discount|voucher|credit|deal)\b""",
            cues="second another extra more"),
    family("adversarial", "proxy_account", 1.0, r"""
        \b(?:new|second|another)\s+account\s+(?:under|in)\s+(?:my\s+)?\w+(?:'s)?\s+name\b""",
            cues="new second another"),
    family("adversarial", "account_takeover", 2.0, r"""
        \b(?:send|change|switch|redirect|forward)\s+(?:the\s+|my\s+)?(?:password\s+reset|reset|
        verification|login|2fa|otp|security|one-time)\s+(?:link|code|email|text|pin)s?\s+to\s+
        (?:this|a|another|my\s+new|a\s+different)\b[^.?!]{0,30}?\b(?:instead|other|different|
        new)\b""", cues="send change switch redirect forward"),
    family("adversarial", "dont_follow_rules", 2.0, r"""
        \b(?:don'?t\ give\ me|drop|skip|forget|stop|cut|ditch|enough\ with|spare\ me|
        no\ more|without)\s+(?:the|your|all\ the|this)\s+(?:\w+\s+)?(?:script|scripts|act|
        spiel|routine|canned\ \w+|policy\ talk|company\ line|party\ line|corporate\ \w+)\b
        |\b(?:outside|around)\s+(?:the|your)\s+(?:normal|usual|standard|official|regular)\s+
        (?:flow|process|procedure|channels?|system|rules)\b|\bunder\ the\ radar\b
        |\boff\ the\ system\b""",
            cues="script scripts act spiel routine canned talk line corporate outside around "
                 "radar off"),
    family("adversarial", "injection_markup", 2.5, r"""
        ={3,}\s*(?:end\s+)?(?:config|configuration|system|instructions?|admin|settings|policy)
        |\b[a-z]+_[a-z_]+\s*[:=]\s*(?:false|true|none|null|off|on|0|unlimited)\b""",
            cues="~=== ~: ~="),
    family("adversarial", "injected_document", 2.0, r"""
        \b(?:email|memo|message|note|letter|instruction|directive)\s+(?:your|the)\s+
        (?:[\w']+\s+){0,3}?(?:sent|wrote|gave|issued|forwarded)\s+(?:me|us)\b
        |\bquoting\s+(?:your|the)\s+(?:own\s+)?(?:internal\s+)?(?:memo|policy|manual|guidelines|
        rules|email|handbook)
        |\b(?:your|the)\s+(?:own\s+)?internal\s+(?:memo|manual|guidelines|email|policy|document|
        handbook|wiki)\s*(?:says|said|states|:)""",
            cues="email memo message note letter instruction directive quoting internal"),
    family("adversarial", "false_authority", 1.25, r"""
        \bi'?m\ from\ (?:the|your)\s+(?:[\w']+\s+){0,2}?(?:head\ office|headquarters|hq|
        compliance|audit|security|fraud|legal|it|regulator|government|police|board)\b""",
            cues="office headquarters hq compliance audit security fraud legal it regulator "
                 "government police board", needs="i'm im"),
    family("adversarial", "queue_jump", 1.0, r"""
        \b(?:bypass|skip|jump|cut)\s+(?:the\s+)?(?:queue|line|waitlist|wait\ list|
        waiting\ list)\b""", cues="queue line waitlist wait waiting"),
    family("adversarial", "audit_claim", 1.0, r"""
        \b(?:doing|conducting|running|carrying\ out)\s+an?\s+(?:audit|investigation|inspection|
        security\ review|
        compliance\ check)\b""", cues="audit investigation inspection review check"),
    family("adversarial", "identity_assertion", 1.0, r"""
        \b(?:it'?s\ (?:really\ )?me|trust\ me|i\ promise\ it'?s\ (?:me|mine)|(?:obviously|clearly|
        definitely)\ (?:me|mine)|it'?s\ definitely\ mine|i'?m\ (?:obviously|clearly)\ (?:the\ )?
        (?:account\ holder|owner|me))\b""", cues="me trust mine"),
    family("adversarial", "lost_factor", 1.25, r"""
        \b(?:don'?t|do\ not|no\ longer)\s+have\s+(?:access\ to\s+)?(?:the|my|that)\s+(?:old\s+)?
        (?:phone|email|number|device|authenticator|sim|id)\b[^.?!]{0,40}[.!,]?\s*(?:just\s+)?
        (?:unlock|reset|change|give|let\ me|remove|turn\ off|disable|bypass|send)\b""",
            cues="have"),
    family("adversarial", "rules_dont_apply", 1.25, r"""
        \b(?:it'?s|it\ is|that'?s|its)\s+(?:just\s+|only\s+|really\s+|all\s+)?(?:a\s+)?
        (?:formality|technicality|box-ticking|red\ tape|just\ a\ number|a\ number)\b""",
            cues="formality technicality box ticking tape number"),
    family("adversarial", "falsify", 2.0, r"""
        \btell\s+(?:the\s+|your\s+)?(?:system|computer|database|record)\s+(?:that\s+)?
        (?:i'?m|i\ am|it'?s|it\ is|we'?re|i\ was|i\ have)\b
        |\b(?:bump|boost|raise|increase|lower|tweak|fudge|adjust|nudge)\s+(?:up\s+)?(?:my|the)\s+
        (?:credit\ score|score|rating|grade|balance|limit|points|record|reading)\s+(?:up\s+)?
        (?:in\s+(?:your|the)\s+(?:system|records?|database)|a\ (?:little|bit))\b""",
            cues="tell bump boost raise increase lower tweak fudge adjust nudge"),
    family("adversarial", "vip_entitlement", 1.0, r"""
        \b(?:everyone|everybody|other\ (?:people|customers))\s+(?:else\s+)?(?:gets|got|get|has|
        had)\s+(?:it|the\s+\w+|a\s+\w+|this|that|one)\b""", cues="everyone everybody other"),
    family("adversarial", "others_data", 2.0, r"""
        \b(?:email|address|number|phone|details|name)\s+of\s+whoever\b
        |\b(?:contact|visit|find|call|message)\s+(?:them|him|her)\s+at\s+home\b
        |\bhome\s+(?:address|number|phone)\s+of\b""", cues="whoever home"),
    family("adversarial", "coerce_threat", 2.0, r"""
        \bi'?ll\s+(?:give\s+you|leave|write|post)\s+(?:you\s+)?(?:a|an)\s+(?:[\w-]+\s+)?(?:rating|
        review|tip|bonus|reward)\s+if\s+you\b""", cues="rating review tip bonus reward"),
    family("adversarial", "falsify", 1.25, r"""
        \b(?:add|put|leave|make)\s+a\s+note\s+(?:on\s+\w+\s+|in\s+\w+\s+|to\s+\w+\s+)?(?:\w+\s+)?
        that\s+(?:i|we)\s+(?:already\s+)?(?:returned|paid|sent|attended|completed|delivered|
        cancelled)\b""", cues="note"),
    family("adversarial", "later_promise", 1.0, r"""
        \bi'?ll\s+(?:send|pay|return|do|post|bring|watch|finish|sort)\s+(?:it|them|that|the\s+\w+)
        \s+(?:next|later|tomorrow|in\ a|after)\b""", cues="later next tomorrow after"),
)
ADVERSARIAL = (*_CORE, *_MORE)
"""Every adversarial family."""

ADVERSARIAL_GUARDS = (
    # Security, prompts and overrides as a topic (coding help, a lesson), not an attack.
    family("adversarial", "topic_guard", -2.5, r"""
        \b(?:how\ (?:do|does|can|could|would|should|to)|explain|what\ is|what\ are|
        what'?s|defend|protect|prevent|detect|mitigate|guard\ against|test\ for|
        secure|sanitize|sanitise|avoid|write\ a|review|design|structure|best\ practice)\b
        [^.?!]{0,60}?\b(?:injection|jailbreak\w*|system\ prompts?|prompt\ engineering|
        malware|phishing|override\ (?:a|the)\ (?:method|function|default|setting|style|
        config\w*|property|operator)|__\w+__|@override|overrid(?:e|ing)\ \w+\ (?:method|
        in\ (?:css|python|java|a\ subclass)))
        |^\s*(?:hi,?\s+|hello,?\s+)?how\ (?:do|can|could|would|should)\ (?:i|we)\ (?:turn\ off|
        disable|switch\ off|remove|reset|change|update|set\ up|enable|turn\ on)\b"""),
    family("adversarial", "policy_question", -1.5, rf"""
        ^(?:[^.?!]*\b(?:what'?s|what\ is|what\ are|explain|could\ you\ explain|can\ you\ explain|
        tell\ me\ about|how\ does|is\ there|do\ you\ have|where\ can\ i\ (?:find|read)|
        does\ your)\b[^.?!]*\b{RULES}\b[^.?!]*\?)\s*$"""),
)


