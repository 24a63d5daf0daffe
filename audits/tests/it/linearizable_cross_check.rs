//! The history checker against a peer nobody here wrote: Stateright's `LinearizabilityTester`
//! over the same sequential specification (`felix_audits::linearizable::Spec`). Thousands of
//! small concurrent histories (a few clients, a few operations each, unknown outcomes included),
//! some valid by construction, some mutated: both must give the same verdict on every one.

use felix_audits::linearizable::{check_history, Budget, Op, Spec, Verdict};
use felix_core::api::{ReadFrom, Reply, Request};
use felix_core::history::Event;
use felix_core::record::{Headers, Token};
use proptest::prelude::*;
use stateright::semantics::{ConsistencyTester, LinearizabilityTester, SequentialSpec};

/// The specification as Stateright's reference object.
#[derive(Clone, Debug)]
struct Reference(Spec);

impl SequentialSpec for Reference {
    type Op = Op;
    type Ret = Reply;

    fn invoke(&mut self, op: &Op) -> Reply {
        let (reply, next) = self.0.invoke(op);
        if let Some(next) = next {
            self.0 = next;
        }
        reply
    }

    fn is_valid_step(&mut self, op: &Op, reply: &Reply) -> bool {
        match self.0.step(op, reply) {
            Ok(Some(next)) => {
                self.0 = next;
                true
            }
            Ok(None) => true,
            Err(_) => false,
        }
    }
}

/// Draws from a list of choices (shrinkable by proptest), zero when it runs out.
struct Choices<'a> {
    values: &'a [u32],
    at: usize,
}

impl Choices<'_> {
    fn below(&mut self, bound: u32) -> u32 {
        let value = self.values.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        value % bound.max(1)
    }
}

fn request(choices: &mut Choices, client: u32, index: u32) -> Request {
    let small = |choices: &mut Choices| choices.below(4) as u64 + 1;
    match choices.below(9) {
        0..=3 => Request::Append {
            expected_tail: (choices.below(2) == 0).then(|| small(choices)),
            fence: (choices.below(4) == 0).then(|| Token(choices.below(2) as u64)),
            body: format!("{client}.{index}").into_bytes(),
            headers: Headers::with_epoch(client as u64),
        },
        4 => Request::Trim {
            expected_tail: (choices.below(2) == 0).then(|| small(choices)),
            fence: (choices.below(4) == 0).then(|| Token(choices.below(2) as u64)),
            floor: small(choices),
            headers: Headers::with_epoch(client as u64),
        },
        5 => Request::Fence {
            new: Token(choices.below(3) as u64 + 1),
            old: Token(choices.below(2) as u64),
        },
        _ => Request::Read {
            from: if choices.below(5) == 0 {
                ReadFrom::Earliest
            } else {
                ReadFrom::Offset(choices.below(5) as u64)
            },
            max_records: choices.below(3) + 1,
        },
    }
}

/// A reply changed a little: another offset, tail, floor, tag, record or refusal.
fn mutate(choices: &mut Choices, reply: &Reply) -> Reply {
    let shift = |value: u64, choices: &mut Choices| match choices.below(2) {
        0 => value + 1,
        _ => value.saturating_sub(1),
    };
    match reply {
        Reply::Appended { offset, tail } => Reply::Appended {
            offset: shift(*offset, choices),
            tail: *tail,
        },
        Reply::TrimNoop { tail } => Reply::TrimNoop {
            tail: shift(*tail, choices),
        },
        Reply::OffsetMismatch { tail } => match choices.below(2) {
            0 => Reply::OffsetMismatch {
                tail: shift(*tail, choices),
            },
            _ => Reply::Appended {
                offset: *tail,
                tail: *tail + 1,
            },
        },
        Reply::Records { records, next } => {
            let mut records = records.clone();
            match choices.below(3) {
                0 if !records.is_empty() => {
                    records.remove(choices.below(records.len() as u32) as usize);
                }
                1 => {
                    return Reply::Records {
                        records,
                        next: shift(*next, choices),
                    }
                }
                _ => {
                    if let Some(record) = records.first_mut() {
                        record.offset = shift(record.offset, choices);
                    }
                }
            }
            Reply::Records {
                records,
                next: *next,
            }
        }
        Reply::CursorTooOld { floor, tag } => match choices.below(2) {
            0 => Reply::CursorTooOld {
                floor: shift(*floor, choices),
                tag: tag.clone(),
            },
            _ => Reply::CursorTooOld {
                floor: *floor,
                tag: Some(Headers::with_epoch(9)),
            },
        },
        Reply::FenceMismatch { current } => Reply::FenceMismatch {
            current: Token(shift(current.0, choices)),
        },
        other => other.clone(),
    }
}

enum Step {
    Invoke(u32, Op),
    Return(u32, Reply),
}

