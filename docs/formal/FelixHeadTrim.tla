--------------------------- MODULE FelixHeadTrim ---------------------------
(***************************************************************************)
(* Felix's conditional head trim, fenced by the tail, with the floor tag.  *)
(*                                                                         *)
(* Why this spec exists: a trim is a record appended under the same tail   *)
(* check as a write, and a stale lease holder learns that it lost the      *)
(* lease either by reading a write of a newer epoch or from the tag that   *)
(* CursorTooOld carries (the epoch of the trim that set the floor).  The   *)
(* spec checks that no committed write or trim of an older holder ever     *)
(* follows a committed write of a newer one (StaleTrimRefused), and that   *)
(* the serving leader still holds the record that set its floor            *)
(* (FloorRecordKept).  Every rule is a boolean switch; a twin is a         *)
(* configuration with exactly one rule off, and it must break its named    *)
(* invariant (see README.md, "A trim is a record").                        *)
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
    ReadFromEarliest, \* a refused holder re-reads from earliest (the floor), never seeing the tag
    TailFromRefusal,  \* a holder adopts the tail named by OffsetMismatch
    CompactActive     \* compaction may delete the segment holding the floor-setting trim

ASSUME NumBrokers \in Nat \ {0}
ASSUME NumHolders \in Nat \ {0}
ASSUME MaxWrites \in Nat /\ MaxTrims \in Nat /\ MaxPromotions \in Nat /\ MaxCrashes \in Nat
ASSUME SegSize \in Nat \ {0}
ASSUME \A sw \in {HiddenTrims, Untagged, NoopSkip, Retention, ReadFromEarliest,
                  TailFromRefusal, CompactActive} : sw \in BOOLEAN

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
    commit,      \* commit[b]: b's committed index
    start,       \* start[b]: first offset b still holds; 1 + a multiple of SegSize
    lease,       \* the epoch (holder) the lease service has granted last
    expected,    \* expected[h]: the last offset holder h believes is in the stream (its tail)
    retired,     \* retired[h]: h learnt that a newer holder exists and stopped
    writes,      \* writes appended so far
    trims,       \* trims appended so far
    promotions,  \* elections so far
    crashes      \* crashes so far

vars == <<term, leader, log, commit, start, lease, expected, retired,
          writes, trims, promotions, crashes>>

-----------------------------------------------------------------------------
(* Helpers: pure functions of the state. *)

Max(a, b) == IF a >= b THEN a ELSE b
Min(a, b) == IF a <= b THEN a ELSE b
SetMax(S) == CHOOSE x \in S : \A y \in S : y <= x
SetMin(S) == CHOOSE x \in S : \A y \in S : x <= y

\* The term of b's last record (0 for an empty log).
LastTerm(b) == IF Len(log[b]) = 0 THEN 0 ELSE log[b][Len(log[b])].t

\* Raft's election restriction: b's log is at least as up to date as q's.
UpToDate(b, q) ==
    \/ LastTerm(b) > LastTerm(q)
    \/ /\ LastTerm(b) = LastTerm(q)
       /\ Len(log[b]) >= Len(log[q])

\* Offsets of b's committed trim records (deleted ones included).
CommittedTrims(b) == {i \in 1..commit[b] : log[b][i].k = "t"}

\* The floor: the highest floor among b's committed trims, 1 when none.
\* Each broker applies a trim's floor when its commit reaches the record, so the
\* floor is a function of the committed prefix and never decreases.
Floor(b) == SetMax({1} \cup {log[b][i].f : i \in CommittedTrims(b)})

\* The offset of the trim record that set the floor (the first committed trim
\* asking for Floor(b)); 0 when no trim set it.
FloorSetter(b) ==
    IF Floor(b) = 1 THEN 0
    ELSE SetMin({i \in CommittedTrims(b) : log[b][i].f = Floor(b)})

\* The first offset b can serve: below it a read is refused with CursorTooOld.
ReadableStart(b) == Max(Floor(b), start[b])

\* The tag CursorTooOld carries: the epoch of the floor-setting trim, found in
\* the records b still holds (its trim index is derived from them); 0 when the
\* tag is switched off, when no trim set the floor, or when the record is gone.
FloorTag(b) ==
    IF HiddenTrims \/ Untagged THEN 0
    ELSE IF FloorSetter(b) = 0 THEN 0
    ELSE IF FloorSetter(b) < start[b] THEN 0
    ELSE log[b][FloorSetter(b)].h

\* A holder acts while it believes it holds the lease: it was granted the lease
\* at some point (h <= lease) and has not learnt of a newer holder.
Active(h) == h <= lease /\ ~retired[h]

\* The longest prefix on which the logs of l and f agree (Log Matching: equal
\* terms at an offset mean equal prefixes up to it).
MatchLen(l, f) ==
    SetMax({m \in 0..Min(Len(log[l]), Len(log[f])) :
               \A i \in 1..m : log[l][i].t = log[f][i].t})

\* Brokers whose logs (in lg, a value of log) hold l's record at offset c
\* (same offset, same term).
Holding(lg, l, c) == {q \in Brokers : Len(lg[q]) >= c /\ lg[q][c].t = lg[l][c].t}

\* Leader l's commit index once the logs are lg: the highest offset of its own
\* term that a majority holds (commit by majority in the current term), or
\* its commit index unchanged.
CommitIn(lg, l) ==
    LET c == {x \in (commit[l] + 1)..Len(lg[l]) :
                 /\ lg[l][x].t = term[l]
                 /\ 2 * Cardinality(Holding(lg, l, x)) > NumBrokers}
    IN IF c = {} THEN commit[l] ELSE SetMax(c)

\* The first and last offset of the segment that starts at start[b].
SegFirst(b) == start[b]
SegLast(b) == start[b] + SegSize - 1

-----------------------------------------------------------------------------
(* Initial state: broker 1 leads term 1, every log is empty, holder 1 has the *)
(* lease and believes the stream is empty.                                    *)

Init ==
    /\ term = [b \in Brokers |-> 1]
    /\ leader = [b \in Brokers |-> b = 1]
    /\ log = [b \in Brokers |-> << >>]
    /\ commit = [b \in Brokers |-> 0]
    /\ start = [b \in Brokers |-> 1]
    /\ lease = 1
    /\ expected = [h \in Holders |-> 0]
    /\ retired = [h \in Holders |-> FALSE]
    /\ writes = 0
    /\ trims = 0
    /\ promotions = 0
    /\ crashes = 0

-----------------------------------------------------------------------------
(* Actions.  Each is a named operator with explicit parameters. *)

\* The lease service grants the lease to the next epoch without telling the
\* old holder (it may be paused, partitioned, or its clock slow).
MoveLease ==
    /\ lease < NumHolders
    /\ lease' = lease + 1
    /\ UNCHANGED <<term, leader, log, commit, start, expected, retired,
                   writes, trims, promotions, crashes>>

\* Broker b is elected by the majority Q (b in Q): every member's log is at
\* most as up to date as b's.  The members take the new term; b leads it and
\* appends its noop; the other members that led stop leading.  Brokers outside
\* Q learn the term later, so a deposed leader outside Q keeps taking writes.
Promote(b, Q) ==
    LET newTerm == SetMax({term[q] : q \in Q}) + 1 IN
    /\ promotions < MaxPromotions
    /\ ~leader[b]
    /\ b \in Q
    /\ 2 * Cardinality(Q) > NumBrokers
    /\ \A q \in Q : UpToDate(b, q)
    /\ term' = [x \in Brokers |-> IF x \in Q THEN newTerm ELSE term[x]]
    /\ leader' = [x \in Brokers |-> IF x = b THEN TRUE
                                    ELSE IF x \in Q THEN FALSE
                                    ELSE leader[x]]
    /\ log' = [log EXCEPT ![b] = Append(@, [k |-> "n", h |-> 0, t |-> newTerm, f |-> 0])]
    /\ promotions' = promotions + 1
    /\ UNCHANGED <<commit, start, lease, expected, retired, writes, trims, crashes>>

