"""Situations: the groups of failing conversations the failure map reports, and their status.

A *situation* is the smallest set of one to three coordinates that isolates one group of
failing conversations. Its *members* are the conversations that match all of its
coordinates, in every period.

**Discovery** (per period, latest and previous, by sequential covering; the constants
named here live in :mod:`processor._discovery`). The *pool* is the
period's graded conversations. Each round:

1. every single coordinate and every pair of coordinates on two axes is a candidate; its
   *excess* is ``failed - graded x b`` with ``b`` the fail rate of the pool;
2. the candidate with the largest excess whose fail rate is significantly above the rest
   of the pool (Fisher's exact test, p < ``ALPHA`` / the number of candidates with at least
   ``MIN_FAILED`` graded: Bonferroni, since every round looks at every candidate) is
   picked; at most ``SHORTLIST`` candidates, by excess, are tested per round;
3. it is *named* by its most specific coordinates. A coordinate is added (up to three)
   when the narrower cell keeps at least ``NAMING_SHARE`` (a quarter) of the excess, fails
   more than the cell, and either *stands out* from the rest of the cell (fails at least
   ``RATIO`` (1.5) times its rate, Fisher p < ``REFINE_ALPHA``), or the cell is *mixed*
   on that axis (the rest of the cell stands out in the same way from one of the axis'
   values: a part the cell merely holds), or several values of the axis keep that share
   of the excess and the narrower cell stands out in the same way from the part of the
   cell none of them holds (two groups in one cell, one per value: each is hidden from the
   test against the rest of the cell by the other). Among such narrower cells the one
   standing out most from the rest of the cell (failed - graded x the cell's rate) wins.
   So a
   coordinate shared by most members anyway (``history=fresh``) is added only when the
   others clearly do not fail the same way, a triple only where the third coordinate
   isolates the failures better, and a cell holding two failing groups is narrowed to one
   of them. The ratio keeps a large store, where small differences are significant, from
   cutting one group into pieces. When the narrower cell keeps ``COINCIDE`` (80%) of the
   failures it only *names* the group: the whole cell is set aside in rule 4; otherwise it
   *splits* the group off and only it is set aside (the other group is found in a later
   round). When the pick was such a union and the narrowing reached a fragment of a group
   that extends outside it, the group is renamed *laterally*: another single or pair, not
   an ancestor, holding at least ``COINCIDE`` of the fragment's failures with a larger
   excess, of which the fragment is not merely a part, is taken and named as above.
   Whatever the route, a name holds no coordinate that *narrows nothing*: one whose cell
   keeps more than 1 - ``NARROWS`` (80%) of the cell the other coordinates make is left
   out (``history=fresh``, ``tool_condition=success``, ``world_state=entity_exists``
   describe nearly every member of anything), whether the round picked it or the naming
   added it; the cell set aside in rule 4 is then wider by it too, but never the cell of
   no coordinates (every conversation): when the name left out every coordinate of that
   cell (``history=fresh & tool_condition=error`` named ``world_state=already_acted_on``),
   the named cell is set aside. Where two coordinates hold the same conversations
   (``world_state=missing`` and ``tool_condition=not_found``) or otherwise tie, the
   canonical axis order ``AXIS_ORDER`` decides: world state, tool, user stance, policy
   rule, tool condition, history (what the world was, where, who, then how the tool
   answered);
4. its members (see rule 3) are set aside from the pool, ``b`` is recomputed, and the next
   round starts, until no candidate is significant (or ``MAX_ROUNDS``).

A superset rarely wins a round: its excess over the pool's rate is the excess of the
groups inside it plus the (negative) excess of its other members; when it does, rule 3
narrows it.

**Collapse.** Situations found in either period are evaluated in both by their
coordinates. Two whose failing members (both periods) coincide for at least
``COINCIDE`` (80%) of the larger one are one situation: the one with the larger excess
over both periods is kept.

**Supersets are judged without what they hold.** Situations are judged smallest first;
each one's status is decided on its members that belong to no situation judged before it
(the reason says so: "without the conversations of ..."), against the period's
conversations outside it. Those are its *own* members (``situation_members.own``; the
situations it was judged without are its ``judged_without``): its examples, and the first
sources generation draws from it, are its own, so that a broad cell reported for a group
inside it read right for half of its members (hurried users of already-done actions) does
not hand out the conversations of another group in the same cell (a tool failing there in
both versions). Such a second look at conversations partly explained already is
one more test per situation found, so it is made at ``ALPHA`` / the number of situations
(Bonferroni). A situation whose remaining members fail significantly in neither period is
dropped: its excess was explained by the situations inside it. When the remaining members
do fail, with the status of a situation inside it that holds at least ``COINCIDE`` of
its failing members in it, that inner situation is a *fragment* of one group that
extends into the rest (a coordinate read right for only part of the group, such as a
stance read right for 60% of the members): the two are one situation, named by the
larger (judged on all its members), and the fragment is not reported. Remaining members
too few to judge (fewer than ``min_support`` graded) have the status they would have with
no minimum (mistaken users changing flights, 8 of 9 and 9 of 13 failing once the error
answers of mistaken users, nearly all of them changing flights, were judged before them).
Not so an inner situation narrower only by coordinates taken from the calls (no axis read
from free text) that fails significantly more than the rest of the larger one (Fisher
p < ``ALPHA``, in the period deciding its status): a value taken from the calls is not
misread, so a fragment of a group on it would fail like its rest; failing far more (82%
against 24% in a world state whose rest holds a half-misread stance group), it is a group
of its own, kept beside it. Its counts and members (``situation_members``) are all
conversations matching its coordinates; p, the difference and the priority are those of
the judged members, its own.

**Siblings.** A cell can hold two groups that fail at the same rate in one period (two
stances in one world state, one persistent and one fixed): discovery in that period
then has nothing inside the cell standing out and reports the broad cell, and the other
period finds one of the groups, a pair one coordinate narrower. Judged after it, the
broad cell keeps a status only through the other group. So when a situation judged
inside a broad one is the broad one plus one coordinate with another status (the same
status is the fragment case above), and the broad one keeps a status, its remainder is
named by a *sibling*: the broad cell plus another value of that axis, holding more than
``SIBLING_SHARE`` (half) of the remainder's failing members in the period it fails (the
latest if it fails now, else the previous) on an axis read from free text (a group read
right for part of its members), never the axis' most common value over all conversations
(``ordinary``: where misread members land, holding most of any remainder whatever fails
in it, such as a tool group of ordinary users), at least ``COINCIDE`` on an axis taken
from the calls (a tool holds all of its group: holding 60% of the remainder, it holds
part of a group spread over several tools, such as a stance group in
``already_acted_on``). The sibling is
reported instead of the broad cell when, judged the same way, it has the same status: the
axis along which the cell is already cut names the other group. (Two groups that fail
alike in both periods, or on two different axes, are not split by this rule: nothing in
one period tells the axis.)

**Read axes.** The stance of the first ask is *read* from free text by a classifier that
is often wrong (``READ_AXES``); the other axes are taken from the calls and their results.
A group defined on a read axis therefore shows as a core (the members read right) inside
its parent cell (the situation without that coordinate), whose rest (the members read
otherwise) fails the same way, only diluted. So after judging, a situation narrowed by
one read coordinate is widened to its parent when (a) the rest of the parent, without the
situation, without the situations judged before the parent, and without its siblings on
that axis with the same status that fail about as much as it does (a second group, or the
same group read as another value: either way no evidence that the group extends beyond
its named values), has the situation's status against the conversations outside the
parent, at ``ALPHA`` / the number of such situations (Bonferroni), and (b) the parent,
judged with the others as above in place of the situation and its siblings with that
status, keeps that status. A sibling failing significantly less than the situation
(Fisher p < ``ALPHA``, in the period deciding its status) is the group diluted by that
value's other members (``user_stance=ordinary``, where most misread members land): it
stays in the rest, as evidence that the group extends. Where the rest of the parent
fails no differently from elsewhere, or where a sibling on that axis has another status
(the axis does tell two groups apart there, as in *Siblings*), the read coordinate names
the group and stays.

**Mixtures.** Two groups that fail alike and fill one cell between them (a tool group and
a stance group inside ``world_state=already_acted_on``) leave nothing in the cell standing
out from the rest of it. Yet one group's members have no reason to avoid a coordinate the
other group's members have: within one group, one axis' value says nothing of another's
(*local independence*, as in latent class analysis). So a situation (one or two
coordinates) is replaced by two cells one coordinate narrower, ``a`` and ``b``, one on an
axis read from the person (``user_stance``, ``history``) and one on an axis read from the
calls (two axes of one call are tied by construction: a tool answers "already" in its
own way, so inside ``already_acted_on`` a tool and a tool condition exclude each other
without two groups), when, in the period deciding its status, each keeps ``NAMING_SHARE`` of
its excess (over the rest of that period) and at least ``MIN_FAILED`` failures, together
they hold ``COINCIDE`` of its failing members (or, when one is on a read axis, what the
rest of the cell fails beyond that rate is no more than ``LEAK`` times that one's excess:
its misread members; a stance group read right for 60% of its members leaves 40% of its
failures in the rest, so beside a tool group the two held 38 of a cell's 48, seed 868 of
the tau2 benchmark, test2 openings), far fewer of those have both coordinates
than their shares predict (Fisher p < ``REFINE_ALPHA``), ``a`` and ``b`` go together
next to the cell (in each cell one coordinate wider, outside it) at least ``1 / RATIO``
as often as independence predicts, or fall short of it by chance only (Fisher p >=
``ALPHA``: 4 frustrated users of enable_roaming outside ``already_acted_on`` where 8.5 were
expected, seed 901 of the tau2 benchmark, test2 openings): they do not exclude each other
everywhere; and both, judged with the others as above, fail in the period that decided the
situation (each new or persistent when it failed in the latest, each fixed when it failed in
the previous). The two
groups need not share a status: a tool group new in the latest version and a stance group
failing in both, inside one world state, make a persistent cell that is one new and one
persistent situation. Of several such pairs the one with the most failing members in exactly
one of its two cells is taken, so a broad value that holds one group and part of the other
(``tool_condition=success`` around a tool group) loses to the tool itself
(:mod:`processor._mixtures`). On a read axis, ``a`` is never the value that marks nothing
(``ordinary``, ``UNMARKED``): where misread members land holds about half of any
group's failing members, so a chance lean of a call value towards the other half makes one
group look like two disjoint ones (a tool group on missing things, 28 of 38 failing, whose
members without an evaluation were by chance nearly all read ordinary, was split into
ordinary users and ``policy_rule=task_success``).

**Widened on both periods.** Discovery names a group in each period alone (rule 3), and a
coordinate can stand out in one period by chance: hurried users of one tool failing in both
versions, those without a policy rule failing 16 of 17 against 7 of 19 in v1 (9 of 13
against 13 of 17 in v2), were named by that rule in v1; the triple took half the group, and
the pair, judged without it, got no clear status. So a persistent situation of two or three
coordinates is replaced by the cell without one of them, on an axis read from the calls
(a read coordinate is the business of *Read axes*), when that cell's rest (without the
situation and the members of the other situations not around it) fails above the
conversations outside the cell in both periods (Fisher p < ``ALPHA``), holds
``MIN_FAILED`` failures, and, both periods pooled, the situation does not stand out from it
(``RATIO``, p < ``REFINE_ALPHA``); and the wider cell, judged with the others, is
persistent. Of several, the one the situation stands out from least is taken. What that
rest fails beyond the conversations outside the cell must also be more, in each period,
than ``LEAK`` times what the situations one read coordinate narrower than the cell fail
beyond them: a stance group beside the situation leaves its misread members in the rest
(hurried users failing in both versions beside an enable_roaming group in
``already_acted_on``, two thirds of them read hurried, left the tool group's wider cell
failing above the rest of the store in both), which is no evidence that the situation is
wider. This runs before the rule below, which narrows by the same test the other way
round, and once more after *Where it fails*: a broad cell that held a new group and was
named by its tool there is free to be the wider cell of a persistent situation beside it.
Seed 557 of the tau2 benchmark (test3 openings): inside ``already_acted_on``, a new
enable_roaming group beside hurried users failing in both versions on the other two tools,
read hurried for about 60%; v1's discovery named the persistent group
``tool=disable_roaming`` (19 of 26 failing there, by chance most of its v1 members), while
the cell itself was the new situation; once that was named ``tool=enable_roaming``, the
cell without it (the payment tool's members, failing in both versions) showed the
persistent group wider than the one tool.

**Named on both periods.** Discovery names a group in each period alone (rule 3), so a group
failing in both periods has half the conversations it could have to stand out from the rest
of its cell: timeouts of one tool failing 40% in both versions (against 11-16% elsewhere)
did not stand out at ``REFINE_ALPHA`` from the tool's other calls in either, and the tool as
a whole got no clear status; and a cell holding two tool groups (payments already sent,
failing in both versions, and a flights group failing in the latest, both answering with
errors) was kept as ``tool_condition=error``, which took the payment group's members before
the payment tool was judged. So a persistent or uncertain situation (one or two coordinates)
is replaced by the cell one coordinate narrower, on an axis read from the calls, that, both
periods pooled and without the situations judged inside it, keeps ``NAMING_SHARE`` of its
excess and ``MIN_FAILED`` failures, leaves out at least ``NARROWS`` of it and stands out
from the rest of it (``RATIO``, p < ``REFINE_ALPHA``), when that rest, without the members
of every other situation not around it, fails no more than the conversations outside the
situation (Fisher p >= ``ALPHA``: else the rest holds a second group, or the same group
wider), and the narrower cell, judged with the others, keeps a persistent situation's
status, or gets any status for an uncertain one. Of several, the one standing out most from
the cell (failed - graded x the cell's rate) is taken. When no one cell is such, two values
of one axis read from the calls may be: each keeping ``NAMING_SHARE`` of the excess and
``MIN_FAILED`` failures and standing out from the part of the cell neither holds, when that
part is at least ``NARROWS`` of the cell and, without the members of the other situations,
fails no more than the conversations outside (two tools' permission errors, each failing
in both versions: in ``tool_condition=permission_denied`` neither stood out from a rest
holding the other, and the cell was reported as one situation); of several pairs, the one
holding the most failures beyond the cell's rate. New and fixed situations fail in one
period only, where discovery already had every conversation to name them, so they are not
named again.

**Read-axis cores.** The other way round: a broad situation (one or two coordinates, none
of a read axis) whose failures are one or two groups on the stance axis, each read right
for only part of its members (55-70% on text the reader was not tuned on), the misread
ones landing in the cell's other stances. Discovery then finds the broad cell (inside it,
each group stands out only weakly from a rest that holds the other group and the misread
members) and *Read axes* has nothing to widen. So after the rules above, in the periods
deciding its status (the latest for new, the previous for fixed, both for persistent),
the values of the read axis whose cells inside the situation (without the situations
judged inside it) keep ``NAMING_SHARE`` of its excess, at least ``MIN_FAILED`` failures,
fail more than it and leave out at least ``NARROWS`` of it are its *cores*; never the
axis' most common value over all conversations (``ordinary``: where misread members
land). They replace the situation when together they stand out from the part of the cell
none of them holds (``RATIO``, Fisher p < ``REFINE_ALPHA``), each of them does too (the
ratio, p < ``ALPHA``), that part is at least ``NARROWS`` of the cell, what it fails beyond
the rate outside the situation is no more than ``LEAK`` (1) times what the cores do (the
misread members of groups read right at least half the time; else the group is not read
well enough to name it by its stance), and each core, judged with the others, gets the
situation's status. When that part fails more, one group of it on an axis read from the
calls (a tool group beside a stance group in one world state) that stands out from the
rest of the part and keeps ``NAMING_SHARE`` of the excess is taken with the cores, if
what is left then fails no more than the cores leaked. A core keeps only the members of
its group read right, so of two groups in one cell the weaker one's core can keep less
than ``NAMING_SHARE`` (a frustrated group at 24% beside a conflicting one): counted as
leak, its failures would keep the broad cell. So once one core keeps ``NAMING_SHARE``,
values keeping ``CORE_SHARE`` (``NAMING_SHARE / (1 + LEAK)``: what a group holding
``NAMING_SHARE``, read right for half its members, keeps) are *further cores*: when the
cores do not replace the situation, the further ones are added, the largest excess first,
one at a time, and the first set meeting all the conditions above replaces it. Only as
many as it takes: a stance where misread members of the groups land fails too, and is
left in the rest once the groups explain the cell.

Groups of different statuses in one cell (hurried users failing newly beside conflicting
users failing in both versions) keep no common status, and pooled over both periods a
group that fails in one only is diluted by the other. So when the cores above do not
replace the situation, the cores are looked for in each period apart, by the same
conditions on that period's cell and rate (further cores included: every period the
situation fails in needs a core keeping ``NAMING_SHARE``), the cores the situation's cell
holds as situations judged before it (its own narrower cells on that axis) included, their
misread members being in its rest. Where the situation fails in both periods, a group
failing in both beside one failing in one period only can be a core in the other period
alone: where both fail, the cell fails as much as it does (hurried users of already-done
actions, 13 of 33 failing in v1 and 19 of 37 in v2, beside a new frustrated group at 17 of
22 that made the cell fail 52 of 88). So a value found a core in one period is taken in the
other too when its members there fail clearly above the rate outside the situation
(``MIN_FAILED``, p < ``REFINE_ALPHA``): one group, taken or left whole, in every period it
was found in. They replace the situation when every period it fails in has cores,
together (each in the periods it was found in) they stand out from the rest of the cell
over both periods (``RATIO``, p < ``REFINE_ALPHA``), each does (over its periods; the
ratio, p < ``ALPHA``), the axis' other values (neither a core nor the usual one) do not, in
the periods cores were found in, fail clearly (p < ``REFINE_ALPHA`` against the rate outside
the situation) within ``RATIO`` of the cores' rate (failing so, the cell is one group spread
over every stance, read as some a little more often: a rest pooled over both periods holds
the period a new group did not fail in, and those stances would stand out from it), the
rest is at least ``NARROWS`` of the cell, what the rest fails beyond
each period's rate outside the situation, summed over the periods cores were found in,
is no more than ``LEAK`` times what the cores do, and each core, judged with the others,
gets a status of its own (new, persistent or fixed): each group is judged on its own
support, and the broad cell, whose excess they explain, is dropped. When a core gets no
status of its own, fewer cores are tried (the most first, then the largest excess), the
others left in the rest by the same conditions: a core can be a group's misread members
(a fixed mistaken group in one tool, 11 of 24 read mistaken failing in v1, its misread
members read hurried, 8 of 26 failing; hurried, judged alone, is no status), and its
failures are then what the group leaked.

**Misread cores.** The reader does not misread at random: on openings it was not trained
on, joined to plain asks, the session-14 reader read 0.4 asks that contradict themselves as a
mistaken premise and 0.27 as hurried for each one it read right, and hardly any the other
way round (the shipped reader's own figures are in ``processor/data/stance_confusion.json``,
:mod:`processor._misreading`; 0.12 and 0.09 for the reader trained on dev9). So one group of
users whose asks contradict themselves, failing in one tool, can show as two cores, a
conflicting one and a mistaken one, each judged a status of its own: one group reported as
two situations that each hold part of it. Before the cores of a cell and period are taken,
a core that fails no more than the failures outside the cell's rate would give it plus what
a larger core of the same cell and period puts there by the reader's confusions (its excess
times the confusion share; one-sided Poisson, p >= ``MISREAD_ALPHA``, 0.05) is that core's
misread members: it is left in the rest, where the group leaked. If the larger core alone
then leaves more failing in the rest than it keeps (``LEAK``), the group is not read well
enough to be named by its stance, and the broad cell stays (seed 269 of the tau2
benchmark, test2 openings: ``tool=suspend_line``, new, holding 26 of the group's 35 failures,
where the cores were conflicting 12/19 and mistaken 6/14). Two groups on stances the reader
seldom confuses (hurried and adversarial users in one world state) keep their two cores. The
confusions are used only for conversations built by the reader they were measured for, with
no stance model (``processor_state.options``); others are never explained this way.

**Across values.** A group read right for part of its members can also be found in two
broad cells at once: unsure users of already-done actions, failing in v1, made two roaming
tools' cells fail there, and each tool's cell was narrowed to its unsure users, two fixed
situations that differ by the tool only. So two situations with one status and the same
coordinates but one, on the same axis, are replaced by their shared coordinates and one
of another axis (named without what narrows nothing) whose cell holds ``COINCIDE`` of the
failing members of each in the period deciding their status, with a larger excess than
either, when neither merely is a part of it (stands out from the rest of it, rule 3) and
the cell, judged with the others, keeps the status; the other situation, judged inside
it, is then its fragment (*Supersets*). Of several such cells, the one with the largest
excess (:mod:`processor._across`).

**Lean names.** Rule 3 adds a third coordinate only where it stands out from the rest of
the pair, yet a triple can be reached by another route: discovery picks a pair whose
excess is a stance group read right for part of its members, and the group's core (*Misread
cores*) adds the stance. The pair's other coordinate may then have owed its place to the
group alone (``policy_rule=unspecified & world_state=missing``, found where the conflicting
users of missing records leaned by chance to conversations without an evaluation: 7 of 12
failing against 7 of 22 with one). Or *Where it fails* adds the tool to a core found in
a broad cell of a condition the tool often answers with (frustrated users of
``tool_condition=error``, in one tool whose frustrated users failed 12 of 19 with an error
and 4 of 8 without). So once the cores are found, and again once the tools are named, a
situation of three coordinates loses the one standing out least from the rest of the
situation without it (its own members in the periods deciding its status, Fisher) when that
one does not stand out (rule 3), and the wider situation, judged with the others, keeps the
status (one reported under that name without a status is joined); never the tool, which
says where.

**Where it fails.** A coordinate that narrows nothing is left out of a name (rule 3), but
the tool says where a group fails, and the generator aims at it: a situation without a tool
(``world_state=already_acted_on``, filled mostly by one tool's group) is named by the tool
that holds ``COINCIDE`` of its failing members in the periods deciding its status, when the
rest of it fails significantly less and the narrower situation, judged with the others,
keeps its status (``NAMING_AXES``). A situation named by one coordinate read from free text
alone (a stance) is named the same way by a world state too (``READ_NAMING_AXES``): who the
people are does not say where they fail (frustrated users, fixed, half of whose failures lay
where records were missing, 14 of 31 there, the rest failing like everyone, were reported as
the stance alone, a superset of their group). A tool holding more than ``SIBLING_SHARE`` of
the failing members holds the group too when the rest of the situation fails like the
conversations outside it there (Fisher p >= ``ALPHA``): what keeps the tool below
``COINCIDE`` is then background, not a second group (``tool_condition=permission_denied``,
fixed once a persistent tool group inside it is judged: one tool held 18 of its 23 failures
in the previous version, the other tools' calls there failing 17% against 10% elsewhere).
The tool holding the failures is picked after looking, and every tool of the situation with
at least ``COINCIDE`` of its failures in members could have been, so their tests (Fisher,
that tool's members against the rest of the situation) are corrected by Holm's step-down
method at ``ALPHA``: with several such tools, one collecting most failures by chance does
not name the situation. (Fisher's test is conditional on the counts of the situation and of
each tool: a tool with fewer members than that can never be named and is no test.) A tool
holding ``COINCIDE`` of the failing members and all of the situation but members too few for
any split of the failures to be significant (Fisher p >= ``ALPHA`` even with every failure
in the tool) names it when its members fail more than that rest: no test can tell the tool
from the situation, of which it is nearly the whole (38 of 39 graded v2 members of
``tool_condition=success & world_state=already_acted_on`` were ``enable_roaming``'s, which
answers "already enabled" with a success; the usual condition then narrows nothing and
leaves the name, as in *Names that say what went wrong*). A status that is a change between
the periods (new against the previous period, fixed) is also told by the other period: when
that names nothing, the tool holding more than ``SIBLING_SHARE`` of the failing members in
the period deciding the status names the situation when, in the other period, the rest of
the situation fails significantly more than that tool's members (Fisher p < ``ALPHA``) and
the narrower situation keeps the status. The tool's members then changed and the rest did
not change as much: the rest's failures are another group, or members of one misread into
the situation (a persistent stance group's members read ``ordinary`` beside a fixed tool
group, in the remainder *Siblings* leaves), and the change the status reports is the tool's.
(The rest is compared with the tool only, not with the period outside it: it need not fail
significantly there.) The tool is picked in one period and tested in the other, so picking
it does not bias the test; one tool at most holds that share. This is a second route after
the Holm-corrected one, at ``ALPHA`` of its own (together up to about twice ``ALPHA`` of
naming a situation by a tool wrongly), and a tool without members in the other period (new
in the latest version) is never named by it.

**Names that say why.** A value that states nothing on its axis (``UNSTATED``:
``world_state=unknown``, the world state of a call whose answer tells nothing of the
record, a refusal or a timeout) aims generation at nothing: no world to mutate, no fault
to plant. A situation named by one is named instead by the value of another axis read
from the calls, not that axis' most common value, whose cell with the other coordinates
holds ``COINCIDE`` of its failing members in the periods deciding its status (the one of
largest excess); when none does, the coordinate is left out if it narrows nothing (keeps
more than ``1 - NARROWS`` of the other coordinates' cell, as in rule 3); in either case
when that situation, judged again, keeps the status. Seeds 257 and 258 (test2): a lookup
tool refused in v2 was reported as ``tool=... & world_state=unknown``, which also held the
tool's few timeouts; it is ``tool_condition=permission_denied``. Seed 336:
``tool=... & tool_condition=permission_denied & world_state=unknown`` loses the world state.

**Overlapping reports.** Last, a situation whose own failing members (in the periods deciding
its status, without the smaller situations judged inside it) lie for at least ``COINCIDE`` in
another situation of the same status, neither inside it nor around it, that fails more there,
is that situation's group seen through another coordinate, and is dropped when the others,
judged again without it, keep their statuses. Seed 528 of the tau2 benchmark (test3
openings): timeouts of ``get_user_details``, fixed, answer ``world_state=unknown`` when no
earlier lookup said the record exists and ``entity_exists`` when one did; discovery in v1
reported ``world_state=unknown`` (a persistent permission group of another tool judged inside
it, 11 of its remaining 12 failures the timeouts) beside ``tool=get_user_details``, two fixed
situations each holding half the group.

**Misread siblings.** In the same last pass, a situation named by the stance that marks
nothing (``user_stance=ordinary``: where the reader puts the members it misreads, as in
*Read-axis cores*, *Siblings* and *Mixtures*) is dropped, when the others keep their
statuses without it, if a situation of the same status has the same other coordinates and
another stance and fails beyond the rate outside their cell by more than it in every
period that status fails in: the ordinary one is that group's misread members, not a group
of plain asks. Seed 527 of the tau2 benchmark (test2 openings): mistaken users of
already-done actions, new, 22 of 28 read mistaken failing in v2, and 9 of 18 read ordinary
in that world state failing there (1 of 18 in v1), reported as a second new situation;
seed 530 the same with a frustrated group where things are missing (18 of 29, and 20 of 81
read ordinary).

**Names that say what went wrong.** Last, a coordinate that narrows nothing is left out
of a name (rule 3), yet a marked world state or tool condition that nearly every failing
member shares tells what went wrong: ``tool=get_customer_by_id`` is a lookup of records
that do not exist, ``tool=search_direct_flight`` a tool that times out, and the tool's
few other members (the lookups that found their record) are not that group. So a
situation is also named by the value of a fault axis (``FAULT_AXES``: the world state,
else, where no marked world state names it, the tool condition: ``not_found`` would say
again what ``missing`` says) holding ``COINCIDE`` of its own failing members in the
periods deciding its status and failing more than the rest of it there, significantly
(Fisher p < ``ALPHA``) where the rest is large enough for any split to be (the calls of
``update_reservation_flights`` mostly err, so errors hold most failures of any group on
it: 14 of 16 failing against 2 of 4 that answered names nothing): a *marked* value,
not the axis' most common one over all conversations (``success``, ``entity_exists``: they
say nothing went wrong) nor one that states nothing. The world state is tried first (what
the world was, then how the tool answered). A fault axis' usual value in the name that
then narrows nothing is left out (rule 3): ``tool=get_bills_for_customer &
world_state=entity_exists``, which left out the tool's lookups of missing records, is
``tool=get_bills_for_customer & tool_condition=permission_denied`` (seed 111 of the tau2
benchmark, test3 openings). The new name (at most three coordinates) replaces the old when
the situation it names, judged again with the others, keeps the status; members and status
are then its own: the generator plants the fault, and the report says it.

**Names.** Whatever rule named a situation, two names of exactly the same conversations
read as one: a coordinate that narrows the cell of the others is swapped for the value of
an axis earlier in ``AXIS_ORDER`` (read from the calls) whose cell, with the others, holds
the same conversations (``world_state=missing`` for ``tool_condition=not_found``; inside
``world_state=already_acted_on``, ``tool=send_payment_request`` for
``tool_condition=error`` when that tool's calls, and only they, err), unless another
situation already bears the new name, and never for a value that states nothing. A
coordinate that narrows nothing keeps its place (any value would do there). A name of one
or two coordinates without a tool, whose conversations all have one tool, is named by that
tool too: blind on tau2's retail domain, cancelling orders already cancelled was reported
as ``world_state=already_acted_on``, every member of which cancels an order (*Where it
fails* names a tool only where it leaves some conversations out). Members and status do
not change.

**Modules.** Discovery and profiles: :mod:`processor._discovery`; judging, siblings, read
axes, overlapping reports, misread siblings: :mod:`processor._judging`; read-axis cores,
where it fails, names that say why and what went wrong: :mod:`processor._narrowing`; mixtures:
:mod:`processor._mixtures`; across values: :mod:`processor._across`; statuses and their
sentences: :mod:`processor._verdicts`; storing: :mod:`processor._situation_store`.

**Status** (between the latest and the previous period). A situation *fails* in a period
when its fail rate is above the rest of that period's graded conversations, Fisher
p < ``ALPHA`` (two-sided test, higher rate). ``min_support`` (default 10) graded
conversations in the latest period are needed before new, persistent or fixed, and in the
previous period too before persistent or fixed, whose failures were seen there.

==========  ===================================================================================
status      rule
==========  ===================================================================================
new         fails now and (no graded conversation before: ``compared = baseline``, p and
            difference against the rest of the latest period) or (did not fail before and
            the increase from before is significant: ``compared = versions``)
persistent  fails now and failed before, at least ``min_support`` graded in each period
fixed       failed before, does not fail now, at least ``min_support`` graded in each
            period, and the decrease is significant (Fisher p < ``ALPHA``)
uncertain   everything else, with the reason: low support (``low_support`` true), no recent
            data, or a change that is not significant
==========  ===================================================================================

**Priority and budget share**::

    priority = weight(status) x fail rate x sqrt(graded)
        (of the latest period; of the previous one for fixed, and for uncertain
         situations that do not fail now)
    weight:   new 3, persistent 2, uncertain 1, fixed 0.5 (a regression guard)
    budget_share = (1 - exploration) x priority / sum of priorities

The rest (``exploration``) is for the covering array over the grid.

Ids are stable: ``s-`` and the first 10 hex digits of sha256(label), the label listing
the coordinates by axis name (``tool=cancel_order & world_state=already_acted_on``).
"""
from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import numpy as np

