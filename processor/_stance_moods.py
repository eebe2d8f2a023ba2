"""Frustrated, hurried and unsure families of the stance detector (see
:mod:`processor._stance_patterns`)."""

from __future__ import annotations

from processor._stance_family import (
    CONTACT,
    COUNT,
    EMOTION,
    ORDINAL,
    SMALL_NUMBER,
    TIME_UNIT,
    family,
)

# --- frustrated --------------------------------------------------------------------------

FRUSTRATED = (
    family("frustrated", "emotion", 1.5, rf"\b{EMOTION}\b"),
    family("frustrated", "repeated_contact", 1.25, rf"""
        \b(?:the\ |my\ |our\ |this\ is\ (?:the|my)\ )?{ORDINAL}\ (?:time|call|email|message|
        ticket|attempt|request|complaint|chat|week|month|day|outage|failure|delay|
        cancellation|issue|problem|incident|breakdown|mistake|error|wrong\ \w+|missed\ \w+|
        visit|engineer|technician|replacement|reminder|letter)\b""",
            cues="third fourth fifth sixth seventh eighth ninth tenth umpteenth nth th "
                 "hundredth millionth 3rd 4th 5th 6th 7th 8th 9th 10th 11th 12th 20th"),
    family("frustrated", "repeated_contact", 1.25, rf"""
        \b{CONTACT}\s+(?:\w+\s+){{0,4}}?{COUNT}\s+times\b
        |\b{COUNT}\s+(?:tickets|emails|calls|messages|complaints|chats|requests|times)\b
        [^.?!]{{0,40}}?\b(?:and|but|still|got|with|nothing|no\ )""",
            cues="times tickets emails calls messages complaints chats requests"),
    family("frustrated", "repeated_contact", 1.25, r"""
        \b(?:yet\ again|again\ and\ again|over\ and\ over|time\ after\ time|
        every\ single\ (?:time|day|week|month)|every\.\s*single\.\s*time|
        keeps?\ (?:happening|breaking|failing|crashing|dropping))\b""",
            cues="yet again over after every keep keeps"),
    family("frustrated", "repetition", 0.75, r"""
        \b(?:every|each)\ (?:time|day|week|month|update|release)\b
        |\b(?:second|2nd)\ (?:time|call|email|message|ticket|attempt|request|complaint|outage|
        failure|delay|cancellation|issue|problem|mistake|error)\b""",
            cues="every each second 2nd"),
    family("frustrated", "repeated_contact", 1.25, r"""
        \b(?:still\ (?:nothing|no\ (?:answer|reply|response|word|update|refund|sign|one))|
        nobody\ (?:can|will|has|is|cares|answers|replies|reads|bothered|told|warned|called|
        cared|helped|responded|showed|came|turned\ up)|
        no\ ?one\ (?:can|will|has|cares|answers|replies|reads|got\ back|gets\ back)|
        (?:does|do)\ (?:anyone|anybody)\ (?:\w+\ )?(?:read|care|answer|work|know))\b""",
            cues="still nobody noone one anyone anybody"),
    family("frustrated", "you_keep", 1.0, r"""
        \b(?:you|you\ guys|your\ \w+|they|it|this|the\ \w+)\s+(?:keeps?|kept)\s+(?:on\s+)?\w+ing\b
        |\bi\ keep\ (?:getting|being|having|receiving)\b
        |\bstop\s+(?:\w+ing|sending|calling|charging|texting|emailing)\b
        |\b(?:for|after)\s+(?:over\s+)?(?:\d+|two|three|four|five|six|several|many)\s+
        (?:hours|hrs|days|weeks|months)\b[^.?!]{0,60}?\b(?:still|nothing|no\ |and\ no|
        waiting|trying|chasing|no\ one|nobody)
        |\b(?:been\ )?(?:waiting|trying|chasing)\s+(?:for\s+)?(?:over\s+)?(?:\d+|two|three|
        four|five|six|several|many)\s+(?:hours|hrs|days|weeks|months)\b"""),
    family("frustrated", "sarcasm_exasperation", 1.25, r"""
        \b(?:seriously|really|honestly|come\ on|are\ you\ kidding|you'?re\ kidding|
        kidding\ me|unreal|wow|great\ job|well\ done|thanks\ (?:a\ lot|for\ nothing))
        \b\s*[?!.]""",
            cues="seriously really honestly come kidding unreal wow job done lot nothing"),
    family("frustrated", "sarcasm_exasperation", 1.25, r"""
        \b(?:how\ hard\ can\ it\ be|how\ is\ (?:that|this)\ (?:ok|okay|acceptable|possible)|
        what\ is\ (?:wrong|going\ on)\ with\ (?:you|your)|this\ is\ a\ joke|what\ a\ joke|
        it'?s\ 20\d\d|explain\ how\ (?:that|this)\ is|nothing\ they\ can\ do)\b\s*[?!.]
        |\bhow\ (?:many\ more|much\ longer)\b[^.?!]{0,40}?\b(?:times|wait|have\ to|do\ i)\b""",
            cues="hard acceptable possible wrong joke it's longer more explain nothing"),
    family("frustrated", "sarcasm_exasperation", 1.25, r"""
        \bwhy\ (?:does|do|is|can'?t|won'?t)\ (?:it|this|you|your)\b[^.?!]{0,40}?
        (?:so\ hard|always|never|every|still)\b[^.?!]*[?!.]""", cues="why"),
    family("frustrated", "interjection", 1.0, r"""
        (?:^|\W)(?:omg|ugh+|argh+|ffs|wtf|smh|fml|jeez|geez|for\ god'?s\ sake|
        for\ crying\ out\ loud|ffs|good\ grief|give\ me\ a\ break)(?:\W|$)"""),
    family("frustrated", "exclamations", 1.0, r"!!+|\?\?+|\?!|!\?"),
    family("frustrated", "not_acceptable", 1.0, r"""
        \bnot\ (?:ok|okay|good\ enough|acceptable)\b|\bunprofessional\b|\bdisrespectful\b""",
            cues="ok okay enough acceptable unprofessional disrespectful"),
    family("frustrated", "not_acceptable", 1.0, r"""
        \bno\ (?:water|apology|explanation|updates|help|response|reply)\b""",
            cues="water apology explanation updates help response reply", needs="no"),
    family("frustrated", "not_acceptable", 1.0, r"""
        \b(?:nothing\ (?:happened|works|changed|was\ done)|did\ nothing|and\ nothing|
        left\ (?:me|us)\ (?:hanging|stranded|waiting)|waste\ of\ (?:time|money)|
        wasted\ (?:\w+\ )?(?:hours|time|days)|threw|broke\ (?:it|my)|ruined|breaks\ something|
        broken\ again|down\ again|(?:with\ )?zero\ (?:explanation|claims|help|response|notice|
        warning)|want\ (?:someone|somebody|a\ manager)\ to\ explain|charged\ (?:a|me|us)\s+
        (?:\w+\s+)?fee\s+(?:for|after)|(?:four|4|five|5|six|6)\ automated)""",
            cues="nothing hanging stranded waste wasted threw broke ruined breaks again zero "
                 "someone somebody manager charged automated"),
)