\* Holder h writes through broker s, conditional on the tail it expects.  The
\* check is done in s's sequencing step: it passes only if s's log ends at
\* expected[h].  The holder does not take a tail from the append: it learns
\* the new tail by reading (after the write commits).
Write(h, s) ==
    /\ Active(h)
    /\ writes < MaxWrites
    /\ leader[s]
    /\ expected[h] = Len(log[s])
    /\ log' = [log EXCEPT ![s] = Append(@, [k |-> "w", h |-> h, t |-> term[s], f |-> 0])]
    /\ writes' = writes + 1
    /\ UNCHANGED <<term, leader, commit, start, lease, expected, retired,
                   trims, promotions, crashes>>

\* Holder h asks broker s for floor fl, above s's floor (not a no-op), equal to
\* the trim record's own offset (expected[h] + 1 once the tail check passes):
\* the most a trim may ask for, everything before the record.  A lower floor
\* would only leave more records readable, so the model does not branch on it.
\* The trim record is appended under the same tail check as a write.
TrimAppend(h, s, fl) ==
    /\ Active(h)
    /\ trims < MaxTrims
    /\ leader[s]
    /\ expected[h] = Len(log[s])
    /\ fl > Floor(s)
    /\ fl = expected[h] + 1
    /\ log' = [log EXCEPT ![s] = Append(@, [k |-> "t", h |-> h, t |-> term[s], f |-> fl])]
    /\ trims' = trims + 1
    /\ UNCHANGED <<term, leader, commit, start, lease, expected, retired,
                   writes, promotions, crashes>>