from processor._across import merge_across
from processor._discovery import (
    ALPHA,
    COINCIDE,
    LATEST,
    PREVIOUS,
    Combo,
    Found,
    Profiles,
    canonical,
    combos_of,
    decode,
    discover,
    load_profiles,
)
from processor._judging import READ_AXES, SIBLING_SHARE, absorb_overlaps, widen
from processor._misreading import Misreads, misreads_for
from processor._mixtures import split_mixtures
from processor._narrowing import (
    find_cores,
    name_fault,
    name_lean,
    name_pooled,
    name_where,
    name_why,
    widen_pooled,
)
from processor._situation_store import store_situations
from processor._verdicts import PeriodNames
from processor.coordinates import coordinate_label
from processor.stats import wilson
from tracemill.store import load_sql

__all__ = ["ALPHA", "MIN_SUPPORT", "READ_AXES", "SIBLING_SHARE", "PeriodNames", "Situation",
           "find_situations", "situation_id", "situation_label", "store_situations"]

MIN_SUPPORT = 10
"""Graded conversations needed in the latest period before new, persistent or fixed."""
CELL_COINCIDE = 0.5
"""A cell stands for a situation when their common failing members are this share of the
larger of the two."""
WEIGHTS = {"new": 3.0, "persistent": 2.0, "uncertain": 1.0, "fixed": 0.5}
"""Priority weight of each status."""


