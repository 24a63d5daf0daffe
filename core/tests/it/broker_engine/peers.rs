//! The leader's view of its peers.

use super::*;

#[test]
fn stale_and_reordered_append_replies_never_send_a_peer_below_what_it_matched() {
    // Proves the leader's progress bookkeeping (one record per AppendEntries here): a reply of an
    // older term is ignored; a stale Rejected sends the peer back only to just past what it
    // matched; an Accepted moves `next` past what it matched, sending the next record at once to
    // a peer still behind and nothing to one caught up; an Accepted beyond the leader's log
    // counts only to the log's end.
    let mut net = Net::new(Rules::default());
    let mut one_per_message = config(0, Rules::default());
    one_per_message.append_entries_max = 1;
    net.nodes.insert(0, Broker::new(one_per_message));
    net.elect_zero();
    let leader = net.node(0);
    assert_eq!(leader.progress()[&1].matched, 1);
    // A reply of an older term (to a leader of that term) is not about this term's log.
    let stale = Input::Message {
        from: 1,
        message: Message::AppendReply {
            term: 0,
            result: AppendResult::Rejected { next: 1 },
        },
    };
    assert_eq!(leader.step_collect(stale), vec![]);
    // Three writes, each sent at once to the caught-up peers (nothing is delivered from here).
    for body in ["a", "b", "c"] {
        leader.step_collect(Input::Client {
            client: 7,
            request_id: 1,
            request: write(body),
        });
    }
    assert_eq!(leader.tail(), 5);
    assert_eq!(leader.progress()[&1].next, 5);
    let entry = |offset: Offset, body: &str| Entry {
        offset,
        term: 1,
        command: Command::Write {
            body: body.as_bytes().to_vec(),
            headers: Headers::default(),
        },
    };
    let reply = |from, result| Input::Message {
        from,
        message: Message::AppendReply { term: 1, result },
    };
    let send = |prev: (Offset, Term), entries| Output::Send {
        to: 1,
        message: append_entries(1, prev, entries, 1),
    };
    // A stale Rejected asking for 1: peer 1 matched 1, so it is sent record 2.
    assert_eq!(
        leader.step_collect(reply(1, AppendResult::Rejected { next: 1 })),
        vec![send((1, 1), vec![entry(2, "a")])]
    );
    // Peer 1 holds 2 now and is still behind: record 3 goes at once.
    assert_eq!(
        leader.step_collect(reply(1, AppendResult::Accepted { matched: 2 })),
        vec![send((2, 1), vec![entry(3, "b")])]
    );
    // A late Accepted for all three records (sent before the Rejected): next is past 4, the
    // tail; nothing more to send.
    assert_eq!(
        leader.step_collect(reply(1, AppendResult::Accepted { matched: 4 })),
        vec![]
    );
    assert_eq!(leader.progress()[&1].matched, 4);
    assert_eq!(leader.progress()[&1].next, 5);
    // A claim beyond the log (offset 9) counts as the leader's last offset, 4.
    leader.step_collect(reply(2, AppendResult::Accepted { matched: 9 }));
    assert_eq!(leader.progress()[&2].matched, 4);
    assert_eq!(leader.progress()[&2].next, 5);
}