\* Holder h asks broker s for a floor at or below s's floor: a no-op.  Nothing
\* is written, but the tail is still checked (unless NoopSkip), and the answer
\* names s's tail, which the holder takes as its own.  A no-op uses up no
\* trim (it needs one left to be asked): with the check on it changes nothing,
\* and counting it would only tell states apart by the counter.
TrimNoop(h, s) ==
    /\ Active(h)
    /\ trims < MaxTrims
    /\ leader[s]
    /\ NoopSkip \/ expected[h] = Len(log[s])
    /\ expected' = [expected EXCEPT ![h] = Len(log[s])]
    /\ UNCHANGED <<term, leader, log, commit, start, lease, retired,
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
    /\ UNCHANGED <<term, leader, log, commit, start, lease, retired,
                   writes, trims, promotions, crashes>>

\* Holder h reads the committed stream from broker s, from its own cursor
\* expected[h] + 1.  Below where s can serve, the read is refused with
\* CursorTooOld carrying the floor tag, and the holder resumes at the floor
\* (ReadFromEarliest: it re-reads from earliest instead, which resolves to the
\* floor and is never refused, so it never sees the tag).  A tag of a newer
\* epoch, or a committed write of a newer epoch, retires the holder (its tail
\* is reset to 0: a retired holder never uses it, and keeping it would only
\* tell states apart); otherwise the holder takes s's committed index as its
\* tail.  Readers skip trims.
Read(h, s) ==
    /\ Active(h)
    /\ leader[s]
    /\ LET from == expected[h] + 1
           rs == ReadableStart(s)
           tooOld == from < rs
           newer == {i \in Max(from, rs)..commit[s] :
                        log[s][i].k = "w" /\ log[s][i].h > h}
       IN IF (tooOld /\ ~ReadFromEarliest /\ FloorTag(s) > h) \/ newer /= {}
             THEN /\ retired' = [retired EXCEPT ![h] = TRUE]
                  /\ expected' = [expected EXCEPT ![h] = 0]
             ELSE /\ expected' = [expected EXCEPT ![h] = commit[s]]
                  /\ UNCHANGED retired
    /\ UNCHANGED <<term, leader, log, commit, start, lease,
                   writes, trims, promotions, crashes>>

\* Leader l sends follower f one AppendEntries and handles its answer in the
\* same step: f receives the record after their common prefix (dropping any
\* conflicting suffix), or nothing when it already holds all of l's log; f
\* takes l's term and, if the term is new to it, stops leading; then l commits
\* what a majority now holds of its term.  The floor follows each commit
\* (Floor).  A broker's commit index moves only while it leads: followers do
\* not track it, since nothing reads from a follower or deletes on one here,
\* and a new leader starts from the index it had (Raft's commit index is
\* volatile).  A follower whose next record l has deleted cannot catch up here
\* (no TrimmedTo jump in this model).
Replicate(l, f) ==
    LET m == MatchLen(l, f)
        sent == m < Len(log[l])
        newLog == IF sent THEN [log EXCEPT ![f] = Append(SubSeq(log[f], 1, m), log[l][m + 1])]
                          ELSE log
    IN
    /\ leader[l]
    /\ f /= l
    /\ term[f] <= term[l]
    /\ sent => m + 1 >= start[l]
    /\ log' = newLog
    /\ commit' = [commit EXCEPT ![l] = CommitIn(newLog, l)]
    /\ term' = [term EXCEPT ![f] = term[l]]
    /\ leader' = [leader EXCEPT ![f] = IF term[f] < term[l] THEN FALSE ELSE leader[f]]
    /\ UNCHANGED <<start, lease, expected, retired, writes, trims, promotions, crashes>>