@dataclass(frozen=True)
class Situation:
    """One situation of the failure map, with its status between the two periods."""

    situation_id: str
    """``s-`` and the first 10 hex digits of sha256(label): stable across runs."""
    label: str
    """``tool=cancel_order & world_state=already_acted_on`` (axes by name)."""
    coordinates: tuple[tuple[str, str], ...]
    """(axis, value) pairs, by axis name."""
    conversations: int
    """Members in every period."""
    graded_latest: int
    """Graded members in the latest period."""
    failed_latest: int
    """Failed ones among them."""
    graded_previous: int
    """Graded members in the previous period."""
    failed_previous: int
    """Failed ones among them."""
    interval_latest: tuple[float, float]
    """Wilson 95% interval of the latest fail rate."""
    interval_previous: tuple[float, float]
    """Wilson 95% interval of the previous fail rate."""
    baseline_latest: float | None
    """Fail rate of the latest period's graded conversations outside the situation."""
    baseline_previous: float | None
    """The same in the previous period."""
    difference: tuple[float, float] | None
    """Newcombe 95% interval of the compared difference (None: nothing to compare)."""
    p_value: float | None
    """Fisher's exact test of that difference (None: nothing to compare)."""
    compared: str
    """``versions`` (latest vs previous rate) or ``baseline`` (latest vs the rest of the
    latest period: no earlier data)."""
    status: str
    """new, persistent, fixed or uncertain."""
    reason: str
    """One plain sentence: why this status."""
    low_support: bool
    """Fewer than the minimum graded conversations in the latest period."""
    priority: float
    """See the module docstring."""
    budget_share: float
    """Share of a generation budget (see the module docstring)."""
    cells: tuple[str, ...]
    """Labels of the cells (pairs and single coordinates) it stands for."""
    judged_without: tuple[str, ...] = ()
    """Ids of the situations judged before it whose conversations its status was decided
    without (see *Supersets*): its own members are those outside them."""

    @property
    def fail_rate_latest(self) -> float | None:
        """failed / graded in the latest period (None when nothing was graded)."""
        return self.failed_latest / self.graded_latest if self.graded_latest else None

    @property
    def fail_rate_previous(self) -> float | None:
        """failed / graded in the previous period."""
        return self.failed_previous / self.graded_previous if self.graded_previous else None