# --- hurried -----------------------------------------------------------------------------

HURRIED = (
    family("hurried", "urgency_words", 1.5, r"""
        \b(?:asap|right\ now|right\ away|straight\ away|immediately|at\ once|
        urgently|this\ minute|this\ second|pronto|without\ delay|hurry|rush(?:ing)?|
        in\ a\ rush|quickly|quick(?=\s*[!:?,.]|\s*$|\ (?:please|pls|question|one|answer|q|qn|ques))|
        fast(?:est)?(?=\s*[!:?,.]|\s*$|\ (?:please|pls|fix|way|option))|
        speed\ (?:it|this|things)\ up|speed\ please|speedy|as\ soon\ as\ (?:possible|you\ can)|
        expedite|
        snappy|chop[- ]chop|step\ on\ it|
        fast-?track|
        deadline\ is)\b""",
            cues="asap right straight immediately once urgently minute second pronto delay "
                 "snappy chop step "
                 "hurry rush rushing quickly quick fast fastest speed soon deadline expedite "
                 "fasttrack track"),
    family("hurried", "urgency_words", 1.5, r"""
        \b(?:no\ time\ to\ (?:lose|waste)|time[- ](?:sensitive|critical)|
        (?:the\ )?clock'?s?\ (?:is\ )?ticking|time\ is\ (?:short|
        running\ out|
        of\ the\ essence)|short\ on\ time|pressed\ for\ (?:time|a\ (?:sec|second|minute|
        moment))|no\ time|not\ much\ time|
        (?:don'?t|do\ not)\ have\ (?:much\ |the\ |any\ )?time|running\ (?:late|out\ of\ time)|
        before\ it'?s\ too\ late)\b""", cues="pressed time late clock clock's ticking"),
    family("hurried", "urgency_words", 1.5, r"""
        \bneed\ (?:this|it|them|that)\ (?:done\ |sorted\ |fixed\ )?(?:now|today|tonight)\b
        |\bnow\ (?:please|pls|plz)\b|\bnow[!.]*\s*$""", cues="now today tonight"),
    family("hurried", "urgent_predicate", 1.5, r"""
        \b(?:it'?s|this\ is|is|very|super|really|extremely|most|pretty|quite|so)\s+urgent\b
        |\burgent(?:ly)?\s*(?:[!:]|$)|^urgent\b|\burgent\s+(?:please|pls|help|request)\b"""),
    family("hurried", "deadline_window", 1.25, rf"""
        \b(?:in|within|under|next|only\ have|got|have|left|about)\s+(?:the\ next\s+)?
        (?:{SMALL_NUMBER})\s*(?:-\s*)?{TIME_UNIT}\b(?!\s+of\b)
        (?![^.?!,]{{0,25}}\b(?:tomorrow|next\s+\w+|on\s+\w+day)\b)
        |\b(?:in|within)\s+(?:the\ |an?\ )?(?:hour|half\ (?:an\ )?hour|few\ minutes|minute)\b
        |\b{SMALL_NUMBER}\s*{TIME_UNIT}\s+(?:out|away|left|to\ go|from\ now)\b""",
            cues="hour hours ~min ~sec ~hr"),
    family("hurried", "deadline_window", 1.25, r"""
        \b(?:it'?s|its)\s+\d{1,2}[:.]\d\d\b""", cues="it's its"),
    family("hurried", "deadline_window", 1.25, r"""
        \b(?:at|by|before|till|until)\s+(?:\d{1,2}(?:[:.]\d\d)?\s*(?:am|pm)?|noon|midnight)\b
        [^.?!]{0,40}?(?:\b(?:today|tonight|now)\b|!)""", cues="today tonight now ~!"),
    family("hurried", "deadline_window", 1.25, r"""
        \b(?:closing|boarding|leaving|departing|takes\ off|starts|renews|closes|ships|
        leaves|expires|due)\s+(?:in|at|today|tonight|at\ midnight)\b
        (?!\s+(?:\d+|a\ few|several|two|three|six)\s+(?:days|weeks|months|years))
        (?![^.?!,]{0,15}\b(?:tomorrow|next\s+\w+|on\s+\w+day)\b)""",
            cues="closing boarding leaving departing takes starts renews closes ships leaves "
                 "expires due"),
    family("hurried", "deadline_window", 1.25, r"""
        \bby\ (?:end\ of\ (?:the\ )?day|eod|close\ of\ business|cob|tonight|this\ afternoon|
        this\ evening|tomorrow\ morning)\b""",
            cues="end eod close cob tonight afternoon evening morning"),
    family("hurried", "deadline_window", 1.25, r"""
        \b(?:or|otherwise)\s+(?:we|i)(?:'ll|\ will)?\s+(?:lose|miss|be\ late|get\ charged|
        be\ stuck)\b""", cues="lose miss late charged stuck"),
    family("hurried", "deadline_window", 1.25, r"""
        \b(?:landing|boarding|leaving|departing|closing|starting|arriving|due|ready|back)\s+in\s+
        (?:\d{1,3}|five|ten|fifteen|twenty|thirty)\b(?!\s*(?:days|weeks|months|years))""",
            cues="landing boarding leaving departing closing starting arriving due ready back"),
    family("hurried", "emergency", 1.25, r"""
        \b(?:locked\ out|flooding|flooded|burst\ pipe|water\ everywhere|on\ fire|smoke\ alarm|
        stranded|broke\ down|broken\ down|stuck\ (?:at|in|on)|emergency(?!\ (?:contact|fund|
        room\ visits?|appointments?|dental|number|services\ cover))|can'?t\ get\ (?:in|home))\b""",
            cues="locked flooding flooded burst water fire smoke stranded broke broken stuck "
                 "emergency get"),
    family("hurried", "pressure_context", 1.25, r"""
        \b(?:i'?m|we'?re|i\ am|we\ are)\s+(?:\w+\s+)?(?:late|boarding|at\ the\ (?:gate|desk|
        counter|airport|door)|about\ to\ (?:board|leave|fly)|walking\ in|on\ my\ way|
        on\ our\ way|outside|in\ the\ (?:car|taxi|queue|line)|leaving\ (?:now|soon))\b""",
            cues="late boarding gate desk counter airport door board leave fly walking way "
                 "outside car taxi queue line leaving"),
    family("hurried", "pressure_context", 1.25, r"""
        \b(?:taxi|cab|uber|driver|they'?re|they\ are|everyone'?s|people\ are)\s+
        (?:is\ |are\ )?(?:outside|waiting)\b
        |\bjust\ (?:landed|missed|arrived)\b
        |\b(?:production|prod|the\ site|our\ site|everything)\s+is\ down\b""",
            cues="outside waiting landed missed arrived down"),
    family("hurried", "pressure_context", 1.25, r"""
        \b(?:travelling|traveling|flying|leaving|flight|meeting|interview|appointment|
        closing)\s+(?:\w+\s+){0,3}?(?:is\s+)?(?:in\s+(?:an?\ |\d+\ )|at\s+\d|
        tomorrow\ morning|today|tonight|shortly)\b""",
            cues="travelling traveling flying leaving flight meeting interview appointment "
                 "closing"),
    family("hurried", "pressure_context", 1.25, r"""
        \b(?:need\ to|have\ to|must)\ (?:decide|leave|go|know)\s+(?:\w+\s+)?(?:now|soon|today|
        tonight|fast|quickly)\b""", cues="now soon today tonight fast quickly"),
    family("hurried", "pressure_context", 1.25, r"""
        \b(?:(?:need|want|get|book|looking\ for)\s+(?:a\ |an\ )?same[- ]day|today\ only|
        any\ (?:\w+\ )?(?:room|doctor|seat|flight|slot|table)(?!\ (?:next|later|this\ week))|
        (?:whatever|anything)\s+(?:that\s+)?(?:gets|leaves|is\ (?:quickest|fastest|soonest|
        first)|works|goes)|
        whatever'?s\ (?:available|quickest|fastest)|i'?ll\ take\ (?:whatever|anything|
        any))\b""", cues="same today any whatever whatever's i'll anything"),
    family("hurried", "brevity", 1.25, r"""
        \b(?:yes\ or\ no|short\ answer|one[- ]word\ answer|tl;?dr|no\ (?:commentary|
        explanations?|chit-?chat|small\ talk|lecture|essay|fluff|details|need\ to\ explain)|
        skip\ the\ (?:questions|explanation|details|small\ talk|pleasantries|chat|intro)|
        cut\ to\ the\ chase|get\ to\ the\ point|straight\ to\ the\ point|
        (?:don'?t|do\ not)\ (?:need|want)\ (?:the\ |an?\ )?(?:explanation|details|lecture|
        essay)|keep\ it\ (?:short|brief|quick)|be\ brief|briefly|in\ brief|brief\ answer|
        quick\ answer|short\ version|bullet\ points\ only|answer\ only)\b""",
            cues="cut chase point yes short tl tldr commentary explanation explanations chit "
                 "chat small "
                 "lecture essay fluff details explain skip keep bullet answer brief briefly quick "
                 "version"),
    family("hurried", "brevity", 1.25, r"""
        \b(?:(?:just|only)\ (?:tell|give|send|confirm|email|text)\s+me|
        (?<!it's\ )(?<!its\ )just\ (?:the|a)\ (?:answer|link|number|code))\b""", cues="just only"),
)

