--------------------------- MODULE FelixHeadTrim ---------------------------
(***************************************************************************)
(* Felix's conditional head trim, fenced by the tail, with the floor tag.  *)
(*                                                                         *)
(* Why this spec exists: a trim is a record appended under the same tail   *)
(* check as a write, and a stale lease holder learns that it lost the      *)
(* lease either by reading a write of a newer epoch or from the tag that   *)
(* CursorTooOld carries (the headers, here the epoch, of the trim that set *)
(* the floor).  The spec checks that no committed write or trim of an      *)
(* older holder ever follows a committed write of a newer one              *)
(* (StaleTrimRefused), that every broker's floor is the one its trim       *)
(* records set and that it still holds the record that set it              *)
(* (FloorRecordKept), that no reader is served a record below the floor of *)
(* an acknowledged trim (NoReadBelowFloor), and, under weak fairness, that *)
(* a holder whose lease moved eventually retires (StaleHolderRetires).     *)
(* Every rule is a boolean switch; a twin is a configuration with exactly  *)
(* one rule off, and it must break its named invariant (see README.md, "A  *)
(* trim is a record").                                                     *)
(*                                                                         *)
(* The Stateright model in model/ mirrors this spec ONE TO ONE: the same   *)
(* variables, the same actions with the same parameters and guards, and    *)
(* the same initial state, so that TLC's distinct-state count equals       *)
(* Stateright's unique-state count for every passing configuration.        *)
(* Written for a mechanical translation: plain records, sequences and      *)
(* functions, every bound a CONSTANT, Next a plain disjunction.            *)
(*                                                                         *)
(* Offsets start at 1.  The model keeps every record in log[b], even the   *)
(* ones a broker deleted: start[b] is the first offset the broker still    *)
(* holds.  Actions never look at a deleted record's contents, except its   *)
(* term (Raft keeps the term of the last deleted entry in its sealed       *)
(* state); the invariants look at all of them ("deleted ones included").   *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS
    NumBrokers,       \* brokers 1..NumBrokers (3)
    NumHolders,       \* lease holders 1..NumHolders; holder h's epoch is h (2)
    MaxWrites,        \* writes appended, all holders and brokers together
    MaxTrims,         \* trims appended (a no-op trim needs one left but uses none up)
    MaxPromotions,    \* elections (each appends the new leader's noop)
    MaxCrashes,       \* leader crash-restarts
    SegSize,          \* records per segment; segment k holds (k-1)*SegSize+1 .. k*SegSize
    \* Rule switches.  FALSE everywhere is the design with every rule on.
    HiddenTrims,      \* the design before the fix: readers skip trims and CursorTooOld carries nothing
    Untagged,         \* only the tag is gone (FloorTag = 0)
    NoopSkip,         \* a no-op trim skips the tail check and answers the tail
    Retention,        \* retention deletes committed segments regardless of trims
    ReadFromEarliest, \* a holder re-reads from earliest (the floor), never from its own cursor
    TailFromRefusal,  \* a holder adopts the tail named by OffsetMismatch
    CompactActive,    \* compaction may delete the active segment (the one holding the floor-setting trim)
    TagAtFloor,       \* the tag is read from the record at the floor, not from the trim that set it
    VisibleTrims,     \* the seed's rejected first fix: no tag, readers see trims, deletion on
    LocalReads        \* a broker serves reads from its own state, without a read index

ASSUME NumBrokers \in Nat \ {0}
ASSUME NumHolders \in Nat \ {0}
ASSUME MaxWrites \in Nat /\ MaxTrims \in Nat /\ MaxPromotions \in Nat /\ MaxCrashes \in Nat
ASSUME SegSize \in Nat \ {0}
ASSUME \A sw \in {HiddenTrims, Untagged, NoopSkip, Retention, ReadFromEarliest,
                  TailFromRefusal, CompactActive, TagAtFloor, VisibleTrims,
                  LocalReads} : sw \in BOOLEAN

Brokers == 1..NumBrokers
Holders == 1..NumHolders
\* Every append uses up a write, a trim or a promotion (the leader's noop).
MaxLen == MaxWrites + MaxTrims + MaxPromotions
\* The initial leader holds term 1; each promotion raises the highest term by one.
MaxTerm == 1 + MaxPromotions

\* Record kinds: "w" a write, "t" a trim, "n" the leader's noop (bookkeeping).
\* h: the holder's epoch (0 on a noop); t: the term of the leader that sequenced
\* it; f: the floor a trim asks for (0 on writes and noops).
Records == [k : {"w", "t", "n"}, h : 0..NumHolders, t : 1..MaxTerm, f : 0..(MaxLen + 1)]

VARIABLES
    term,        \* term[b]: broker b's current term (its promise)
    leader,      \* leader[b]: b believes it leads term[b] (a deposed leader still does)
    log,         \* log[b]: b's log, deleted records included (see start)
    commit,      \* commit[b]: b's committed index (a follower learns it from its leader)
    floor,       \* floor[b]: b's floor, applied as b's committed walk reaches each trim
    start,       \* start[b]: first offset b still holds; 1 + a multiple of SegSize
    lease,       \* the epoch (holder) the lease service has granted last
    expected,    \* expected[h]: the last offset holder h believes is in the stream (its tail)
    retired,     \* retired[h]: h learnt that a newer holder exists and stopped
    staleRead,   \* some read served a write below the floor of an acknowledged trim (history)
    writes,      \* writes appended so far
    trims,       \* trims appended so far
    promotions,  \* elections so far
    crashes      \* crashes so far

vars == <<term, leader, log, commit, floor, start, lease, expected, retired, staleRead,
          writes, trims, promotions, crashes>>

-----------------------------------------------------------------------------
(* Helpers: pure functions of the state.  The ones every step evaluates read a *)
(* log once, into a LET name, and loop over bound variables, not through      *)
(* helper calls: TLC checks an operator argument or a LET value against the   *)
(* whole state each time it is used again, which costs more than the work it *)
(* saves.  Each says what it computes; none changes a state or a count.       *)

Max(a, b) == IF a >= b THEN a ELSE b
Min(a, b) == IF a <= b THEN a ELSE b
SetMax(S) == CHOOSE x \in S : \A y \in S : y <= x
SetMin(S) == CHOOSE x \in S : \A y \in S : x <= y

\* The term of b's last record (0 for an empty log).
LastTerm(b) == IF Len(log[b]) = 0 THEN 0 ELSE log[b][Len(log[b])].t

\* Raft's election restriction: b's log is at least as up to date as q's.
UpToDate(b, q) ==
    LET tb == LastTerm(b)
        tq == LastTerm(q)
    IN \/ tb > tq
       \/ /\ tb = tq
          /\ Len(log[b]) >= Len(log[q])

\* The floor after a committed walk over lg[b]'s records from + 1 .. to, starting
\* from floor fl: each trim's floor is applied when the walk reaches it, and a
\* floor never decreases.
Walk(lg, b, from, to, fl) ==
    LET g == lg[b] IN
    SetMax({fl} \cup {g[i].f : i \in {j \in (from + 1)..to : g[j].k = "t"}})

\* The floor b's trim records set: the highest floor among b's committed trims,
\* deleted ones included, 1 when none (what floor[b] must be: FloorRecordKept).
TrimFloor(b) == Walk(log, b, 0, commit[b], 1)

\* The offset of the trim record that set b's floor (the first committed trim
\* asking for floor[b]); 0 when no trim set it.
FloorSetter(b) ==
    LET g == log[b]
        fl == floor[b]
        setters == {i \in 1..commit[b] : g[i].k = "t" /\ g[i].f = fl}
    IN IF floor[b] = 1 \/ setters = {} THEN 0 ELSE SetMin(setters)

\* The first offset b can serve: below it a read is refused with CursorTooOld.
ReadableStart(b) == Max(floor[b], start[b])

\* The tag CursorTooOld carries: the epoch in the headers of the trim that set
\* the floor, found in b's trim index (derived from the records b still holds);
\* 0 when the tag is off, when no trim set the floor, or when the record is gone.
\* TagAtFloor: the epoch of whatever record sits at the floor (a write, a noop
\* or a trim), which is the floor-setting trim only when a trim asks for its
\* own offset.
FloorTag(b) ==
    LET setter == FloorSetter(b) IN
    IF HiddenTrims \/ Untagged \/ VisibleTrims \/ floor[b] = 1 THEN 0
    ELSE IF TagAtFloor
        THEN IF floor[b] >= start[b] THEN log[b][floor[b]].h ELSE 0
    ELSE IF setter = 0 \/ setter < start[b] THEN 0
    ELSE log[b][setter].h

\* The highest floor of any acknowledged trim.  A trim is acknowledged once it
\* is committed, and a broker's floor covers exactly its committed trims, so
\* this is the highest floor any broker has applied.
AckedFloor == SetMax({floor[b] : b \in Brokers})

\* Leader l can hand out a read index: a heartbeat round shows that a majority
\* still accepts its term (so no newer leader exists), and it has committed a
\* record of its own term (a new leader's noop; the initial leader of term 1
\* has no earlier term to catch up with).  The read index is commit[l].
ReadIndexFrom(l) ==
    /\ leader[l]
    /\ 2 * Cardinality({q \in Brokers : term[q] <= term[l]}) > NumBrokers
    /\ \/ term[l] = 1
       \/ commit[l] > 0 /\ log[l][commit[l]].t = term[l]

\* Broker s may answer a read: it learnt a read index from the current leader
\* and its committed walk has reached it (LocalReads: any broker, at once, from
\* its own state).  The cheap tests come before ReadIndexFrom(l), which TLC
\* then evaluates only for a leader whose commit index s has reached.
Serves(s) ==
    \/ LocalReads
    \/ \E l \in Brokers : leader[l] /\ commit[s] >= commit[l] /\ ReadIndexFrom(l)

\* A holder acts while it believes it holds the lease: it was granted the lease
\* at some point (h <= lease) and has not learnt of a newer holder.
Active(h) == h <= lease /\ ~retired[h]

\* The longest prefix on which the logs of l and f agree (Log Matching: equal
\* terms at an offset mean equal prefixes up to it): the highest m in
\* 0..Min(Len(log[l]), Len(log[f])) with log[l][i].t = log[f][i].t for every
\* i in 1..m.  Found in one pass: the offset before the first one where the
\* terms differ, or the shorter length when they never do.
MatchLen(l, f) ==
    LET gl == log[l]
        gf == log[f]
        n == Min(Len(gl), Len(gf))
        differ == {i \in 1..n : gl[i].t /= gf[i].t}
    IN IF differ = {} THEN n ELSE SetMin(differ) - 1

\* Brokers whose logs (in lg, a value of log) hold l's record at offset c
\* (same offset, same term).
Holding(lg, l, c) == {q \in Brokers : Len(lg[q]) >= c /\ lg[q][c].t = lg[l][c].t}

\* Leader l's commit index once the logs are lg: the highest offset of its own
\* term that a majority holds (commit by majority in the current term), or
\* its commit index unchanged.  Holding(lg, l, x) is written out in place, with
\* l's log and term read once (its record at x is of term tl there).
CommitIn(lg, l) ==
    LET gl == lg[l]
        tl == term[l]
        c == {x \in (commit[l] + 1)..Len(gl) :
                 /\ gl[x].t = tl
                 /\ 2 * Cardinality({q \in Brokers : Len(lg[q]) >= x /\ lg[q][x].t = tl})
                      > NumBrokers}
    IN IF c = {} THEN commit[l] ELSE SetMax(c)

\* The first and last offset of the segment that starts at start[b].
SegFirst(b) == start[b]
SegLast(b) == start[b] + SegSize - 1

\* A committed write of an epoch newer than h exists: h's lease has moved and
\* the new holder's fenced write landed.
FenceCommitted(h) ==
    \E b \in Brokers : \E i \in 1..commit[b] : log[b][i].k = "w" /\ log[b][i].h > h

-----------------------------------------------------------------------------
(* Initial state: broker 1 leads term 1, every log is empty, holder 1 has the *)
(* lease and believes the stream is empty.                                    *)

Init ==
    /\ term = [b \in Brokers |-> 1]
    /\ leader = [b \in Brokers |-> b = 1]
    /\ log = [b \in Brokers |-> << >>]
    /\ commit = [b \in Brokers |-> 0]
    /\ floor = [b \in Brokers |-> 1]
    /\ start = [b \in Brokers |-> 1]
    /\ lease = 1
    /\ expected = [h \in Holders |-> 0]
    /\ retired = [h \in Holders |-> FALSE]
    /\ staleRead = FALSE
    /\ writes = 0
    /\ trims = 0
    /\ promotions = 0
    /\ crashes = 0

-----------------------------------------------------------------------------
(* Actions.  Each is a named operator with explicit parameters.  A value an *)
(* action computes for its successor is bound with \E x \in {e} before the  *)
(* first primed variable is set, not with LET: TLC checks a LET value       *)
(* against the successor built so far each time it is read after that (it   *)
(* took three quarters of ParosTrimJump's checking time).  \E over a one-   *)
(* element set means what LET means: no state or count changes.             *)
(*                                                                          *)
(* TLC evaluates the guards of every action instance of Next (about ninety; *)
(* Next leaves out the instances whose guards never hold) in every state,   *)
(* and an operator's parameter costs it more to read than a variable: so    *)
(* the guards that fail most often and read the fewest parameters come      *)
(* first (Write, TrimAppend, TrimNoop).  A step that would change no        *)
(* variable (a self-loop of Read, TrimNoop or Replicate) is left out by a   *)
(* guard that TLC evaluates as one boolean (a comparison, or ~(...) around  *)
(* a conjunction), since it takes each true disjunct of a \/ in an action   *)
(* as a branch of its own.  Its successor is the state itself, already      *)
(* found, so no state, count or trace changes, and WF_vars(A) keeps its     *)
(* meaning: it speaks only of <<A>>_vars steps, which change vars (and TLC  *)
(* gives every state of its liveness graph a stuttering step anyway).       *)
(* Leaving the self-loops out spares TLC a sixth to a third of the states   *)
(* it generates, yet little time; the guard order saves more.               *)

\* The lease service grants the lease to the next epoch without telling the
\* old holder (it may be paused, partitioned, or its clock slow).
MoveLease ==
    /\ lease < NumHolders
    /\ lease' = lease + 1
    /\ UNCHANGED <<term, leader, log, commit, floor, start, expected, retired, staleRead,
                   writes, trims, promotions, crashes>>

\* Broker b is elected by the majority Q (b in Q): every member's log is at
\* most as up to date as b's.  The members take the new term; b leads it and
\* appends its noop; the other members that led stop leading.  Brokers outside
\* Q learn the term later, so a deposed leader outside Q keeps taking writes.
Promote(b, Q) ==
    /\ promotions < MaxPromotions
    /\ ~leader[b]
    /\ b \in Q
    /\ 2 * Cardinality(Q) > NumBrokers
    /\ \A q \in Q : UpToDate(b, q)
    /\ \E newTerm \in {SetMax({term[q] : q \in Q}) + 1} :
       /\ term' = [x \in Brokers |-> IF x \in Q THEN newTerm ELSE term[x]]
       /\ leader' = [x \in Brokers |-> IF x = b THEN TRUE
                                       ELSE IF x \in Q THEN FALSE
                                       ELSE leader[x]]
       /\ log' = [log EXCEPT ![b] = Append(@, [k |-> "n", h |-> 0, t |-> newTerm, f |-> 0])]
    /\ promotions' = promotions + 1
    /\ UNCHANGED <<commit, floor, start, lease, expected, retired, staleRead,
                   writes, trims, crashes>>

\* Holder h writes through broker s, conditional on the tail it expects.  The
\* check is done in s's sequencing step: it passes only if s's log ends at
\* expected[h].  The holder does not take a tail from the append: it learns
\* the new tail by reading (after the write commits).
Write(h, s) ==
    /\ writes < MaxWrites
    /\ leader[s]
    /\ expected[h] = Len(log[s])
    /\ Active(h)
    /\ log' = [log EXCEPT ![s] = Append(@, [k |-> "w", h |-> h, t |-> term[s], f |-> 0])]
    /\ writes' = writes + 1
    /\ UNCHANGED <<term, leader, commit, floor, start, lease, expected, retired, staleRead,
                   trims, promotions, crashes>>

\* Holder h asks broker s for floor fl: above s's floor (not a no-op) and at
\* most the trim record's own offset (expected[h] + 1 once the tail check
\* passes).  Every such floor is a branch: a floor below the record's own
\* offset leaves records between the floor and the trim readable (a checkpoint
\* run kept above its truncate), and then the record at the floor is not the
\* trim that set it.  The trim record is appended under the same tail check
\* as a write.
TrimAppend(h, s, fl) ==
    /\ trims < MaxTrims
    /\ leader[s]
    /\ fl > floor[s]
    /\ fl <= expected[h] + 1
    /\ expected[h] = Len(log[s])
    /\ Active(h)
    /\ log' = [log EXCEPT ![s] = Append(@, [k |-> "t", h |-> h, t |-> term[s], f |-> fl])]
    /\ trims' = trims + 1
    /\ UNCHANGED <<term, leader, commit, floor, start, lease, expected, retired, staleRead,
                   writes, promotions, crashes>>

\* Holder h asks broker s for a floor at or below s's floor: a no-op.  Nothing
\* is written, but the tail is still checked (unless NoopSkip), and the answer
\* names s's tail, which the holder takes as its own.  A no-op uses up no
\* trim (it needs one left to be asked): with the check on it changes nothing,
\* and counting it would only tell states apart by the counter.  Since the
\* holder's tail then already is s's tail, it is a self-loop and not taken
\* (see Actions): only a no-op that skips the check (NoopSkip) is a step.
TrimNoop(h, s) ==
    /\ trims < MaxTrims
    /\ leader[s]
    /\ expected[h] /= Len(log[s])
    /\ NoopSkip \/ expected[h] = Len(log[s])
    /\ Active(h)
    /\ expected' = [expected EXCEPT ![h] = Len(log[s])]
    /\ UNCHANGED <<term, leader, log, commit, floor, start, lease, retired, staleRead,
                   writes, trims, promotions, crashes>>

\* TailFromRefusal only: a write or trim of h refused by s with OffsetMismatch
\* names s's tail, and h adopts it.  With the rule on, a refusal changes
\* nothing (the holder must read), so it is not an action at all.
Refused(h, s) ==
    /\ TailFromRefusal
    /\ Active(h)
    /\ leader[s]
    /\ expected[h] /= Len(log[s])
    /\ expected' = [expected EXCEPT ![h] = Len(log[s])]
    /\ UNCHANGED <<term, leader, log, commit, floor, start, lease, retired, staleRead,
                   writes, trims, promotions, crashes>>

\* Holder h reads the committed stream from broker s, from its own cursor
\* expected[h] + 1 (ReadFromEarliest: from earliest, which resolves to the
\* floor and is never refused).  s answers only once it may serve (Serves: a
\* read index).  Below where s can serve, the read is refused with
\* CursorTooOld carrying the floor tag, and the holder resumes there.  A tag
\* of a newer epoch, or a committed write of a newer epoch (VisibleTrims: or a
\* trim), retires the holder (its tail is reset to 0: a retired holder never
\* uses it, and keeping it would only tell states apart); otherwise the holder
\* takes s's committed index as its tail.  Readers skip trims (VisibleTrims:
\* not) and noops.  staleRead records a write served below the floor of an
\* acknowledged trim (NoReadBelowFloor).  A read that retires nobody, serves
\* no stale write and finds the holder's tail already at s's committed index
\* changes nothing: a self-loop, not taken (see Actions).
\*
\* ReadOutcome(h, s) is what the read leaves behind, <<retire, stale, tail>>:
\* whether it retires h, staleRead after it, and h's new tail (0 if retired).
\* The successor depends on nothing else, so brokers that answer alike give
\* one successor: Next takes each holder's distinct outcomes once (Reads),
\* instead of one successor per broker that TLC would fingerprint and find
\* already seen (more than half of the states Steady generated).  The states
\* and traces are the same; a counterexample names Reads(h), not the broker.
ReadOutcome(h, s) ==
    LET rs == ReadableStart(s)
        from == IF ReadFromEarliest THEN rs ELSE expected[h] + 1
        seen == {i \in Max(from, rs)..commit[s] :
                    log[s][i].k = "w" \/ (VisibleTrims /\ log[s][i].k = "t")}
        retire == (from < rs /\ FloorTag(s) > h) \/ \E i \in seen : log[s][i].h > h
        af == AckedFloor
    IN <<retire,
         staleRead \/ (seen /= {} /\ \E i \in seen : i < af),
         IF retire THEN 0 ELSE commit[s]>>

\* Holder h takes the outcome o of a read.
ReadTo(h, o) ==
    /\ ~(~o[1] /\ o[2] = staleRead /\ o[3] = expected[h])
    /\ staleRead' = o[2]
    /\ expected' = [expected EXCEPT ![h] = o[3]]
    /\ IF o[1]
          THEN retired' = [retired EXCEPT ![h] = TRUE]
          ELSE UNCHANGED retired
    /\ UNCHANGED <<term, leader, log, commit, floor, start, lease,
                   writes, trims, promotions, crashes>>

Read(h, s) ==
    /\ Active(h)
    /\ Serves(s)
    /\ \E o \in {ReadOutcome(h, s)} : ReadTo(h, o)

\* Some Read(h, s) of holder h: the same steps as \E s \in Brokers : Read(h, s).
Reads(h) ==
    /\ Active(h)
    /\ \E o \in {ReadOutcome(h, s) : s \in {b \in Brokers : Serves(b)}} : ReadTo(h, o)

\* Leader l sends follower f one AppendEntries and handles its answer in the
\* same step: f receives the record after their common prefix (dropping any
\* conflicting suffix), or nothing when it already holds all of l's log; f
\* takes l's term and, if the term is new to it, stops leading.  The message
\* carries l's commit index: f commits up to it, within the prefix it now
\* shares with l (Raft's min(leaderCommit, index of last new entry)).  Then l
\* commits what a majority now holds of its term.  Each broker whose commit
\* moved walks the newly committed records and applies their trims' floors.
\* A follower whose next record l has deleted cannot catch up here (no
\* TrimmedTo jump in this model).  A heartbeat that sends nothing, brings no
\* new term and moves no commit index is a self-loop, not taken (see
\* Actions); a commit index that did not move walks nothing (its floor stays).
Replicate(l, f) ==
    /\ leader[l]
    /\ f /= l
    /\ term[f] <= term[l]
    /\ \E m \in {MatchLen(l, f)} :
       \E sent \in {m < Len(log[l])} :
       /\ sent => m + 1 >= start[l]
       /\ \E newLog \in {IF sent THEN [log EXCEPT ![f] = Append(SubSeq(log[f], 1, m), log[l][m + 1])]
                          ELSE log} :
          \E fc \in {Max(commit[f], Min(commit[l], IF sent THEN m + 1 ELSE m))} :
          \E lc \in {CommitIn(newLog, l)} :
          /\ ~(~sent /\ term[f] = term[l] /\ fc = commit[f] /\ lc = commit[l])
          /\ \E nf \in {[floor EXCEPT ![l] = IF lc = commit[l] THEN floor[l]
                                               ELSE Walk(newLog, l, commit[l], lc, floor[l]),
                                      ![f] = IF fc = commit[f] THEN floor[f]
                                               ELSE Walk(newLog, f, commit[f], fc, floor[f])]} :
             /\ log' = newLog
             /\ commit' = [commit EXCEPT ![l] = lc, ![f] = fc]
             /\ floor' = nf
    /\ term' = [term EXCEPT ![f] = term[l]]
    /\ leader' = [leader EXCEPT ![f] = IF term[f] < term[l] THEN FALSE ELSE leader[f]]
    /\ UNCHANGED <<start, lease, expected, retired, staleRead, writes, trims, promotions, crashes>>

\* A leader learns from broker f's answer that a newer term exists: it takes
\* the term and stops leading.  Until then a deposed leader keeps appending.
StepDown(l, f) ==
    /\ leader[l]
    /\ term[f] > term[l]
    /\ term' = [term EXCEPT ![l] = term[f]]
    /\ leader' = [leader EXCEPT ![l] = FALSE]
    /\ UNCHANGED <<log, commit, floor, start, lease, expected, retired, staleRead,
                   writes, trims, promotions, crashes>>

\* Broker b (leader or follower, each on its own) deletes its oldest segment.
\* The rule: only a whole segment entirely below b's floor (so never the
\* active one, nor the one holding the floor-setting trim, which sits at or
\* above the floor).  CompactActive: any committed segment that starts below
\* the floor, so also the one holding the floor-setting trim, which is the
\* active segment whenever that trim is the last record written.
Compact(b) ==
    /\ IF CompactActive
          THEN /\ SegFirst(b) < floor[b]
               /\ SegLast(b) <= commit[b]
          ELSE SegLast(b) < floor[b]
    /\ start' = [start EXCEPT ![b] = SegLast(b) + 1]
    /\ UNCHANGED <<term, leader, log, commit, floor, lease, expected, retired, staleRead,
                   writes, trims, promotions, crashes>>

\* Retention (and VisibleTrims, judged with deletion on): broker b deletes its
\* oldest committed segment, whatever the floor and the trims say.
Retain(b) ==
    /\ Retention \/ VisibleTrims
    /\ SegLast(b) <= commit[b]
    /\ start' = [start EXCEPT ![b] = SegLast(b) + 1]
    /\ UNCHANGED <<term, leader, log, commit, floor, lease, expected, retired, staleRead,
                   writes, trims, promotions, crashes>>

\* Leader b crashes and restarts at once as a follower of the same term.  Its
\* log, term, commit index and floor are durable; its leadership is not.
Crash(b) ==
    /\ crashes < MaxCrashes
    /\ leader[b]
    /\ leader' = [leader EXCEPT ![b] = FALSE]
    /\ crashes' = crashes + 1
    /\ UNCHANGED <<term, log, commit, floor, start, lease, expected, retired, staleRead,
                   writes, trims, promotions>>

-----------------------------------------------------------------------------

\* Each parameter ranges over its set less the values for which the action's
\* guards never hold, so that TLC does not evaluate those instances in every
\* state: Promote's Q is a majority holding b, a trim asks for a floor above 1
\* (floor[s] >= 1 always), and Replicate and StepDown take f /= l.  The guards
\* stay; the enabled instances, their order, the states and traces are the same.
\* A holder's reads are Reads(h): each distinct outcome once, the same steps.
Next ==
    \/ MoveLease
    \/ \E b \in Brokers : \E Q \in {S \in SUBSET Brokers : b \in S /\ 2 * Cardinality(S) > NumBrokers} :
          Promote(b, Q)
    \/ \E h \in Holders, s \in Brokers : Write(h, s)
    \/ \E h \in Holders, s \in Brokers, fl \in 2..(MaxLen + 1) : TrimAppend(h, s, fl)
    \/ \E h \in Holders, s \in Brokers : TrimNoop(h, s)
    \/ \E h \in Holders, s \in Brokers : Refused(h, s)
    \/ \E h \in Holders : Reads(h)
    \/ \E l \in Brokers : \E f \in Brokers \ {l} : Replicate(l, f)
    \/ \E l \in Brokers : \E f \in Brokers \ {l} : StepDown(l, f)
    \/ \E b \in Brokers : Compact(b)
    \/ \E b \in Brokers : Retain(b)
    \/ \E b \in Brokers : Crash(b)

Spec == Init /\ [][Next]_vars

\* Weak fairness of the protocol's steps: holders keep reading (felixd polls),
\* leaders keep replicating, a deposed leader learns of the newer term, and a
\* cluster without a leader elects one while elections are left.  Writes,
\* trims, lease moves, deletion and crashes are choices of the clients and the
\* environment: never forced.
Fairness ==
    /\ \A h \in Holders, s \in Brokers : WF_vars(Read(h, s))
    /\ \A l \in Brokers, f \in Brokers : WF_vars(Replicate(l, f))
    /\ \A l \in Brokers, f \in Brokers : WF_vars(StepDown(l, f))
    /\ WF_vars(\E b \in Brokers, Q \in SUBSET Brokers : Promote(b, Q))

LiveSpec == Spec /\ Fairness

-----------------------------------------------------------------------------
(* Invariants.  Same names in Stateright, the audits and the docs. *)

TypeOK ==
    /\ term \in [Brokers -> 1..MaxTerm]
    /\ leader \in [Brokers -> BOOLEAN]
    /\ \A b \in Brokers : /\ Len(log[b]) <= MaxLen
                          /\ \A i \in 1..Len(log[b]) : log[b][i] \in Records
    /\ commit \in [Brokers -> 0..MaxLen]
    /\ \A b \in Brokers : commit[b] <= Len(log[b])
    /\ floor \in [Brokers -> 1..(MaxLen + 1)]
    /\ start \in [Brokers -> 1..(MaxLen + 1)]
    /\ \A b \in Brokers : start[b] <= commit[b] + 1
    /\ lease \in Holders
    /\ expected \in [Holders -> 0..MaxLen]
    /\ retired \in [Holders -> BOOLEAN]
    /\ staleRead \in BOOLEAN
    /\ writes \in 0..MaxWrites
    /\ trims \in 0..MaxTrims
    /\ promotions \in 0..MaxPromotions
    /\ crashes \in 0..MaxCrashes

\* No committed write or trim of one holder follows a committed write of a
\* newer holder (deleted records included).
StaleTrimRefused ==
    \A b \in Brokers :
        \A i \in 1..commit[b] :
            log[b][i].k = "w" =>
                \A j \in (i + 1)..commit[b] :
                    log[b][j].k \in {"w", "t"} => log[b][j].h >= log[b][i].h

\* Every broker's floor is the one its trim records set, deleted ones included
\* (its lazily applied floor equals the highest floor of its committed trims),
\* and it still holds the record that set it: it deleted only whole segments
\* entirely below its floor, and that record sits at or above the floor.  With
\* deletion by retention on (Retention, VisibleTrims), retention deletes past
\* the floor by design and only the first half is checked (as the audit does);
\* their danger is judged by StaleTrimRefused.
FloorRecordKept ==
    \A b \in Brokers :
        /\ floor[b] = TrimFloor(b)
        /\ (Retention \/ VisibleTrims) \/ start[b] <= floor[b]

\* No reader is ever served a record below the floor of a trim whose
\* acknowledgement came before the read (judged against the highest floor any
\* broker had applied when the read was served, not the serving broker's own).
NoReadBelowFloor == ~staleRead

\* No two brokers lead the same term (a deposed leader still believes it leads
\* its own, older, term).
ElectionSafety ==
    \A b, q \in Brokers : (b # q /\ leader[b] /\ leader[q]) => term[b] # term[q]

\* Liveness: once a write of a newer epoch is committed, a holder that has not
\* retired eventually retires, unless the cluster is left with no leader and no
\* election (then no record lands again).  Checked under LiveSpec.
NoLeaderEver == promotions = MaxPromotions /\ \A b \in Brokers : ~leader[b]

StaleHolderRetires ==
    \A h \in Holders : FenceCommitted(h) ~> (retired[h] \/ NoLeaderEver)

=============================================================================