def situation_label(coordinates: Sequence[tuple[str, str]]) -> str:
    """``a=x & b=y``, axes by name (:func:`processor.coordinates.coordinate_label`)."""
    return coordinate_label(coordinates)


def situation_id(label: str) -> str:
    """The stable id of a situation label."""
    return "s-" + hashlib.sha256(label.encode()).hexdigest()[:10]


def find_situations(cursor: duckdb.DuckDBPyConnection, names: PeriodNames, *,
                    exploration: float = 0.2, min_support: int = MIN_SUPPORT,
                    misreads: Misreads | None = None) -> list[Situation]:
    """The situations of the conversations, with statuses, priority and budget share.

    ``misreads``: how the stance axis was misread (*Misread cores*; None: the shipped
    reader's, when it read the stored conversations, :func:`processor._misreading.misreads_for`).
    Needs the temporary ``conversation_periods`` table and ``conversation_coordinates``
    view (periods.sql, coordinates.sql); builds ``coordinate_profiles`` (profiles.sql)."""
    cursor.execute(load_sql("processor", "profiles.sql"))
    profiles = load_profiles(cursor, misreads_for(cursor) if misreads is None else misreads)
    if len(profiles.n) == 0:
        return []
    combos = combos_of(profiles)
    found = discover(profiles, combos, LATEST) + discover(profiles, combos, PREVIOUS)
    totals = [profiles.counts(np.ones(len(profiles.n), dtype=bool), p)
              for p in (LATEST, PREVIOUS)]

    def excess(item: Found) -> float:  # over both periods, each against its own rate
        mask = profiles.mask(item.coordinates)
        return sum(f - g * (total_f / total_g if total_g else 0.0)
                   for (g, f), (total_g, total_f) in zip(
                       (profiles.counts(mask, p) for p in (LATEST, PREVIOUS)), totals,
                       strict=True))

    found.sort(key=lambda item: (-excess(item), profiles.named(item.coordinates)))
    failing_all = profiles.graded & profiles.failed
    kept: list[tuple[Found, np.ndarray]] = []
    seen: set[tuple[tuple[int, int], ...]] = set()
    for item in found:
        key = tuple(sorted(item.coordinates))
        if key in seen:
            continue
        seen.add(key)
        mask = profiles.mask(item.coordinates)
        mine = int(profiles.n[mask & failing_all].sum())
        if any(int(profiles.n[mask & other & failing_all].sum())
               >= COINCIDE * max(mine, int(profiles.n[other & failing_all].sum()))
               for _, other in kept):
            continue
        kept.append((item, mask))
    judged_in_order = split_mixtures(profiles, widen(profiles, kept, totals, names, min_support),
                                     totals, names, min_support)
    judged_in_order = widen_pooled(profiles, judged_in_order, totals, names, min_support)
    judged_in_order = name_pooled(profiles, judged_in_order, totals, names, min_support)
    judged_in_order = find_cores(profiles, judged_in_order, totals, names, min_support)
    judged_in_order = merge_across(profiles, judged_in_order, totals, names, min_support)
    judged_in_order = name_lean(profiles, judged_in_order, totals, names, min_support)
    judged_in_order = name_where(profiles, judged_in_order, totals, names, min_support)
    judged_in_order = name_lean(profiles, judged_in_order, totals, names, min_support)
    # a broad cell named by a tool there may be the wider cell of one beside it now
    judged_in_order = widen_pooled(profiles, judged_in_order, totals, names, min_support)
    judged_in_order = name_why(profiles, judged_in_order, totals, names, min_support)
    judged_in_order = absorb_overlaps(profiles, judged_in_order, totals, names, min_support)
    judged_in_order = name_fault(profiles, judged_in_order, totals, names, min_support)
    situations = []
    named = _canonical_names(profiles, [item for item, _, _, _ in judged_in_order])
    for index, (coordinates, (_, mask, verdict, judged)) in enumerate(
            zip(named, judged_in_order, strict=True)):
        label = situation_label(coordinates)
        counts = [profiles.counts(mask, p) for p in (LATEST, PREVIOUS)]
        rest = (totals[0][0] - counts[0][0], totals[0][1] - counts[0][1],
                totals[1][0] - counts[1][0], totals[1][1] - counts[1][1])
        # the situations judged before it that it was judged without (none: judged whole)
        inside = [] if judged == counts else [
            situation_label(named[other]) for other, (_, other_mask, _, _)
            in enumerate(judged_in_order[:index]) if int(profiles.n[mask & other_mask].sum())]
        reason = verdict.reason
        if inside:
            reason = f"without the conversations of {' and '.join(inside)}: {reason}"
        (g_now, f_now), (g_before, f_before) = judged
        rate, graded = (f_now / g_now, g_now) if verdict.fails_now and g_now else (
            (f_before / g_before, g_before) if g_before else (0.0, 0))
        priority = WEIGHTS[verdict.status] * rate * math.sqrt(graded)
        (g_now, f_now), (g_before, f_before) = counts
        situations.append(Situation(
            situation_id=situation_id(label), label=label, coordinates=coordinates,
            conversations=int(profiles.n[mask].sum()),
            graded_latest=g_now, failed_latest=f_now, graded_previous=g_before,
            failed_previous=f_before, interval_latest=wilson(f_now, g_now),
            interval_previous=wilson(f_before, g_before),
            baseline_latest=rest[1] / rest[0] if rest[0] else None,
            baseline_previous=rest[3] / rest[2] if rest[2] else None,
            difference=verdict.difference, p_value=verdict.p_value, compared=verdict.compared,
            status=verdict.status, reason=reason, low_support=verdict.low_support,
            priority=priority, budget_share=0.0,
            cells=_cells(profiles, combos, mask),
            judged_without=tuple(situation_id(label) for label in inside)))
    total = sum(s.priority for s in situations)
    order = {"new": 0, "persistent": 1, "uncertain": 2, "fixed": 3}
    situations = [Situation(**{**s.__dict__, "budget_share": (1 - exploration) * s.priority
                               / total if total else 0.0}) for s in situations]
    return sorted(situations, key=lambda s: (order[s.status], -s.priority, s.label))


