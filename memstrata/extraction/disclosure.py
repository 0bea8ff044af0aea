"""What makes a clause a self-disclosure worth keeping, by linguistic category (pure, no I/O).

A self-disclosure is a declarative clause whose grammatical subject is the speaker ("I ...", "My
sister ...") and whose predicate says something about the speaker's life: what they did, have, are,
plan or keep doing. The rule extractor stores such a clause as it is (in the third person) when no
specific rule reads a slot out of it (`rules.self_statements`).

`disclosure_start` finds the speaker as subject; a conversational subject ("my question is ...") or
one naming another person or a pet ("my coworker keeps ...": a fact about someone else) is none.
`refusal` names why a first-person clause must still not be stored. Each reason is a category of
language, not a list of sentences:

- "request": the clause asks the assistant for something ("I'd like some ideas", "I need help with",
  "I'm looking for recommendations", "I want to know ...").
- "attitude": the predicate is a verb of thinking, knowing, saying or wishing whose content is the
  point ("I think ...", "I wonder ...", "I guess ...", "I hope you ..."), or a reaction or state of
  mind ("I'm glad ...", "I'm curious ...", "I appreciate ...", "I love that ..."), a passing state
  ("I'm a bit tired today", "I'm in a meeting", "I'm doing OK, thanks"), or stretched emphasis ("I just
  looove ...").
- "modal": ability, permission, obligation or conditional mood ("I can ...", "I should ...",
  "I'd ...", "I could ..."), a future "I'll ..." with no date (mostly a promise to the assistant:
  "I'll try that", "I'll keep it in mind") or a tentative one ("I'll try to check ... next week").
- "assistant": the clause mentions the assistant ("you", "your"): it is about this conversation.
- "context": it leans on words said before: a pronoun or demonstrative ("it", "him", "these
  recipes", "ones", "that feeling"), an indefinite pronoun as its point ("I made something to ..."), a
  phrase only the conversation resolves ("the same", "the second option", "ever since", "not read that
  yet"), or a verb whose object was said before ("I started when I was young", "I definitely will").
- "conversation": the clause is about this very talk ("since we last talked").
- "slot": the clause uses the vocabulary of a slot the specific rules read (where the user lives or
  works, their name, age, diet...) although no rule stored it: the rules judged it unclear, and a free
  sentence would compete with the slot's current value.
- "thin": too few specific words to mean anything alone ("I'm staying positive", "I heard great
  things", "I faced all kinds of hurdles", "My hard work is paying off"): abstract nouns of effort,
  feeling and fortune, evaluative adjectives, adverbs and time words do not count as specific; a
  figure of speech about coping ("crossing my fingers", "giving up"); or too long to be one fact.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .lexicon import RELATIONS, wordset
from .skip import leans_on_context

_LEAD = (
    r"(?:(?:just|so far|lately|recently|currently|nowadays|these days|today|tonight|yesterday|this morning"
    r"|this week|last (?:week|weekend|month|year|night)|earlier(?: today| this week)?|a (?:few|couple of) "
    r"(?:days|weeks|months|years) ago|(?:on|in|over|at|during|since|after|before) [\w' -]{2,30}?"
    r"|when i was [\w ]{2,20}?"
    r"|as (?:a|an) [\w -]{2,25}?|for (?:the )?(?:past|last) [\w ]{2,20}?)\s*,?\s+)"
)
_OPENER = r"(?:(?:you know|honestly|actually|anyway|well|oh|btw|by the way|funny enough|guess what)\s*,\s+)"
"""A discourse marker before the statement ("You know, last weekend I ..."): it addresses no one."""
_FIRST_PERSON = re.compile(
    rf"^{_OPENER}?{_LEAD}?(?P<subject>(?:(?:(?-i:[A-Z])[a-z]+|(?:my|our) [a-z]+) and )?(?:i|i'm|i've|i'll|i'd)\b"
    r"|(?:my|our) (?:[\w'-]+ ){1,3}?(?=(?:is|are|was|were|has|have"
    r"|had|just|recently|also|finally|still|now|always|usually|will|[a-z]+(?<!s)s(?! to\b)|[a-z]+ed"
    r"|love|like|enjoy|hate|adore|live|play|attend|go)\b)"
    r"|we(?:'ve| have)?(?: (?:just|recently|finally|also|now|already|officially))* (?=(?:(?:have|own|got) (?:got )?"
    r"(?:an?|\d+|two|three|four|five|six|seven|eight|nine|ten) (?!(?:lot|ton|bit|few|couple|chance|way|time|blast)\b)"
    r"|adopted|bought|rescued|welcomed|moved|renovated|remodeled|remodelled|sold|are expecting|had a baby"
    r"|got married|got engaged)\b)"
    r"|we(?=(?:'re| are|'ve been| have been)(?: \w+ly)* (?:considering|thinking (?:of|about)) (?!being\b)[a-z]+ing\b))",
    re.IGNORECASE,
)
"""The speaker as subject, optionally after a short time or place adverbial ("Last week, I ...")."""

_IT_HAS_BEEN = (
    r"(?:'s| has| is) (?:already |now )?been (?:about |almost |over |nearly |just )?"
    r"(?:\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of) (?:days?|weeks?|months?|years?)\b"
)
"""How long something has gone on ("- it's been 6 weeks now"): this "it" points at nothing earlier."""
_WORD = re.compile(r"[\w'/:$%.-]+")
_STOP = wordset(
    """i i'm i've i'll i'd me my mine myself we we're we've our us a an the and or but so to of in on at for with
    from by as is am are was were be been being have has had do does did not no just really very also too still
    now then there here some any much many more most lot lots bit kind sort of up out about into over after
    before again ever never always usually often get got getting go going went gone make made am quite pretty
    don't doesn't didn't haven't hasn't hadn't isn't aren't wasn't weren't won't can't will would can could shall
    should may might must do does did definitely probably maybe gonna wanna gotta this that these those year years
    such month months week weeks weekend last next today tonight yesterday tomorrow morning evening night"""
)
_MIN_CONTENT_WORDS = 2
_MAX_WORDS = 45

_REQUEST = re.compile(
    r"^(?:i'd|i would) (?:like|love|appreciate|be (?:grateful|interested))\b"
    r"|^i (?:want|need|wanted|needed) (?:you|your|some|a little|a few|more|any)? ?(?:help|advice|tips|ideas"
    r"|suggestions|recommendations|information|info|guidance|input|feedback|resources|options|examples|insights|pointers|"
    r"clarification|answers?)\b"
    r"|^i(?:'m| am) (?:\w+ )?(?:looking for|searching for|seeking|after) (?:some |a few |more |any |good |the best )?"
    r"(?:help|advice|tips|ideas|suggestions|recommendations|information|info|guidance|input|feedback|resources|"
    r"options|examples|insights|ways|recipes|alternatives|strategies|pointers)\b"
    r"|^i (?:want|wanted|need|needed|would like|hope|hoped|was hoping|am hoping|'m hoping) to (?:know|learn more|"
    r"understand|find out|figure out|get (?:a|some|your|an)|ask|check|confirm|make sure|clarify|explore|discuss|"
    r"see|hear|talk|brainstorm|get started)\b"
    r"|^i(?:'m| am) (?:\w+ )?looking to (?:find|get (?:some|a few|more|ideas|tips|advice)|see|hear|know|understand)\b"
    r"|^i(?:'m| am) (?:\w+ )?(?:trying|struggling) to (?:figure out|decide|understand|find|choose|get a sense|"
    r"wrap my head|work out|come up with|think of)\b",
    re.IGNORECASE,
)
_ATTITUDE_VERBS = wordset(
    """think thought believe believed guess guessed suppose supposed assume assumed reckon wonder wondered
    wondering know knew understand understood realize realized realise realised mean meant agree agreed
    disagree doubt bet imagine imagined expect notice noticed recall appreciate appreciated
    love loved like liked hate hated enjoy enjoyed prefer preferred adore adored want wanted wish wished
    hope hoped feel felt consider considered considering figure figured forgot forget trust ask asked asking
    say said tell told mention mentioned apologize apologise thank thanked totally definitely wanna hear heard
    enjoying loving remind reminds reminded
    completely absolutely kinda sorta"""
)
_TOGETHER = re.compile(r"^(?:(?-i:[A-Z])[a-z]+|(?:my|our) [a-z]+) and i (?:(?P<are>are)|(?P<were>were)|(?=\w))", re.I)
_LIKING = wordset("love loves like likes enjoy enjoys adore adores hate hates")
_REACTION_STATES = wordset(
    """glad happy sorry excited thrilled curious interested sure unsure confused worried concerned relieved
    grateful thankful impressed surprised amazed fine ok okay good great done ready afraid eager keen
    tempted inclined leaning torn wondering thinking hoping trying asking looking not open fascinated
    intrigued overwhelmed stuck lost aware convinced certain feeling inspired motivated proud blessed stoked
    pumped nervous anxious stressed exhausted tired bored sad upset angry frustrated"""
)
_MODAL = re.compile(
    r"^i(?:'d| would| could| can| can't| cannot| couldn't| should| shouldn't| might| may| must| shall| gotta"
    r"| got to)\b",
    re.I,
)
_FUTURE = re.compile(r"^i(?:'ll| will| won't)\b", re.I)
_FUTURE_STATE = re.compile(
    r"^i(?:'ll| will) (?:(?:have|be|own|need) (?:\w+ )?(?:\d+|two|three|four|five|six|seven|eight|nine|ten|twelve"
    r"|twenty|a hundred)\b|be (?:\w+ )?(?:in|at|with) (?-i:[A-Z]))",
    re.IGNORECASE,
)
"""A future state with a number or a named place ("I'll have four bikes with me", "I'll be in Lisbon for
the conference"): a plan worth keeping though no date is said, unlike a promise ("I'll try that")."""
_ABLE = re.compile(r"^i(?:'ve| have| had)? (?:been|was|am|'m) (?:\w+ly )?(?:able|unable) to\b", re.I)
"""Ability ("I've been able to connect with ..."): what the user could do, not what they did."""
_HOPE_OR_PLAN = re.compile(
    r"^i(?:'m| am) (?:really )?(?:hoping|planning|going|about|aiming|intending|looking) to\b", re.IGNORECASE
)
_EAGER_PLAN = re.compile(
    r"^i(?:'m| am)(?: \w+ly| so| really| super| very)* (?:excited|stoked|thrilled|pumped|eager) to (?:watch|start"
    r"|go|attend|visit|try|join|move|begin|run|take|travel|fly|meet|read|play|launch|open|compete|perform)\b",
    re.IGNORECASE,
)
"""Eagerness for something the speaker is about to do ("I'm really excited to watch The Wheel of Time"):
a plan, not a reaction to the talk."""
_HOPE = re.compile(r"^i(?:'m| am|'ve been| have been)(?: \w+ly)* (?:hoping|wanting|wishing|dreaming) (?:to|of)\b", re.I)
_SPECIFIC_TARGET = re.compile(r"\d|\b(?-i:[A-Z])[a-z]+\b(?<!\bI)")
"""A hope is kept only with a specific target, a number or a name ("hoping to beat my best of 25:50")."""
_MUSING = re.compile(
    r"^i(?:'m| am|'ve been| have been| was)(?: \w+ly)* (?:thinking|wondering|considering|looking|trying to decide)"
    r" (?:of|about|into|for|whether|if)\b",
    re.I,
)
"""Musing aloud ("I've been thinking of stocking up on coffee"): no routine or event yet."""
_CONSIDERED_PLAN = re.compile(
    r"^(?:i|we)(?:'m| am|'re| are|'ve been| have been)(?: \w+ly)* (?:thinking (?:of|about)|considering)"
    r" (?!being\b|getting (?:some|more|a few|ideas|tips|advice)\b)[a-z]+ing\b"
    r"(?! (?:(?:it|that|this|them|one)\b|the (?!(?-i:[A-Z]))))",
    re.I,
)
"""A course of action the speaker is weighing, named by its verb ("I'm thinking of expanding my product line",
"we're considering adopting a rescue dog"): a plan worth keeping as said, though not yet an event or a
routine; "thinking about it", "wondering whether" stay musing, and so does a plan for a thing the talk
introduced ("thinking of serving the grilled chicken with ...": which one, only the conversation says)."""
_TRYING_OUT = re.compile(
    r"^i(?:'m| am|'ve been| have been)(?: \w+ly| also| now| just)* (?:trying|trying out) (?!to\b|out\b|my best\b)"
    r"(?:[a-z][\w-]* ){0,2}?(?-i:[a-z][\w-]*)\b",
    re.I,
)
"""Trying something out ("I'm trying kundalini yoga", "I've been trying intermittent fasting"): a new activity
of the speaker's, unlike trying to do something ("I'm trying to decide") or trying one's best."""
_TENTATIVE_FUTURE = re.compile(
    r"^i(?:'ll| will)\b.*\b(?:later|today|tonight|in a bit|in a minute)\b"
    r"|^i(?:'ll| will)(?: \w+ly)* (?:try|check|see|look|think|keep|let|make sure|ask|consider|figure|go ahead|start by"
    r"|give|take a look|have a look|need)\b",
    re.IGNORECASE,
)
"""A future that is a promise within the conversation ("I'll try to check ...", "I'll see what ..."), or
an errand for the next few hours ("I'll pick up a bag later today")."""
_NEEDS_HELP = re.compile(
    r"\bneed (?:some |a little |your )?(?:help|advice|tips|ideas|suggestions|guidance|a hand|a second opinion)\b", re.I
)
_THIRD_PERSON_PRONOUN = re.compile(
    rf"\b(?:he|she|him|her|his|hers|they|them|their|theirs|it(?!{_IT_HAS_BEEN})|its|another)\b", re.I
)
"""Someone or something named earlier in the conversation: the statement is not whole without it."""
_DEMONSTRATIVE = re.compile(
    r"\b(?:this|these|those)\b(?! (?:week|weekend|morning|afternoon|evening|night|year|month|summer|winter|spring"
    r"|fall|autumn|season|semester|term|time|trip|days|past|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b)",
    re.IGNORECASE,
)
_INTRODUCED = re.compile(
    r"\b(?:this|these)\b(?=(?: [\w'-]+){1,6} (?:about|called|named|titled|on how|by (?-i:[A-Z])))", re.IGNORECASE
)
"""A demonstrative that introduces something the clause itself describes ("I read this awesome book about
castles in the UK", "this podcast called ..."): the narrative "this" of chat, an indefinite article, not a
pointer to something said before."""
_ABOUT_THIS_TALK = re.compile(r"\b(?:we|us)\b[^.]*\b(?:talked|spoke|chatted|caught up|last talked)\b", re.I)
_GENERIC = wordset(
    """positive going keep keeps keeping kept pushing push forward ahead dream dreams goal goals best effort thing
    things stuff great good nice busy stay staying stayed trying try motivated focused inspired believing believe
    themselves chasing chase hard time times life way ways new big something everything anything
    well better doing done heard happening happen day days journey progress moving move fun support supported
    grateful lookout awesome amazing cool crazy wild really super totally lately recently always never everyone
    people else bit whole lot also even though too still gonna wanna let anyone stop reach find able care tough
    around matter experience experiences challenge challenges hurdle hurdles obstacle obstacles emotion emotions
    memory memories comfort energy purpose balance efforts plan plans news option options offer offers trouble
    troubles story stories blast difference impact change changes passion success motivation focus step steps road
    ride moment moments lesson lessons mistake mistakes positive negative determined give giving gave up face faced
    facing overcome overcame through hope hopes fingers heart mind soul spirit improve improving grow
    growing growth reflect reflecting surge treasure treasures similar tough rough hectic exciting excited cool
    awesome incredible fantastic wonderful blessing opportunity opportunities chance chances ok okay fine happy
    feel feeling feelings hang hanging joined join others dreams sure lots plenty ton tons few several couple
    various kinds all sorts making doing having taking take took real care cares caring find finds finding found
    other important yet tries place places relief excitement worry huge massive wrong sorry oops apologies future
    event events news update updates down away"""
)
"""Words too general to make a statement specific ("keep pushing forward", "heard great things", "faced all
kinds of hurdles", "is finding some comfort in the good memories"): abstract nouns of effort, feeling and
fortune, evaluative adjectives, and the verbs of platitudes."""
_INDEFINITE = re.compile(
    r"\b(?:something|someone|somebody|somewhere|anything|anyone|anybody)\b"
    r"(?! (?:called|named|like|at|in|from|about) [A-Z0-9])"
)
"""An indefinite pronoun as the point of the statement ("I made something to catch the eye", "working on
something exciting"): what it stands for was said elsewhere, if at all; "something like Notion" names it."""
_IDIOM = re.compile(
    r"\b(?:com(?:e|es|ing|in') true|cross(?:ing|ed)? (?:my|our) fingers|fingers crossed|over the moon"
    r"|on cloud nine|in the same boat|(?:paying|pays|paid) off\W*$"
    r"|hang(?:ing)? in there|(?:giving|give|gave) up|powered through|plow(?:ing|ed)? through|push(?:ing)? through"
    r"|joined in|see why|see how|the way i see it|each day as it comes|one day at a time)\b",
    re.IGNORECASE,
)
"""Figures of speech that say how the speaker feels or copes, not what they did or have."""
_ELLIPTIC = re.compile(
    r"^i(?:'ve| have| had)?(?: \w+ly| just| also| even| finally| almost| nearly)* (?:started|began|stopped|quit|tried"
    r"|finished|did|joined|continued|do|does|will|am|was|have|had|forgot|forget|remembered)"
    r"(?: it| that| this| one| so| too| again| back| in)?"
    r"(?:\W*$|\W+(?:when|because|after|since|as|before|until|but|and|so|though|(?-i:[A-Z])\w*(?:\W*$|,)))",
    re.IGNORECASE,
)
"""A verb whose object was said before ("I started when I was young", "I definitely will", "I do, Oscar"):
the statement needs the conversation to mean anything."""
_HOW_I_AM = re.compile(
    r"^i(?:'m| am)(?: \w+ly| so| just| still| also)* (?:doing (?:ok|okay|fine|well|good|great|alright|better|awesome"
    r"|amazing|much better)|content|alright|all good|good to go)\b",
    re.IGNORECASE,
)
"""How the speaker is doing ("I'm doing OK, thanks", "I'm completely content"): a greeting's answer."""
_ASSISTANT = re.compile(r"\b(?:you|your|yours|yourself|you're|you've|you'd|you'll)\b", re.IGNORECASE)
_VAGUE_OBJECT = re.compile(
    r"\b(?:the same|the above|the (?:first|second|third|fourth|last|other|latter|former|next) (?:one|option|idea|"
    r"suggestion|recipe|step|point|choice)s?|the one|the ones|such|both of them|all of them|some of them|"
    r"the (?:recipe|list|suggestion|recommendation|idea|option|tip|advice|information|answer|response|article|link|"
    r"example|explanation|steps|plan you|aftertaste|result|results|output|trip|event|party|game|show|class|meeting"
    r"|course|book|movie|place)s?\b(?! (?:of|for|from|at|in|to) [A-Z]))"
    r"|\bones\b|\b(?:a|the|this|that|another|new|old|other|different|same|first|last) one\b(?! of)"
    r"|\b(?:had|have|has|got|get|want|need|bought|tried|made|found|read|seen|saw) one\b"
    r"|\bthat (?:feeling|moment|day|night|time|place|thing|stuff|experience|fellow|guy|girl|person|book|movie|show"
    r"|game|song|trip|idea|part|stage|point)s?\b"
    r"|\bthe (?:positive|negative|bright side|good stuff|good things|little things|important things)\b"
    r"|\b(?:a few|some|many|lots|a couple|a lot) more(?= (?:in|on|at|last|this|yesterday|today|recently)\b|\W*$)"
    r"|\b(?:ever since|since then|back then|at the time|at first|here)\W*$|\b(?:in|out|over|up|down) there\b"
    r"|\b(?:it|that|this|them|one)(?: yet| either| too| again| anymore| already)\W*$"
    r"|\b(?:on|with|about|into)(?: for (?:a while|ages|years|months|weeks)| lately| recently)?\W*$"
    r"|\b(?:it|them|this|that|these|those|one|ones|there|so|a few|some|a lot|lots|more|many|any|none|all)\W*$",
    re.IGNORECASE,
)
_CONVERSATION_NOUNS = wordset(
    """question questions concern concerns point guess bad thoughts thought understanding apologies pleasure
    answer reply message mistake take impression feeling sense idea request follow-up followup issue problem
    main next last first second only biggest favorite favourite hope goal guess worry point question imagination
    mind heart soul dream dreams passion efforts life mood confidence motivation creativity spirits head feelings
    emotions energy"""
)
"""Subjects that are the talk itself ("my question is ...") or the speaker's inner life ("my imagination
soars", "my heart is full"): what follows is a reaction, not a fact."""
_SLOT_VOCABULARY = re.compile(
    r"\b(?:(?:live|lives|living|lived)(?! (?:room|rooms|space|spaces|expenses|costs|wage|situation)\b)"
    r"(?<!sustainable living)(?<!healthy living)(?<!simple living)"
    r"|moved|moving|relocat\w*|based|work (?:at|for|as)|working (?:at|for|as)"
    r"|worked (?:at|for|as)|job|employer|hired|name|called|years? old|age|aged|birthday|born|married|divorced"
    r"|engaged|pronouns?|allergic|allergy|vegan|vegetarian|pescatarian|gluten|lactose|diet|kosher|halal"
    r"|manager|boss|husband|wife|girlfriend|boyfriend|partner|favou?rite)\b",
    re.IGNORECASE,
)
_OTHERS_BEFORE = re.compile(
    r"\b(?:everyone's|everybody's|people's|others'|other people's|their|his|her|its|(?-i:[A-Z])[a-z]+'s)"
    r"(?: [\w-]+)?\s*$|\b(?:that|which)\s*$",
    re.IGNORECASE,
)
"""A slot word said of someone or something else ("desserts that work for everyone's diets", "Sam's
manager"): not the speaker's slot, so it does not stop the statement."""
_PEOPLE = wordset(
    """family parent kid child children people folk folks team teammate guy girl boy man woman lady baby
    classmate client customer student patient landlady tenant buddy pal ex relative grandparent in-law"""
)
_PASSING_STATE = re.compile(
    r"^i(?:'m| am| was| feel| felt)(?: (?:\w+ly|so|very|a bit|a little|pretty|quite|kinda|kind of|sort of|super"
    r"|totally|too|extremely|rather|slightly|just|also|still|getting|feeling))* (?!(?:a|an|the|my|our|in|at|on|from"
    r"|with|into|off|out|back|home|up|down|over|now|currently)\b)(?![\w'-]+ing\b)(?!\d)(?![\w']+-[\w']+)"
    r"(?!(?:colou?rblind|deaf|diabetic|autistic|dyslexic|bilingual|trilingual|introverted|extroverted|asthmatic"
    r"|epileptic|adopted|retired|unemployed|single|sober|celiac|coeliac|vegan|blind)\b)[\w'-]+"
    r"(?:\W*$| (?:and|for|of|about|with|at|by|to|today|tonight|now|lately|right now|this|that|these days|after"
    r"|because)\b)",
    re.IGNORECASE,
)
"""A passing state of body or mind ("I'm a bit tired today", "I'm so done with this week")."""
_WHERE_NOW = re.compile(
    r"^i(?:'m| am)(?: (?:currently|just|still|now|already|finally))* (?:in|at|on|out|off|back(?! from)|home(?! from)"
    r"|away|stuck|here"
    r"|there|outside|inside)\b",
    re.IGNORECASE,
)
_HOW_FAR_NOW = re.compile(
    r"^i(?:'m| am) (?:about |almost |nearly |only |just )?(?:\d+|a few|a couple of|an?|\w+) (?:minutes?|mins?|stops?"
    r"|miles?|km|blocks?|hours?|seconds?|secs?) (?:away|from|out|late|early|behind)\b",
    re.IGNORECASE,
)
"""Where the user is at the moment ("I'm in a meeting", "I'm at the gym", "I'm 5 minutes away"): a
situation, not a fact."""
_ELONGATED = re.compile(r"([a-z])\1\1", re.IGNORECASE)
"""A stretched word ("looove", "sooo"): emphasis that often marks sarcasm or a passing reaction."""
_EVALUATIVE_TAIL = re.compile(
    r",?\s+(?:and |but |so )?(?:it(?: really| definitely| truly)?|that|this|which)(?!" + _IT_HAS_BEEN + r")"
    r"(?:'s| is| was| has| had| makes| made| feels| sounds| got| gets| gave| reminded| inspired| helped| taught)\b.*$"
    r"|,?\s+(?:and|but|so|plus)(?: then)?\W*$|,\s+(?:what an?|such an?)\b.*$"
    r"|,?\s+and (?:loving|enjoying|hating) (?:it|them|every (?:minute|second))\b.*$"
    r"|,?\s+(?:btw|lol|haha|tbh|fyi|lmao|imo)\W*$"
    r"|,?\s+(?:and|but|so) (?:the|that|this|your) [\w' -]{1,30}? (?:sounds|looks|seems|sounded|looked|seemed)\b.*$"
    r"|,?\s+(?:while|when|whilst|as|since|because|before|after) you\b.*$",
    re.IGNORECASE,
)
_SUBORDINATE = re.compile(
    r"^(?:when|whenever|if|unless|as|since|because|cause|although|though|even though|even if|once|while|whereas|which"
    r"|who|that|what"
    r"|where|how|why|than|like|until|till)\b",
    re.IGNORECASE,
)


@lru_cache(maxsize=1024)  # the general and learned paths ask it of the same clause
def disclosure_start(clause: str) -> int | None:
    """Where the speaker's subject starts in `clause` ("I", "I'm", "My sister" ...), when the clause is a
    first-person statement; None otherwise (another subject, a subordinate clause, an imperative)."""
    if _SUBORDINATE.match(clause):
        return None
    match = _FIRST_PERSON.match(clause)
    if match is None:
        return None
    subject = match.group("subject").casefold()
    if subject[:2] in ("my", "ou") and not re.search(r" and i\b", subject):
        nouns = subject.split()[1:]
        if nouns[0] in _CONVERSATION_NOUNS or any(_is_person(noun) and not _is_kin(noun) for noun in nouns):
            return None  # "my question is ...": about the talk; "my coworker keeps ...": about someone else
    return match.start("subject")


def _is_person(noun: str) -> bool:
    """True for a word naming a person or pet ("sister", "parents", "coworker", "dog")."""
    singular = noun[:-1] if noun.endswith("s") and not noun.endswith("ss") else noun
    return noun in RELATIONS or singular in RELATIONS or singular in _PEOPLE


def _is_kin(noun: str) -> bool:
    """True for the speaker's family or pets ("sister", "kids", "dog"): what happens to them is part of
    the speaker's own life ("my sister just had a baby girl"), unlike a coworker's or a client's doings."""
    singular = noun[:-1] if noun.endswith("s") and not noun.endswith("ss") else noun
    return RELATIONS.get(noun, RELATIONS.get(singular, "")) in _KIN or singular in ("family", "parent")


_KIN = wordset(
    """wife husband partner girlfriend boyfriend spouse son daughter sister brother sibling aunt uncle cousin niece
    nephew fiance children child mother father grandmother grandfather stepson stepdaughter cat dog pet"""
)


def _leans_on_earlier_words(statement: str) -> bool:
    """A third-person pronoun or a demonstrative ("talked to him", "these recipes"): it points at
    something said earlier in the conversation, unless the clause itself names what the pronoun stands
    for before it ("helping people with their sports", "I met Sarah and her dog")."""
    if _DEMONSTRATIVE.search(statement):
        return True
    return any(
        not _antecedent_before(statement[: p.start()], p.group(0)) for p in _THIRD_PERSON_PRONOUN.finditer(statement)
    )


_PLURAL_NOUN = re.compile(
    r"\b(?!(?:is|was|has|does|this|its|us|yes|his|hers|as|always|sometimes|perhaps|less|unless|across"
    r"|plus|bus|gas|news|series|thus|process|success|business|class|glass|dress|chess|stress)\b)"
    r"[a-z]{2,}[^s\W]s\b(?! of\s*$)"
)
_NAMED = re.compile(r"(?<=\w )(?-i:[A-Z])[a-z]+\b(?<!\bI)")


def _antecedent_before(before: str, pronoun: str) -> bool:
    """True when `before` (the clause up to a pronoun) names what the pronoun stands for: people or a
    plural for "they/them/their", a name or a relative for "he/she/his/her"; never for "it"."""
    low = pronoun.casefold()
    if low in ("they", "them", "their", "theirs"):
        words = [w.casefold() for w in _WORD.findall(before)]
        return bool(_PLURAL_NOUN.search(before.casefold())) or any(_is_person(w) for w in words)
    if low in ("he", "him", "his", "she", "her", "hers"):
        words = [w.casefold() for w in _WORD.findall(before)]
        return bool(_NAMED.search(before)) or any(_is_kin(w) for w in words)
    return False


@lru_cache(maxsize=1024)  # the general path, the learned path's checks and its wording ask it of the same statement
def without_evaluation(statement: str) -> str:
    """The statement without a trailing comment on it (", it's a nightmare", "and it's been great")."""
    return _EVALUATIVE_TAIL.sub("", statement)


_AUXILIARIES = wordset(
    """been am was have has had also just really still actually honestly now always never not even only currently
    recently finally already do did don't didn't doesn't haven't hadn't wasn't more so very super pretty quite"""
)


def _predicate_words(statement: str) -> list[str]:
    """The words after the subject pronoun, its auxiliaries and adverbs ("I've been really" -> the rest)."""
    words = statement.split()
    rest = words[1:] if words and words[0].casefold() in ("i", "i'm", "i've", "i'll", "i'd") else words[2:]
    while rest and (rest[0].casefold().endswith(("ly", "%")) or rest[0].casefold() in _AUXILIARIES):
        rest = rest[1:]
    return rest


_UNSPECIFIC = _STOP | _GENERIC
_TRAIT = re.compile(r"^i(?:'m| am)(?: \w+ly)* [\w'-]+\W*$", re.I)
"""One word said of the speaker ("I'm left-handed"): a trait, once the passing states are refused."""
_LY_NOT_ADVERBS = wordset(
    """family daily weekly monthly yearly hourly nightly early july italy assembly supply jelly belly lily holly
    ally rally reply apply fly butterfly bully ugly silly curly"""
)


def _is_adverb(word: str) -> bool:
    """A lower-case "-ly" adverb ("surely", "slowly"), which says how, not what."""
    return word.islower() and word.endswith("ly") and len(word) > 4 and word not in _LY_NOT_ADVERBS


def specific_words(statement: str) -> list[str]:
    """The words of `statement` that make it specific: not function words, not the abstract or evaluative
    vocabulary of platitudes ("great", "time", "experience"), not adverbs or time words."""
    words = [word.rstrip(".,!?:") for word in _WORD.findall(statement)]
    return [w for w in words if w and w.casefold() not in _UNSPECIFIC and not _is_adverb(w)]


def is_thin(statement: str, *, minimum: int = _MIN_CONTENT_WORDS) -> bool:
    """True when `statement` has fewer than `minimum` specific words ("I'm staying positive"); a dated
    event needs only one ("I got promoted last week"), none is a pleasantry ("We had a great time")."""
    return len(specific_words(statement)) < minimum


def hedged(statement: str) -> str | None:
    """Why a first-person `statement` (starting at its subject) is not yet a fact about the user: a
    request to the assistant ("I need help organizing my garage this weekend"), a modal or tentative
    future ("I'll definitely try to ...", "I've been able to ..."), or musing ("I've been thinking of ...");
    None when it is stated as a fact. Specific rules (events, routines) ask this too."""
    if _REQUEST.search(statement) or _NEEDS_HELP.search(statement):
        return "request"
    if _MODAL.match(statement) or _TENTATIVE_FUTURE.match(statement) or _ABLE.match(statement):
        return "modal"
    if _MUSING.match(statement):
        return "attitude"
    return None


def passing(statement: str) -> bool:
    """True when a first-person `statement` is a passing state of body, mind or place ("I'm a bit tired
    today", "I'm in a meeting", "I'm doing OK") or stretched emphasis ("I just looove ..."): true only for
    the moment, or sarcasm; never worth keeping, whatever else the clause says."""
    return bool(
        _PASSING_STATE.match(statement)
        or _WHERE_NOW.match(statement)
        or _HOW_FAR_NOW.match(statement)
        or _HOW_I_AM.match(statement)
        or _ELONGATED.search(statement)
    )


def considered(statement: str) -> bool:
    """True when a first-person `statement` weighs a named course of action ("I'm considering adopting a
    dog"): not yet a fact for an event or a routine, but a plan that may be kept as said."""
    return bool(_CONSIDERED_PLAN.match(statement))


def _as_speaker(match: re.Match[str]) -> str:
    return "I am " if match.group("are") else "I was " if match.group("were") else "I "


@lru_cache(maxsize=1024)  # the general and learned paths ask it of the same statement
def refusal(statement: str, *, dated: bool = False) -> str | None:
    """Why the first-person `statement` (starting at its subject) must not be stored, or None.

    `dated` says the clause names a date, which makes a future "I'll ..." a plan rather than a promise.
    """
    if _ASSISTANT.search(statement):
        return "assistant"
    statement = _TOGETHER.sub(_as_speaker, statement)  # "my teammates and I were thrilled": checked as "I was thrilled"
    reason = hedged(statement)
    if reason is not None and not (reason == "attitude" and considered(statement)):
        return reason
    if _FUTURE.match(statement) and not dated and not _FUTURE_STATE.match(statement):
        return "modal"
    if _HOPE.match(statement) and not _SPECIFIC_TARGET.search(statement[statement.index(" ") :]):
        return "attitude"
    predicate = _predicate_words(statement)
    head = predicate[0].casefold().strip(",.!") if predicate else ""
    speaker = statement.split()[0].casefold() in ("i", "i'm", "i've", "i'll", "i'd")
    likes = head in _LIKING and not speaker  # "my kids love nature": a fact about them, not a reaction
    planned = (
        _HOPE_OR_PLAN.match(statement)
        or _EAGER_PLAN.match(statement)
        or considered(statement)
        or _TRYING_OUT.match(statement)
    )
    if not planned and not likes and (head in _ATTITUDE_VERBS or head in _REACTION_STATES):
        return "attitude"
    if (
        (_PASSING_STATE.match(statement) and not planned)
        or _WHERE_NOW.match(statement)
        or _HOW_FAR_NOW.match(statement)
        or _HOW_I_AM.match(statement)
        or _ELONGATED.search(head)
    ):
        return "attitude"
    described = _INTRODUCED.sub("a", statement)
    if (
        _VAGUE_OBJECT.search(described)
        or _INDEFINITE.search(described)
        or leans_on_context(described)
        or _leans_on_earlier_words(described)
    ):
        return "context"
    if _ELLIPTIC.match(statement):
        return "context"
    if _ABOUT_THIS_TALK.search(statement):
        return "conversation"
    if any(not _OTHERS_BEFORE.search(statement[: word.start()]) for word in _SLOT_VOCABULARY.finditer(statement)):
        return "slot"
    if _IDIOM.search(statement):
        return "thin"
    least = 1 if _TRAIT.match(statement) else _MIN_CONTENT_WORDS
    if is_thin(statement, minimum=least) or len(_WORD.findall(statement)) > _MAX_WORDS:
        return "thin"
    return None


__all__ = [
    "considered",
    "disclosure_start",
    "hedged",
    "is_thin",
    "passing",
    "refusal",
    "specific_words",
    "without_evaluation",
]