\* A leader learns from broker f's answer that a newer term exists: it takes
\* the term and stops leading.  Until then a deposed leader keeps appending.
StepDown(l, f) ==
    /\ leader[l]
    /\ term[f] > term[l]
    /\ term' = [term EXCEPT ![l] = term[f]]
    /\ leader' = [leader EXCEPT ![l] = FALSE]
    /\ UNCHANGED <<log, commit, start, lease, expected, retired,
                   writes, trims, promotions, crashes>>

\* Leader b deletes its oldest segment (the serving leader's storage is the one
\* readers and followers depend on; followers keep their logs whole here).
\* The rule: only a whole segment entirely below the floor (so never the
\* active one, nor the one holding the floor-setting trim, which sits at or
\* above the floor).  CompactActive: any committed segment that starts below
\* the floor.
Compact(b) ==
    /\ leader[b]
    /\ IF CompactActive
          THEN /\ SegFirst(b) < Floor(b)
               /\ SegLast(b) <= commit[b]
          ELSE SegLast(b) < Floor(b)
    /\ start' = [start EXCEPT ![b] = SegLast(b) + 1]
    /\ UNCHANGED <<term, leader, log, commit, lease, expected, retired,
                   writes, trims, promotions, crashes>>

\* Retention only: leader b deletes its oldest committed segment, whatever the
\* floor and the trims say.
Retain(b) ==
    /\ Retention
    /\ leader[b]
    /\ SegLast(b) <= commit[b]
    /\ start' = [start EXCEPT ![b] = SegLast(b) + 1]
    /\ UNCHANGED <<term, leader, log, commit, lease, expected, retired,
                   writes, trims, promotions, crashes>>

\* Leader b crashes and restarts at once as a follower of the same term.  Its
\* log, term, commit index and floor are durable; its leadership is not.
Crash(b) ==
    /\ crashes < MaxCrashes
    /\ leader[b]
    /\ leader' = [leader EXCEPT ![b] = FALSE]
    /\ crashes' = crashes + 1
    /\ UNCHANGED <<term, log, commit, start, lease, expected, retired,
                   writes, trims, promotions>>

-----------------------------------------------------------------------------

Next ==
    \/ MoveLease
    \/ \E b \in Brokers, Q \in SUBSET Brokers : Promote(b, Q)
    \/ \E h \in Holders, s \in Brokers : Write(h, s)
    \/ \E h \in Holders, s \in Brokers, fl \in 1..(MaxLen + 1) : TrimAppend(h, s, fl)
    \/ \E h \in Holders, s \in Brokers : TrimNoop(h, s)
    \/ \E h \in Holders, s \in Brokers : Refused(h, s)
    \/ \E h \in Holders, s \in Brokers : Read(h, s)
    \/ \E l \in Brokers, f \in Brokers : Replicate(l, f)
    \/ \E l \in Brokers, f \in Brokers : StepDown(l, f)
    \/ \E b \in Brokers : Compact(b)
    \/ \E b \in Brokers : Retain(b)
    \/ \E b \in Brokers : Crash(b)

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Invariants.  Same names in Stateright, the audits and the docs. *)

TypeOK ==
    /\ term \in [Brokers -> 1..MaxTerm]
    /\ leader \in [Brokers -> BOOLEAN]
    /\ \A b \in Brokers : /\ Len(log[b]) <= MaxLen
                          /\ \A i \in 1..Len(log[b]) : log[b][i] \in Records
    /\ commit \in [Brokers -> 0..MaxLen]
    /\ \A b \in Brokers : commit[b] <= Len(log[b])
    /\ start \in [Brokers -> 1..(MaxLen + 1)]
    /\ \A b \in Brokers : start[b] <= commit[b] + 1
    /\ lease \in Holders
    /\ expected \in [Holders -> 0..MaxLen]
    /\ retired \in [Holders -> BOOLEAN]
    /\ writes \in 0..MaxWrites
    /\ trims \in 0..MaxTrims
    /\ promotions \in 0..MaxPromotions
    /\ crashes \in 0..MaxCrashes

\* No committed write or trim of one holder follows a committed write of a
\* newer holder (deleted records included).
StaleTrimRefused ==
    \A b \in Brokers :
        \A i \in 1..commit[b] : \A j \in 1..commit[b] :
            (/\ i < j
             /\ log[b][i].k = "w"
             /\ log[b][j].k \in {"w", "t"})
            => log[b][j].h >= log[b][i].h

\* The serving leader's floor is always the one its trim records set, deleted
\* ones included (Floor), and it still holds the record that set it.
FloorRecordKept ==
    \A b \in Brokers :
        (leader[b] /\ FloorSetter(b) /= 0) => FloorSetter(b) >= start[b]

=============================================================================