def _canonical_names(profiles: Profiles, found: Sequence[Found],
                     ) -> list[tuple[tuple[str, str], ...]]:
    """Each situation's name, by the axes first in the canonical order where other
    coordinates hold exactly its conversations (:func:`processor._discovery.canonical`),
    unless another situation already has that name."""
    names = [profiles.named(item.coordinates) for item in found]
    taken = set(names)
    for index, item in enumerate(found):
        renamed = profiles.named(canonical(profiles, item.coordinates))
        if renamed not in taken:
            names[index] = renamed
            taken.add(renamed)
    return names


def _cells(profiles: Profiles, combos: Sequence[Combo], mask: np.ndarray) -> tuple[str, ...]:
    """Labels of the cells whose failing members largely coincide with the situation's."""
    failing = np.where(profiles.graded & profiles.failed, profiles.n, 0)
    mine = int(failing[mask].sum())
    base = max(1, len(profiles.values))
    found: list[tuple[int, str]] = []
    for combo in combos:
        total = np.bincount(combo.cell_of, weights=failing, minlength=len(combo.keys))
        common = np.bincount(combo.cell_of, weights=np.where(mask, failing, 0),
                             minlength=len(combo.keys))
        for index in np.flatnonzero(common >= CELL_COINCIDE * np.maximum(total, mine)):
            if common[index] > 0:
                coordinates = profiles.named(decode(combo, int(combo.keys[index]), base))
                found.append((-int(common[index]), situation_label(coordinates)))
    return tuple(label for _, label in sorted(found))