TIME_BUDGET = (
    # How much time the person has, said without "urgent": a budget in minutes, someone or
    # something waiting on them, a battery running out, a meeting about to start.
    family("hurried", "deadline_window", 1.25, r"""
        \b(?:\d{1,2}|five|ten|two|three|fifteen|twenty|a\ few|few|a\ couple\ of|couple\ of)\s*
        (?:-\s*)?(?:min|mins|minutes|
        secs|seconds)\b(?!\s+(?:ago|late|walk|drive|away\ from))
        (?![^.?!,]{0,25}\b(?:tomorrow|next\s+\w+|on\s+\w+day)\b)(?=\s*(?:[.,!;:)\-\u2013\u2014]|$|
        before|left|till|until|to\ (?:spare|go)|max|tops|between))""",
            cues="min mins minutes secs seconds"),
    family("hurried", "deadline_window", 1.25, r"""
        \b(?:stand-?up|meeting|call|class|flight|train|bus|appointment|interview|demo|
        presentation|shift|exam)\s+(?:starts\s+)?in\s+(?:\d{1,2}|five|ten|fifteen|twenty)
        \b(?!\s*(?:days|weeks|months|years|hours))""",
            cues="standup stand meeting call class flight train bus appointment interview "
                 "demo presentation shift exam", needs="in"),
    family("hurried", "deadline_window", 1.25, r"""
        \b(?:ends|finishes|closes|leaves|starts|expires|runs\ out|is\ over|boards|departs)\s+
        in\s+(?:\d{1,2}|five|ten|fifteen|twenty|thirty)\b
        (?!\s*(?:days?|weeks?|months?|years?|hours?|hrs?|[-:/.]\d))""",
            cues="ends finishes closes leaves starts expires runs over boards departs",
            needs="in"),
    family("hurried", "deadline_window", 1.25, r"""
        \bin\s+the\s+next\s+(?:minute|few\s+minutes|\d{1,2}\s*(?:min|mins|minutes)|hour|
        half\s+(?:an\s+)?hour|couple\s+of\s+minutes)\b""",
            cues="next"),
    family("hurried", "deadline_window", 1.25, r"""
        \b(?:meeting|class|call|flight|train|show|movie|game|exam|interview|shift|lesson|
        boarding)(?:'s|\s+is)\s+(?:about\s+to\s+)?(?:starting|start|leaving|boarding|closing)\b""",
            cues="meeting's class's call's flight's train's show's meeting class call flight "
                 "train show movie game exam interview shift lesson boarding",
            needs="starting start leaving boarding closing"),
    family("hurried", "time_budget", 1.25, r"""
        \bdouble[- ]parked\b|\bparked\s+on\s+(?:a\s+)?double\s+yellows?\b
        |\b(?:engine|meter)\s+(?:is\s+)?running\b
        |^(?:hi\W+)?on\s+(?:the|my)\s+way\s+to\b""",
            cues="double parked engine meter way"),
    family("hurried", "deadline_window", 1.25, r"""
        \b(?:a\s+)?(?:\d{1,2}|two|five|ten|fifteen)[- ](?:min|minute|second|sec)\s+(?:window|
        gap|slot)\b""",
            cues="window gap slot"),
    family("hurried", "time_budget", 1.25, r"""
        \b(?:heading|going|head|leaving|off|logging\s+off)\s+(?:out\s+)?in\s+(?:\d{1,2}|five|
        ten|a\s+(?:sec|second|minute|moment))\b(?!\s*(?:days|weeks|months|years|hours))""",
            cues="heading going head leaving off logging", needs="in"),
    family("hurried", "time_budget", 1.25, r"""
        \b(?:can'?t|cannot|won'?t\ be\ able\ to)\s+(?:(?:stay|talk|chat)\b(?:\s*(?:long|
        now|right\ now|much\ longer)\b)?|wait\s+(?:long|now|right\ now|much\ longer|
        any\ longer|around|on\ hold|for\ (?:this|you|hours|days|ages))\b)""",
            cues="stay talk chat wait", needs="can't cant cannot won't"),
    family("hurried", "time_budget", 1.25, r"""
        \b(?:don'?t|do\ not)\s+have\s+(?:long|all\ day|ages)\b
        |\bwhile\s+i\s+(?:still\s+)?(?:can|have\s+(?:signal|battery|time))\b""",
            cues="long day ages while"),
    family("hurried", "time_budget", 1.25, r"""
        \b(?:heading|going|walking|about\s+to\s+(?:go|head|walk))\s+(?:into|in\s+to|to)\s+
        (?:a\s+|my\s+|the\s+)?\w+(?:\s+\w+)?\s+(?:shortly|now|soon|in\s+a\s+(?:sec|second|
        minute|moment|bit))\b""",
            cues="heading going walking about", needs="shortly now soon sec second minute "
                                                        "moment bit"),
    family("hurried", "time_budget", 1.25, r"""
        \b(?:gotta|got\ to|have\ to|need\ to|must)\s+(?:run|dash|fly|head\ off|go)
        (?=\s*[,.!;:\-\u2013\u2014]|\s*$|\s+(?:now|soon|in\ a))""",
            cues="run dash fly head go", needs="gotta got have need must"),
    family("hurried", "someone_waiting", 1.25, r"""
        \b(?:taxi|cab|uber|driver|courier|delivery\ (?:guy|driver|man)|reviewer|assessor|
        plumber|engineer|landlord|client|guests|kids|everyone|people|they|he|she|boss|
        it|bus|train)(?:'s|\ is|\ are|'re)\s+(?:already\s+|still\s+)?(?:here|waiting|
        outside|arriving|at\ (?:my|the)\ door|behind\ me|leaving|pulling\ (?:in|up|out)|
        about\ to\ (?:leave|go|close))\b
        |\b(?:guests|visitors|kids|movers|customers|patients)\s+(?:are\s+|'re\s+)?(?:arriving|
        waiting|here|outside)\b
        |\b(?:people|someone|a\ queue|a\ line)\s+(?:are\s+|is\s+)?(?:waiting|queu(?:e|ing))
        \s+(?:behind|for)\s+me\b
        |\b(?:is|'s)\s+waiting\s+on\s+me\b
        |\b(?:advisor|adviser|agent|bank|someone|doctor|pharmacist|they|she|he)\s+(?:is\s+|
        's\s+)?(?:on\ hold|on\ the\ (?:other\ )?line)\b
        |\b(?:the|my|our)\s+\w+s\s+(?:are|'re)\s+(?:already\s+|still\s+)?(?:waiting|outside|
        at\ the\ door)\b""",
            cues="here waiting outside arriving door behind leaving queue queuing hold line "
                 "pulling about"),
    family("hurried", "someone_waiting", 1.25, r"""
        \b(?:phone|battery|laptop)(?:'s|\s+is)?\s+(?:at\s+|on\s+)?(?:\d{1,2}\s*%|dying|
        about\ to\ die|almost\ dead|nearly\ dead)
        |\b(?:low|dying)\s+battery\b|\bbad\s+signal\b|\bsignal\s+is\s+(?:bad|patchy|
        dropping)|\babout\s+to\s+(?:lose|run\s+out\s+of)\s+(?:signal|battery|connection|
        reception|wifi|charge)\b
        |\bbefore\s+i\s+lose\s+(?:you|signal|the\s+signal|connection|battery|reception)\b
        |\b(?:about\s+to|going\s+to)\s+(?:go|drive|head)\s+(?:into|through)\s+a\s+tunnel\b
        |\b(?:meter|parking|ticket|session|time)(?:'s|\s+is)\s+(?:about\s+to|going\s+to)\s+
        (?:run\s+out|expire|end)\b""",
            cues="phone phone's battery battery's laptop low dying bad signal about lose "
                 "tunnel "
                 "meter's meter parking ticket session time"),
    family("hurried", "on_the_move", 1.25, r"""
        ^(?:hi[,!]?\s+)?(?:i'?m\s+|we'?re\s+)?(?:standing|sitting|stuck|waiting|already)?\s*
        (?:on|in|at|between)\s+(?:a\s+|my\s+|the\s+)?(?:\w+\s+)?(?:meeting|meetings|
        lunch\ break|break|call|train|bus|plane|queue|line|reception|waiting\ room|till|
        checkout|counter|gate|desk|door|car|taxi|cab|airport|station|terminal|platform|
        check-?in|security)\b""",
            cues="meeting meetings lunch break call train bus plane queue line reception "
                 "waiting till checkout counter gate desk door car taxi cab airport station "
                 "terminal platform checkin check security"),
    family("hurried", "on_the_move", 1.25, r"""
        \b(?:already|running)\s+(?:late|behind)\b|\bbehind\s+schedule\b|\blate\s+for\s+(?:work|school|class|my|a|the|
        an)\b
        |\b(?:running|rushing|dashing|racing|sprinting)\s+(?:between|to|for|through|across)\s+
        (?:the\s+|my\s+|a\s+)?\w+
        |\b(?:walking|heading|running|halfway)\s+out\s+(?:the|of\ the)\s+(?:door|house|office)\b
        |\b(?:i'?m|we'?re|i\ am)\s+(?:standing\s+|stuck\s+|waiting\s+|literally\s+)?(?:at|in)\s+
        (?:the|a)\s+(?:checkout|till|queue|counter|reception|pharmacy|platform|check-?in|
        gate)\b""",
            cues="late behind running rushing dashing racing sprinting walking heading halfway "
                 "out "
                 "checkout till queue counter reception pharmacy platform checkin check gate"),
    family("hurried", "before_it_happens", 1.25, r"""
        \bbefore\s+(?:they|it|he|she|the\s+\w+|my\s+\w+)\s+(?:start|starts|goes|go|gets|leave|
        leaves|wake|wakes|wake\ up|wakes\ up|arrive|arrives|close|closes|shuts|get\ back|
        gets\ back|come\ back|comes\ back|walks\ in|walk\ in|comes\ in|come\ in|gets\ home|
        get\ home|sees|notices|finds\ out)\b(?!\s+(?:next|tomorrow|on\ \w+day))
        |\b(?:need|needs|want|wants)\b(?!\s+to\s+(?:arrive|be|get|land|reach|leave))
        [^.?!]{0,50}?\b(?:by|before)\s+(?:noon|midday|
        midnight|\d{1,2}(?::\d\d)?\s*(?:am|pm)?)(?=\s*(?:[.,!;]|$|today|tonight|this|
        and|,|baby|or))""",
            cues="before by"),
    family("hurried", "terse_demand", 1.25, r"""
        \b(?:steps|link|number|code|answer|command|facts)\s+only\b
        |\b(?:straight|simple|plain|direct)\s+answer\b
        |\bbottom\s+line(?:\s+only)?\s*[:,\-\u2013\u2014]""",
            cues="only line answer"),
    family("hurried", "terse_demand", 1.25, r"""
        \bno\s+(?:long|lengthy|big|essay|wordy)\s+(?:answers?|explanations?|replies|
        messages|paragraphs)\b
        |\bno\s+(?:essays|novels|paragraphs|waffle|waffling|lectures|speeches)\b""",
            cues="long lengthy big essay wordy essays novels paragraphs waffle waffling "
                 "lectures speeches", needs="no"),
    family("hurried", "terse_demand", 1.25, r"""
        \bin\s+(?:one|two|three|a\ few|1|2|3)\s+(?:sentences?|lines?|words?|messages?)\b
        |\bone[- ]?liner\b|\bone\s+message\b""",
            cues="sentence sentences line lines words word messages message liner oneliner"),
    family("hurried", "terse_demand", 1.25, r"""
        \bthat'?s\s+all[.!]*\s*$|,\s*go[.!]*\s*$""", cues="all go"),
    family("hurried", "terse_demand", 1.25, r"""
        \b(?:don'?t|do\ not|no)\s+(?:ask|asking)\s+(?:me\s+)?(?:any\s+)?(?:more\s+)?
        (?:questions|follow-?ups?)\b""", cues="ask asking"),
    family("hurried", "terse_demand", 1.25, r"""
        \b(?:don'?t|do\ not)\s+(?:need|want)\s+(?:the|a|your)\s+(?:whole|full|entire|
        long)\s+\w+""", cues="whole full entire long", needs="need want"),
)
"""Hurried without the words "urgent" or "asap": time budgets and pressure of the moment."""