/// A concurrent history from a true run of the specification: clients call, their operations
/// take effect in some interleaving, most return (a client's last may never), and with
/// `mutations` some replies are then changed.
fn draw(choices: &mut Choices, mutations: bool) -> Vec<Step> {
    let clients = choices.below(2) + 2;
    let per_client = choices.below(3) + 1;
    let mut spec = Spec::new();
    let mut issued = vec![0u32; clients as usize];
    // Per client: the operation in flight and, once it took effect, its reply.
    let mut pending: Vec<Option<(Op, Option<Reply>)>> = vec![None; clients as usize];
    let mut abandoned = vec![false; clients as usize];
    let mut steps = Vec::new();
    for _ in 0..64 {
        let client = choices.below(clients) as usize;
        if abandoned[client] {
            continue;
        }
        match pending[client].take() {
            None if issued[client] < per_client => {
                let op = Op::Client(request(choices, client as u32, issued[client]));
                issued[client] += 1;
                steps.push(Step::Invoke(client as u32, op.clone()));
                pending[client] = Some((op, None));
            }
            None => {}
            Some((op, None)) => {
                let (reply, next) = spec.invoke(&op);
                if let Some(next) = next {
                    spec = next;
                }
                pending[client] = Some((op, Some(reply)));
            }
            Some((op, Some(reply))) => {
                // The last operation of a client may never return (its outcome unknown).
                if issued[client] == per_client && choices.below(4) == 0 {
                    abandoned[client] = true;
                    continue;
                }
                let reply = if mutations && choices.below(3) == 0 {
                    mutate(choices, &reply)
                } else {
                    reply
                };
                steps.push(Step::Return(client as u32, reply));
                let _ = op;
            }
        }
    }
    steps
}

/// The verdicts of both checkers on one history.
fn verdicts(steps: &[Step]) -> (bool, Verdict) {
    let mut tester = LinearizabilityTester::new(Reference(Spec::new()));
    let mut history = Vec::new();
    let mut in_flight: Vec<Option<Request>> = vec![None; 4];
    for step in steps {
        match step {
            Step::Invoke(client, op) => {
                tester
                    .on_invoke(*client, op.clone())
                    .expect("one operation in flight per client");
                let Op::Client(request) = op else {
                    unreachable!("clients request")
                };
                in_flight[*client as usize] = Some(request.clone());
                history.push(Event::Requested {
                    client: *client,
                    node: 0,
                    request: request.clone(),
                });
            }
            Step::Return(client, reply) => {
                tester
                    .on_return(*client, reply.clone())
                    .expect("a return follows its invocation");
                let request = in_flight[*client as usize]
                    .take()
                    .expect("a return follows its invocation");
                history.push(Event::Replied {
                    client: *client,
                    node: 0,
                    request,
                    reply: reply.clone(),
                });
            }
        }
    }
    (
        tester.is_consistent(),
        check_history(&history, Budget::DEFAULT),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10_000, failure_persistence: None, ..ProptestConfig::default() })]

    /// Both checkers agree on every history; a history valid by construction is linearizable.
    #[test]
    fn agrees_with_stateright(values in proptest::collection::vec(any::<u32>(), 200), mutations in any::<bool>()) {
        let mut choices = Choices { values: &values, at: 0 };
        let steps = draw(&mut choices, mutations);
        let (reference, verdict) = verdicts(&steps);
        let ours = match &verdict {
            Verdict::Linearizable { .. } => true,
            Verdict::NotLinearizable(_) => false,
            Verdict::Unchecked { reason } => panic!("a small history is never over budget: {reason}"),
        };
        prop_assert_eq!(ours, reference, "{:?}", verdict);
        if !mutations {
            prop_assert!(ours, "a history drawn from the specification is linearizable: {:?}", verdict);
        }
    }
}

/// The mutated histories are not all linearizable (the cross-check compares both verdicts, not
/// one): over a fixed sample, both checkers find some of each.
#[test]
fn the_sample_has_both_verdicts() {
    let mut linearizable = 0;
    let mut not = 0;
    for seed in 0..400u32 {
        let values: Vec<u32> = (0..200u32)
            .map(|index| {
                (seed.wrapping_mul(2_654_435_761) ^ index.wrapping_mul(40_503))
                    .wrapping_mul(2_246_822_519)
                    .rotate_left(index % 31)
            })
            .collect();
        let mut choices = Choices {
            values: &values,
            at: 0,
        };
        let steps = draw(&mut choices, true);
        let (reference, verdict) = verdicts(&steps);
        assert_eq!(
            reference,
            matches!(verdict, Verdict::Linearizable { .. }),
            "{verdict:?}"
        );
        if reference {
            linearizable += 1;
        } else {
            not += 1;
        }
    }
    assert!(linearizable > 40, "{linearizable} linearizable");
    assert!(not > 40, "{not} not linearizable");
}
