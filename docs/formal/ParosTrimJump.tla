--------------------------- MODULE ParosTrimJump ---------------------------
(***************************************************************************)
(* The second seed: truncation decided by consensus, and the trim-point   *)
(* jump of a node stranded below every peer's floor.                       *)
(*                                                                         *)
(* Voters with a promise (term and vote) elect a leader by majority; the   *)
(* leader sequences commands into slots and replicates them with log       *)
(* matching; a slot commits when a majority holds it in the leader's term. *)
(* A command is a write, a Truncate { leader, up_to }, a                   *)
(* SetLeader { new, old } (the writer token) or the leader's noop.  Only   *)
(* the walk over the committed log interprets a slot: it moves the writer  *)
(* token, refuses a stale writer's write or truncate in place              *)
(* (TruncateRefused), and raises the node's floor when it reaches an       *)
(* accepted Truncate: lazily, never past its committed prefix.  A node     *)
(* drops the slots below its floor (Compact) and seals the state they      *)
(* folded to.  A node (voter or non-voting replica) whose next slot the    *)
(* leader no longer holds jumps: TrimmedTo { point, state } sets its first *)
(* held slot to the leader's, adopts the sealed state, and never touches   *)
(* its term or vote.  Reads are answered as the core answers them          *)
(* (ReadAnswer): only with a read index, then CursorTooOld below the       *)
(* floor, NotHeld below the first held slot, else served.                  *)
(*                                                                         *)
(* Durability: a node's log is durable up to slot durable[n]; the rest is  *)
(* volatile, and Crash(n) drops it.  A node persists before it sends, so   *)
(* everything it holds is durable once it answers; the one exception is    *)
(* the AckBeforeSync twin, whose follower answers a replicated record      *)
(* before it is durable.  With the rule on, a leader counts a copy toward  *)
(* commit only once it is durable (with every rule on, every copy a node   *)
(* answered for is); the twin counts any copy a majority holds.            *)
(*                                                                         *)
(* The Stateright model in model/src/paros/ mirrors this spec ONE TO ONE:  *)
(* same variables, same actions with the same parameters and guards, same  *)
(* initial state, so TLC's distinct-state count equals Stateright's        *)
(* unique-state count for every passing configuration.  README.md          *)
(* ("ParosTrimJump") says what the spec leaves out and why that is sound.  *)
(*                                                                         *)
(* Slots start at 1.  log[n] holds the records of slots start[n] ..        *)
(* start[n] + Len(log[n]) - 1; below start[n] only the sealed state is     *)
(* left (sterm, swriter, sfloor).  Three history variables serve the       *)
(* invariants only: high (the highest promise each node made), decided     *)
(* (the floor of the committed, fenced truncates) and acked (acknowledged  *)
(* writes at or above decided).  With every rule on, high equals the       *)
(* promise and decided the highest floor, so they add no state.            *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS
    NumVoters,        \* voting nodes 1..NumVoters (3)
    NumReplicas,      \* non-voting replicas NumVoters+1 .. NumVoters+NumReplicas
    NumOwners,        \* writer-token holders 1..NumOwners; owner o's fence is o
    MaxWrites,        \* writes sequenced, all owners and leaders together
    MaxTruncates,     \* truncates sequenced
    MaxSetLeaders,    \* SetLeader commands sequenced
    MaxPromotions,    \* elections (each appends the new leader's noop)
    MaxCrashes,       \* crash-restarts (each drops what a node holds that is not durable)
    \* Rule switches.  FALSE everywhere is the design with every rule on.
    JumpResetsTerm,   \* a TrimmedTo jump overwrites term and vote with the sealed term
    UnfencedTruncate, \* the walk accepts a truncate whatever its fence
    FloorPastCommit,  \* a node applies a truncate's floor when it appends it, not when it walks it
    AckBeforeSync     \* a follower answers before its record is durable, and a write is acknowledged
                      \* once a majority holds it, durable or not

ASSUME NumVoters \in Nat \ {0}
ASSUME NumReplicas \in Nat
ASSUME NumOwners \in Nat \ {0}
ASSUME MaxWrites \in Nat /\ MaxTruncates \in Nat /\ MaxSetLeaders \in Nat /\ MaxPromotions \in Nat
ASSUME MaxCrashes \in Nat
ASSUME \A sw \in {JumpResetsTerm, UnfencedTruncate, FloorPastCommit, AckBeforeSync} : sw \in BOOLEAN

Voters == 1..NumVoters
Nodes == 1..(NumVoters + NumReplicas)
Owners == 1..NumOwners
\* Every slot holds a write, a truncate, a SetLeader or a promotion's noop.
MaxLen == MaxWrites + MaxTruncates + MaxSetLeaders + MaxPromotions
\* Node 1 leads term 1; each promotion raises the highest term by one.
MaxTerm == 1 + MaxPromotions

\* Record kinds: "w" a write, "t" Truncate { leader: o, up_to: u }, "s" SetLeader { new: o,
\* old: o - 1 }, "n" the leader's noop.  o: the owner's fence (0 on a noop); t: the term of
\* the leader that sequenced it; u: the truncate's up_to (0 on the others).
Records == [k : {"w", "t", "s", "n"}, o : 0..NumOwners, t : 1..MaxTerm, u : 0..(MaxLen + 1)]

VARIABLES
    term,        \* term[n]: n's current term (its promise, with vote)
    vote,        \* vote[n]: the voter n voted for in term[n], 0 if none (replicas never vote)
    leader,      \* leader[n]: n believes it leads term[n] (a deposed leader still does)
    log,         \* log[n]: the records n holds, from slot start[n]
    start,       \* start[n]: the first slot n holds
    commit,      \* commit[n]: n's committed index; its walk has folded every slot up to it
    writer,      \* writer[n]: the writer token after n's walk (SetLeader moves it)
    floor,       \* floor[n]: n's floor, the first slot a read may ask for (first_seq)
    sterm,       \* sterm[n]: sealed term of slot start[n] - 1 (0 for slot 0)
    swriter,     \* swriter[n]: sealed writer token the slots below start[n] folded to
    sfloor,      \* sfloor[n]: sealed floor the slots below start[n] folded to
    high,        \* history: high[n] = <<term, vote>>, the highest promise n ever made
    decided,     \* history: the highest up_to of a committed truncate whose fence was in force
    acked,       \* history: <<slot, record>> of every acknowledged write at or above decided
    writes,      \* writes sequenced so far
    truncates,   \* truncates sequenced so far
    setleaders,  \* SetLeader commands sequenced so far
    promotions,  \* elections so far
    durable,     \* durable[n]: the last slot of log[n] that is durable (start[n] - 1: none)
    crashes      \* crash-restarts so far

vars == <<term, vote, leader, log, start, commit, writer, floor, sterm, swriter, sfloor,
          high, decided, acked, writes, truncates, setleaders, promotions, durable, crashes>>

-----------------------------------------------------------------------------
(* Helpers: pure functions of the state.  The ones every step evaluates read a *)
(* log once, into a LET name, and loop over bound variables, not through      *)
(* helper calls: TLC checks an operator argument or a LET value against the   *)
(* whole state each time it is used again, which costs more than the work it *)
(* saves.  Each says what it computes; none changes a state or a count.       *)

Max(a, b) == IF a >= b THEN a ELSE b
Min(a, b) == IF a <= b THEN a ELSE b
SetMax(S) == CHOOSE x \in S : \A y \in S : y <= x

\* The last slot n holds (start[n] - 1 when it holds none).
LastIndex(n) == start[n] - 1 + Len(log[n])
\* The record n holds at slot i (start[n] <= i <= LastIndex(n)).
Rec(n, i) == log[n][i - start[n] + 1]
\* Whether n knows the term of slot i: a slot it holds, or the sealed one below them.
Known(n, i) == start[n] - 1 <= i /\ i <= LastIndex(n)
TermAt(n, i) == IF i = start[n] - 1 THEN sterm[n] ELSE Rec(n, i).t
LastTerm(n) == TermAt(n, LastIndex(n))

\* Raft's election restriction: b's log is at least as up to date as q's.
UpToDate(b, q) ==
    LET tb == LastTerm(b)
        tq == LastTerm(q)
    IN \/ tb > tq
       \/ /\ tb = tq
          /\ LastIndex(b) >= LastIndex(q)

\* Slots where l and f both know the term and agree on it (Log Matching: equal terms at a
\* slot mean equal prefixes up to it).
Matches(l, f) == {m \in 0..MaxLen : Known(l, m) /\ Known(f, m) /\ TermAt(l, m) = TermAt(f, m)}
\* The highest slot of Matches(l, f), -1 when there is none.  Both know the terms of the
\* slots lo..hi (each its sealed slot start - 1 and the slots it holds), and no more.
MatchLen(l, f) ==
    LET sl == start[l]
        sf == start[f]
        gl == log[l]
        gf == log[f]
        lo == Max(sl, sf) - 1
        hi == Min(sl - 1 + Len(gl), sf - 1 + Len(gf))
        agree == {m \in lo..hi : (IF m = sl - 1 THEN sterm[l] ELSE gl[m - sl + 1].t)
                                = (IF m = sf - 1 THEN sterm[f] ELSE gf[m - sf + 1].t)}
    IN IF agree = {} THEN -1 ELSE SetMax(agree)
\* l can send f what follows their common prefix: they agree at a slot l still knows.  (Not
\* written with \E: TLC would generate one successor per witness.)
CanReplicate(l, f) == MatchLen(l, f) >= start[l] - 1

\* A promise goes back when the term falls, or the term stays and a cast vote changes.
GoesBack(p, q) == q[1] < p[1] \/ (q[1] = p[1] /\ p[2] /= 0 /\ q[2] /= p[2])
\* high[n] once n's promise is <<t, v>>: the promise, unless it went back.
HighAfter(n, t, v) == IF GoesBack(high[n], <<t, v>>) THEN high[n] ELSE <<t, v>>

\* Whether the walk accepts a truncate whose fence is o, the writer token being w.
AcceptsTruncate(w, o) == UnfencedTruncate \/ o = w

\* One slot of the walk.  st: [w writer, f floor, d decided, a acked, i slot, ack whether
\* this walk acknowledges].  SetLeader { o, o - 1 } moves the token if o - 1 holds it; a
\* truncate raises the floor if accepted (FloorPastCommit: it was raised when appended);
\* d follows the truncates whose fence is in force, whatever the switches; a write whose
\* fence is in force is acknowledged by the leader's walk.
WalkStep(st, r) ==
    [w |-> IF r.k = "s" /\ r.o = st.w + 1 THEN r.o ELSE st.w,
     f |-> IF r.k = "t" /\ AcceptsTruncate(st.w, r.o) /\ ~FloorPastCommit
              THEN Max(st.f, r.u) ELSE st.f,
     d |-> IF r.k = "t" /\ r.o = st.w THEN Max(st.d, r.u) ELSE st.d,
     a |-> IF st.ack /\ r.k = "w" /\ r.o = st.w THEN st.a \cup {<<st.i, r>>} ELSE st.a,
     i |-> st.i + 1,
     ack |-> st.ack]

RECURSIVE Walk(_, _)
Walk(st, rs) == IF rs = << >> THEN st ELSE Walk(WalkStep(st, Head(rs)), Tail(rs))

\* The records of lg (a log starting at slot s) at slots i..j.
Slots(lg, s, i, j) == SubSeq(lg, i - s + 1, j - s + 1)

\* n's walk from commit[n] + 1 to c over its log lg, acknowledging writes if ack.
WalkTo(n, lg, c, ack) ==
    Walk([w |-> writer[n], f |-> floor[n], d |-> decided, a |-> acked, i |-> commit[n] + 1,
          ack |-> ack],
         Slots(lg, start[n], commit[n] + 1, c))

\* Acknowledged writes still judged: those at or above the decided floor.
Judged(a, d) == {x \in a : x[1] >= d}

\* Whether voter q's log lg holds a record of term t at slot x.  (A slot q dropped is
\* committed there, so it is not of the term of a leader that has not committed it yet.)
Holds(lg, q, x, t) ==
    /\ start[q] <= x
    /\ x - start[q] + 1 <= Len(lg[q])
    /\ lg[q][x - start[q] + 1].t = t

\* Whether voter q's copy at slot x counts toward commit once the durable marks are dur: a
\* copy counts once it is durable (AckBeforeSync: whether durable or not).
Counts(lg, dur, q, x, t) == Holds(lg, q, x, t) /\ (AckBeforeSync \/ x <= dur[q])

\* Leader l's commit index once the logs are lg and the durable marks dur: the highest slot of
\* its own term that a majority of voters holds (durably, with the rule on), or its commit
\* index unchanged.  Counts(lg, dur, q, x, term[l]) is written out in place, with l's log,
\* start and term read once.
CommitIn(lg, dur, l) ==
    LET gl == lg[l]
        sl == start[l]
        tl == term[l]
        c == {x \in (commit[l] + 1)..(sl - 1 + Len(gl)) :
                 /\ gl[x - sl + 1].t = tl
                 /\ 2 * Cardinality({q \in Voters :
                                         /\ start[q] <= x
                                         /\ x - start[q] + 1 <= Len(lg[q])
                                         /\ lg[q][x - start[q] + 1].t = tl
                                         /\ (AckBeforeSync \/ x <= dur[q])}) > NumVoters}
    IN IF c = {} THEN commit[l] ELSE SetMax(c)

\* Leader l's reads are confirmed: its term's noop is committed and a majority of voters
\* holds no newer term (the heartbeat round of a read index).
Confirmed(l) ==
    /\ leader[l]
    /\ TermAt(l, commit[l]) = term[l]
    /\ 2 * Cardinality({q \in Voters : term[q] <= term[l]}) > NumVoters

\* n has a read index: a confirmed leader's commit index, which n's walk has reached.
ReadIndexOK(n) == \E l \in Voters : Confirmed(l) /\ commit[n] >= commit[l]

\* What n answers a read from slot from (at most commit[n] + 1), as the core does.
ReadAnswer(n, from) ==
    IF ~ReadIndexOK(n) THEN "NotReady"
    ELSE IF from < floor[n] THEN "CursorTooOld"
    ELSE IF from < start[n] THEN "NotHeld"
    ELSE "Served"

-----------------------------------------------------------------------------
(* Initial state: voter 1 leads term 1 with every voter's vote; every log is empty; owner 1 *)
(* holds the writer token.                                                                  *)

Init ==
    /\ term = [n \in Nodes |-> 1]
    /\ vote = [n \in Nodes |-> IF n \in Voters THEN 1 ELSE 0]
    /\ leader = [n \in Nodes |-> n = 1]
    /\ log = [n \in Nodes |-> << >>]
    /\ start = [n \in Nodes |-> 1]
    /\ commit = [n \in Nodes |-> 0]
    /\ writer = [n \in Nodes |-> 1]
    /\ floor = [n \in Nodes |-> 1]
    /\ sterm = [n \in Nodes |-> 0]
    /\ swriter = [n \in Nodes |-> 1]
    /\ sfloor = [n \in Nodes |-> 1]
    /\ high = [n \in Nodes |-> <<1, IF n \in Voters THEN 1 ELSE 0>>]
    /\ decided = 1
    /\ acked = {}
    /\ writes = 0
    /\ truncates = 0
    /\ setleaders = 0
    /\ promotions = 0
    /\ durable = [n \in Nodes |-> 0]
    /\ crashes = 0

-----------------------------------------------------------------------------
(* Actions.  Each is a named operator with explicit parameters.  A value an *)
(* action computes for its successor is bound with \E x \in {e} before the  *)
(* first primed variable is set, not with LET: TLC checks a LET value       *)
(* against the successor built so far each time it is read after that (it   *)
(* took three quarters of ParosTrimJump's checking time).  \E over a one-   *)
(* element set means what LET means: no state or count changes.             *)

\* Voter b is elected by the majority Q of voters (b in Q): every member's log is at most as
\* up to date as b's.  The members take the new term and vote for b; b leads and appends its
\* noop; the other members that led stop.  Nodes outside Q learn the term later.  A member
\* persists its vote before it answers, and b its noop and its vote before it asks, so the
\* members' logs are durable.
Promote(b, Q) ==
    /\ promotions < MaxPromotions
    /\ ~leader[b]
    /\ b \in Q
    /\ 2 * Cardinality(Q) > NumVoters
    /\ \A q \in Q : UpToDate(b, q)
    /\ \E newTerm \in {SetMax({term[q] : q \in Q}) + 1} :
       \E newLog \in {[log EXCEPT ![b] = Append(@, [k |-> "n", o |-> 0, t |-> newTerm, u |-> 0])]} :
       \E newHigh \in {[n \in Nodes |-> IF n \in Q THEN HighAfter(n, newTerm, b) ELSE high[n]]} :
       /\ term' = [n \in Nodes |-> IF n \in Q THEN newTerm ELSE term[n]]
       /\ vote' = [n \in Nodes |-> IF n \in Q THEN b ELSE vote[n]]
       /\ leader' = [n \in Nodes |-> IF n = b THEN TRUE ELSE IF n \in Q THEN FALSE ELSE leader[n]]
       /\ log' = newLog
       /\ high' = newHigh
       /\ durable' = [n \in Nodes |-> IF n \in Q THEN start[n] - 1 + Len(newLog[n]) ELSE durable[n]]
    /\ promotions' = promotions + 1
    /\ UNCHANGED <<start, commit, writer, floor, sterm, swriter, sfloor, decided, acked,
                   writes, truncates, setleaders, crashes>>

\* Owner o writes through leader l, fenced by o.  A leader's own append is durable before it
\* is sent (persist before send), here at once.
Write(o, l) ==
    LET r == [k |-> "w", o |-> o, t |-> term[l], u |-> 0] IN
    /\ writes < MaxWrites
    /\ leader[l]
    /\ log' = [log EXCEPT ![l] = Append(@, r)]
    /\ durable' = [durable EXCEPT ![l] = LastIndex(l) + 1]
    /\ writes' = writes + 1
    /\ UNCHANGED <<term, vote, leader, start, commit, writer, floor, sterm, swriter, sfloor,
                   high, decided, acked, truncates, setleaders, promotions, crashes>>

\* Owner o asks leader l to truncate, fenced by o, up to the truncate's own slot (everything
\* before it: the owner's state covers it; a lower up_to only keeps more).  FloorPastCommit:
\* the leader applies the floor now, if the fence matches its writer token.
Truncate(o, l) ==
    LET r == [k |-> "t", o |-> o, t |-> term[l], u |-> LastIndex(l) + 1] IN
    /\ truncates < MaxTruncates
    /\ leader[l]
    /\ log' = [log EXCEPT ![l] = Append(@, r)]
    /\ floor' = IF FloorPastCommit /\ AcceptsTruncate(writer[l], o)
                   THEN [floor EXCEPT ![l] = Max(@, r.u)] ELSE floor
    /\ durable' = [durable EXCEPT ![l] = LastIndex(l) + 1]
    /\ truncates' = truncates + 1
    /\ UNCHANGED <<term, vote, leader, start, commit, writer, sterm, swriter, sfloor,
                   high, decided, acked, writes, setleaders, promotions, crashes>>

\* Owner o (2 or more) asks leader l for the writer token: SetLeader { new: o, old: o - 1 }.
SetLeader(o, l) ==
    /\ o >= 2
    /\ setleaders < MaxSetLeaders
    /\ leader[l]
    /\ log' = [log EXCEPT ![l] = Append(@, [k |-> "s", o |-> o, t |-> term[l], u |-> 0])]
    /\ durable' = [durable EXCEPT ![l] = LastIndex(l) + 1]
    /\ setleaders' = setleaders + 1
    /\ UNCHANGED <<term, vote, leader, start, commit, writer, floor, sterm, swriter, sfloor,
                   high, decided, acked, writes, truncates, promotions, crashes>>

\* Leader l sends node f one AppendEntries and handles its answer in the same step.  f gets
\* the record after their common prefix (dropping a conflicting suffix), or nothing; f takes
\* l's term (a new term: no vote, and a leader of an older term stops); f's commit index
\* rises to l's as sent (commit[l], capped by what f now matches) and f walks to it; then l
\* commits what a majority of voters holds of its term and walks to it, acknowledging writes.
\* FloorPastCommit: f applies a received truncate's floor at once.  f persists what it takes
\* before it answers, so its log is durable; AckBeforeSync: a follower of l's term answers
\* before the record it takes is durable (a new term's promise is persisted first, and the
\* answer waits for it, so then the record is durable too).
Replicate(l, f) ==
    /\ leader[l]
    /\ f /= l
    /\ term[f] <= term[l]
    /\ \E m \in {MatchLen(l, f)} :
       /\ m >= start[l] - 1    \* CanReplicate(l, f), with m computed once
       /\ \E sent \in {m < LastIndex(l)} :
          \* r, the record sent, is read only when one is sent ("none" otherwise).
          \E r \in {IF sent THEN Rec(l, m + 1) ELSE "none"} :
          \E newF \in {IF sent THEN Append(SubSeq(log[f], 1, m - start[f] + 1), r) ELSE log[f]} :
          \E fc \in {Max(commit[f], Min(commit[l], IF sent THEN m + 1 ELSE m))} :
          \E fw \in {WalkTo(f, newF, fc, FALSE)} :
          \E lg \in {[log EXCEPT ![f] = newF]} :
          \E dur \in {[durable EXCEPT ![f] = IF AckBeforeSync /\ sent /\ term[f] = term[l] THEN m
                                             ELSE start[f] - 1 + Len(newF)]} :
          \E lc \in {CommitIn(lg, dur, l)} :
          \E lw \in {Walk([w |-> writer[l], f |-> floor[l], d |-> fw.d, a |-> acked,
                           i |-> commit[l] + 1, ack |-> TRUE],
                          Slots(log[l], start[l], commit[l] + 1, lc))} :
          \E fFloor \in {IF FloorPastCommit /\ sent /\ r.k = "t" /\ AcceptsTruncate(writer[f], r.o)
                              THEN Max(fw.f, r.u) ELSE fw.f} :
          \E fVote \in {IF term[f] < term[l] THEN 0 ELSE vote[f]} :
          \E fHigh \in {HighAfter(f, term[l], fVote)} :
          /\ log' = lg
          /\ commit' = [commit EXCEPT ![f] = fc, ![l] = lc]
          /\ writer' = [writer EXCEPT ![f] = fw.w, ![l] = lw.w]
          /\ floor' = [floor EXCEPT ![f] = fFloor, ![l] = lw.f]
          /\ decided' = lw.d
          /\ acked' = Judged(lw.a, lw.d)
          /\ vote' = [vote EXCEPT ![f] = fVote]
          /\ high' = [high EXCEPT ![f] = fHigh]
          /\ durable' = dur
    /\ term' = [term EXCEPT ![f] = term[l]]
    /\ leader' = [leader EXCEPT ![f] = IF term[f] < term[l] THEN FALSE ELSE leader[f]]
    /\ UNCHANGED <<start, sterm, swriter, sfloor, writes, truncates, setleaders, promotions,
                   crashes>>

\* Leader l no longer holds the slot after f's log (nor any slot where they agree): it answers
\* TrimmedTo { point: start[l], state: its sealed state }.  f drops what it holds, holds
\* nothing below the point, commits up to point - 1 with the sealed writer token, and raises
\* its floor to the sealed one.  The jump never touches term or vote (JumpResetsTerm: it
\* overwrites them with the sealed term and no vote).  A leader never jumps; a point at or
\* below f's floor or first held slot teaches it nothing.
TrimmedTo(l, f) ==
    /\ leader[l]
    /\ f /= l
    /\ ~leader[f]
    /\ term[f] <= term[l]
    /\ ~CanReplicate(l, f)
    /\ start[l] > floor[f]
    /\ start[l] > start[f]
    /\ \E point \in {start[l]} :
       \E newTerm \in {IF JumpResetsTerm THEN sterm[l] ELSE term[f]} :
       \E newVote \in {IF JumpResetsTerm THEN 0 ELSE vote[f]} :
       \E newHigh \in {HighAfter(f, newTerm, newVote)} :
       /\ log' = [log EXCEPT ![f] = << >>]
       /\ start' = [start EXCEPT ![f] = point]
       /\ commit' = [commit EXCEPT ![f] = point - 1]
       /\ writer' = [writer EXCEPT ![f] = swriter[l]]
       /\ floor' = [floor EXCEPT ![f] = Max(floor[f], sfloor[l])]
       /\ sterm' = [sterm EXCEPT ![f] = sterm[l]]
       /\ swriter' = [swriter EXCEPT ![f] = swriter[l]]
       /\ sfloor' = [sfloor EXCEPT ![f] = sfloor[l]]
       /\ term' = [term EXCEPT ![f] = newTerm]
       /\ vote' = [vote EXCEPT ![f] = newVote]
       /\ high' = [high EXCEPT ![f] = newHigh]
       /\ durable' = [durable EXCEPT ![f] = point - 1]
    /\ UNCHANGED <<leader, decided, acked, writes, truncates, setleaders, promotions, crashes>>

\* A leader learns from node f that a newer term exists: it takes the term (no vote in it)
\* and stops leading.  Until then a deposed leader keeps sequencing.
StepDown(l, f) ==
    /\ leader[l]
    /\ term[f] > term[l]
    /\ term' = [term EXCEPT ![l] = term[f]]
    /\ vote' = [vote EXCEPT ![l] = 0]
    /\ leader' = [leader EXCEPT ![l] = FALSE]
    /\ high' = [high EXCEPT ![l] = HighAfter(l, term[f], 0)]
    /\ UNCHANGED <<log, start, commit, writer, floor, sterm, swriter, sfloor, decided, acked,
                   writes, truncates, setleaders, promotions, durable, crashes>>

\* Node n drops every slot below its floor, clamped to its committed prefix, and seals the
\* term of the last dropped slot and the state the dropped slots folded to (sealed durably).
Compact(n) ==
    \E s \in {Min(floor[n], commit[n] + 1)} :
    /\ start[n] < s
    /\ \E st \in {Walk([w |-> swriter[n], f |-> sfloor[n], d |-> 1, a |-> {}, i |-> start[n],
                        ack |-> FALSE],
                       Slots(log[n], start[n], start[n], s - 1))} :
       \E sealed \in {Rec(n, s - 1).t} :
       /\ log' = [log EXCEPT ![n] = SubSeq(@, s - start[n] + 1, Len(@))]
       /\ start' = [start EXCEPT ![n] = s]
       /\ sterm' = [sterm EXCEPT ![n] = sealed]
       /\ swriter' = [swriter EXCEPT ![n] = st.w]
       /\ sfloor' = [sfloor EXCEPT ![n] = st.f]
       /\ durable' = [durable EXCEPT ![n] = Max(@, s - 1)]
    /\ UNCHANGED <<term, vote, leader, commit, writer, floor, high, decided, acked,
                   writes, truncates, setleaders, promotions, crashes>>

\* Node n crashes and restarts at once: it drops the slots it holds that are not durable, and
\* a leader restarts as a follower of the same term.  Its promise, sealed state, commit index
\* (clamped to what it still holds) and walk are durable.  A crash that would change nothing
\* but the count (a follower holding nothing volatile) is not taken.
Crash(n) ==
    /\ crashes < MaxCrashes
    /\ leader[n] \/ durable[n] < LastIndex(n)
    /\ log' = [log EXCEPT ![n] = SubSeq(@, 1, durable[n] - start[n] + 1)]
    /\ leader' = [leader EXCEPT ![n] = FALSE]
    /\ commit' = [commit EXCEPT ![n] = Min(@, durable[n])]
    /\ crashes' = crashes + 1
    /\ UNCHANGED <<term, vote, start, writer, floor, sterm, swriter, sfloor, high, decided,
                   acked, writes, truncates, setleaders, promotions, durable>>

-----------------------------------------------------------------------------

\* Each parameter ranges over its set less the values for which the action's
\* guards never hold, so that TLC does not evaluate those instances in every
\* state: Promote's Q is a majority of voters holding b, and Replicate,
\* TrimmedTo and StepDown take f /= l.  The guards stay; the enabled instances,
\* their order, the states and traces are the same.
Next ==
    \/ \E b \in Voters : \E Q \in {S \in SUBSET Voters : b \in S /\ 2 * Cardinality(S) > NumVoters} :
          Promote(b, Q)
    \/ \E o \in Owners, l \in Voters : Write(o, l)
    \/ \E o \in Owners, l \in Voters : Truncate(o, l)
    \/ \E o \in Owners, l \in Voters : SetLeader(o, l)
    \/ \E l \in Voters : \E f \in Nodes \ {l} : Replicate(l, f)
    \/ \E l \in Voters : \E f \in Nodes \ {l} : TrimmedTo(l, f)
    \/ \E l \in Voters : \E f \in Nodes \ {l} : StepDown(l, f)
    \/ \E n \in Nodes : Compact(n)
    \/ \E n \in Nodes : Crash(n)

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Invariants.  Same names in Stateright, the audits and the docs. *)

TypeOK ==
    /\ term \in [Nodes -> 1..MaxTerm]
    /\ vote \in [Nodes -> 0..NumVoters]
    /\ leader \in [Nodes -> BOOLEAN]
    /\ \A n \in Nodes : /\ LastIndex(n) <= MaxLen
                        /\ \A i \in 1..Len(log[n]) : log[n][i] \in Records
    /\ start \in [Nodes -> 1..(MaxLen + 1)]
    /\ commit \in [Nodes -> 0..MaxLen]
    /\ writer \in [Nodes -> Owners]
    /\ floor \in [Nodes -> 1..(MaxLen + 1)]
    /\ sterm \in [Nodes -> 0..MaxTerm]
    /\ swriter \in [Nodes -> Owners]
    /\ sfloor \in [Nodes -> 1..(MaxLen + 1)]
    /\ high \in [Nodes -> (1..MaxTerm) \X (0..NumVoters)]
    /\ decided \in 1..(MaxLen + 1)
    /\ acked \subseteq (1..MaxLen) \X Records
    /\ writes \in 0..MaxWrites
    /\ truncates \in 0..MaxTruncates
    /\ setleaders \in 0..MaxSetLeaders
    /\ promotions \in 0..MaxPromotions
    /\ \A n \in Nodes : start[n] - 1 <= durable[n] /\ durable[n] <= LastIndex(n)
    /\ crashes \in 0..MaxCrashes

\* A node's promise (term, then vote within a term) never goes back, jumps included.
TermNeverDecreases ==
    \A n \in Nodes : ~GoesBack(high[n], <<term[n], vote[n]>>)

\* Every acknowledged write at or above the decided floor stays: every node that committed
\* its slot and holds it holds that write, and no node's floor or first held slot passes it.
AckedWritesKept ==
    \A x \in acked : \A n \in Nodes :
        /\ (x[1] <= commit[n] /\ start[n] <= x[1] /\ x[1] <= LastIndex(n)) => Rec(n, x[1]) = x[2]
        /\ x[1] >= decided => (floor[n] <= x[1] /\ start[n] <= x[1])

\* No two nodes hold different records at a slot both have committed.
\* (i ranges over the slots both committed and hold, Rec(a, i) = Rec(b, i) written out.)
CommittedPrefixAgreement ==
    \A a, b \in Nodes :
        \A i \in Max(start[a], start[b])..Min(Min(commit[a], commit[b]),
                                            Min(start[a] - 1 + Len(log[a]),
                                                start[b] - 1 + Len(log[b]))) :
            log[a][i - start[a] + 1] = log[b][i - start[b] + 1]

\* No read is served a slot below the floor of a truncate acknowledged before it (decided:
\* a truncate is acknowledged when its leader's walk accepts it), judged cluster-wide.
\* (ReadAnswer(n, from) = "Served" written out, n's read index computed once: a read from a
\* committed slot is served when n has a read index and the slot is at or above its floor and
\* its first held slot.)
NoReadBelowFloor ==
    \A n \in Nodes :
        ReadIndexOK(n) =>
            \A from \in 1..commit[n] : (from >= floor[n] /\ from >= start[n]) => from >= decided

\* No two nodes lead the same term.
ElectionSafety ==
    \A m, n \in Nodes : (m # n /\ leader[m] /\ leader[n]) => term[m] # term[n]

=============================================================================