HURRIED_GUARDS = (
    family("hurried", "no_rush", -1.5, r"""
        \bno\s+(?:rush|hurry|urgency)\b|\bnot\s+(?:urgent|in\s+a\s+(?:rush|hurry))\b
        |\b(?:whenever|when)\s+(?:you\s+(?:get\s+a\s+chance|can|have\s+time)|it'?s\s+convenient)
        |\bno\s+time\s+pressure\b|\bin\s+no\s+(?:rush|hurry)\b""",
            cues="rush hurry urgency urgent whenever when pressure"),
    family("hurried", "urgent_noun", -1.5, r"""
        \burgent[- ](?:care|appointments?|payments?|transfers?|requests?\ form|cases?|
        referrals?|dental|treatment|clinic|centre|center|line|surgery|booking|slot)\b"""),
    family("hurried", "caps_disclaimer", -1.5, r"""
        (?:caps\ lock|all\ caps|in\ capitals|shout(?:ing)?\b[^.?!]{0,20}\b(?:not|sorry|habit))"""),
)


# --- unsure ------------------------------------------------------------------------------

UNSURE = (
    family("unsure", "hedge", 1.25, r"""
        \bnot\ (?:\w+\ )?(?:sure|certain|100|familiar)\b
        |\b(?:isn'?t|is\ not|wasn'?t|not)\ (?:very\ |entirely\ |totally\ |really\ )?clear\b
        |\bunclear\b""", cues="sure certain 100 familiar clear unclear"),
    family("unsure", "hedge", 1.25, r"""
        \b(?:don'?t|do\ not|dont)\ (?:really\ |fully\ |quite\ |even\ )?(?:know|understand|
        remember|get\ (?:it|what|how|why|which|whether|the\ difference|this))\b""",
            cues="know understand get remember"),
    family("unsure", "hedge", 1.25, r"""
        \b(?:can'?t|cannot|couldn'?t|cant)\ (?:\w+\ )?(?:remember|recall|tell|work\ out|
        figure\ out|decide)\b""", cues="remember recall tell work figure decide"),
    family("unsure", "hedge", 1.25, r"""
        \b(?:unsure|no\ idea|idk|dunno|uncertain|confus\w+|puzzled|lost\ on|a\ bit\ lost|
        i\ wonder|wondering\ (?:if|whether)|no\ clue|clueless|haven'?t\ a\ clue|
        torn|forgot\ (?:if|whether|which)|never\ (?:really\ |fully\ )?(?:understood|got\ it|
        knew)|new\ to\ (?:this|all\ this)|
        first\ time\ (?:doing|using))\b""",
            cues="unsure idea idk dunno uncertain confused confusing confusion confuses "
                 "puzzled lost wonder wondering clue clueless torn forgot new first never"),
    family("unsure", "soft_hedge", 0.5, r"""
        \b(?:maybe|perhaps|possibly|probably|might|could\ be|i\ think|i\ believe|i\ guess|
        i\ suppose|i\ assume|kind\ of|sort\ of|something\ like|or\ so|-something|
        somewhere|sometime|somehow|or\ something|hmm+|do\ you\ know\ (?:if|whether))\b|
        \d+-?ish\b|-ish\b"""),
    family("unsure", "which_option", 1.0, r"""
        (?<!how\ )\b(?:should|shall)\ i\b|\bam\ i\ (?:supposed|meant|required|allowed)\ to\b""",
            cues="should shall supposed meant required allowed"),
    family("unsure", "which_option", 1.0, r"""
        \bwhat\ would\ you\ recommend\b""", cues="recommend"),
    family("unsure", "need_to_question", 0.75, r"""
        \bdo\ i\ (?:need|have)\ to\b""", cues="need have"),
    family("unsure", "which_option", 1.0, r"""
        \bis\ it\ (?:too\ late|better|worth|okay|ok|normal|safe)\b|\bwould\ it\ be\ better\b
        |\bwould\ it\ (?:make\ (?:more\ )?sense|be\ (?:wiser|smarter))\b""",
            cues="late better worth okay ok normal safe sense wiser smarter"),
    family("unsure", "which_option", 1.0, r"""
        \bwhich\ (?:one|option|plan|is\ better|should|would|do\ i)\b""", cues="which"),
    family("unsure", "which_option", 1.0, r"""
        \bwhere\ do\ i\ (?:even\ )?start\b|\b(?:does|do)\ (?:that|this|it)\ mean\b
        |\bwhat\ does\ [^.?!]{1,40}\ mean\b""", cues="start mean"),
    family("unsure", "which_option", 1.0, r"""
        \bhow\ (?:can|do|would|could|should)\ i\ (?:tell|find\ out|know|check|work\ out)\b
        |\bis\ there\ a\ way\ to\ (?:tell|know|check)\b""", cues="tell find know check"),
    family("unsure", "either_or", 0.75, r"""
        \b(?:or|either)\b[^.!?]{0,60}\?|\bcould\ be\ [^.?!]{1,30},?\ could\ be\b"""),
    family("unsure", "self_doubt", 1.0, r"""
        \b(?:silly|dumb|stupid|basic|newbie|noob|naive)\ question\b
        |\bsorry\ if\ (?:this|i)\b|\bnot\ good\ with\b|
        \b(?:i'?m|i\ am)\ (?:hopeless|terrible|useless|bad|not\ great|rubbish|
        clueless)\ (?:with|at)\b|\b(?:i'?m|i\ am)\ (?:a\ bit\ |kind\ of\ |
        so\ |really\ )?(?:lost|confused|clueless|overwhelmed)\b
        |\bi\ (?:may|might)\ (?:have|be)\b|\bif\ that\ makes\ sense\b|\bam\ i\ (?:doing|
        reading|understanding)\b|\bi\ don'?t\ (?:fully|really|quite)\b"""),
)

UNSURE_GUARDS = (
    # "Not sure who handles this, but please ..." / "I think my order number is ...":
    # politeness in front of a plain request.
    family("unsure", "detail_doubt", 1.0, r"""
        \bi\ (?:think|believe|guess)\s+(?:my|the|it|its|it'?s|this|our)\s+(?:[\w-]+\s+)?
        (?:number|id|code|reference|ref|email|address|name|date|account|postcode|zip)\s+
        (?:is|was|might\ be|should\ be|ends)\b
        |\bmaybe\ i\ (?:used|typed|wrote|put|gave|mixed|entered|ordered|booked|have|got|paid|
        picked|chose|signed)\b
        |\b(?:details|number|name|date|email|address|spelling)\s+(?:\w+\s+)?(?:slightly\ |
        a\ bit\ )?(?:wrong|off|mixed\ up)\b""",
            cues="think believe guess maybe wrong off mixed"),
    family("unsure", "polite_hedge", -1.0, r"""
        ^(?:hi[,!]?\s+|hello[,!]?\s+)?(?:not\ sure\ (?:who|if\ (?:this|i'?m)\ (?:is\ )?(?:the\ )?
        (?:right|correct)\ (?:place|person|team|department))|i\ (?:think|believe)\ (?:my|the|it|
        this)\s+(?:\w+\s+)?(?:number|id|code|reference|address|order|booking|went|was\ sent))
        [^.?!]*?(?:,\s*(?:but\s+)?|\.\s*|\s+-\s+|\s+—\s+)(?:please|could\ you|can\ you|
        would\ you|kindly)""", cues="sure think believe"),
)


