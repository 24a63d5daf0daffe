//! The sequencing step: tails, fences, no-op trims, malformed and oversized requests.

use super::*;

#[test]
fn append_at_a_stale_expected_tail_is_refused_and_writes_nothing() {
    // Proves the tail check: a mismatch names the tail and appends nothing.
    let mut journal = journal();
    fill(&mut journal, 2);
    assert_eq!(
        answer(&mut journal, write(Some(2), None, "late")),
        Reply::OffsetMismatch { tail: 3 }
    );
    assert_eq!(journal.tail(), 3);
    assert_eq!(land(&mut journal, write(Some(3), None, "on time")), 3);
}

#[test]
fn tail_check_counts_uncommitted_records() {
    // Proves the check is against the node's own log including uncommitted records (not a
    // pre-check against the committed prefix): two writers expecting the same tail, one lands.
    let mut journal = journal();
    assert_eq!(land(&mut journal, write(Some(1), None, "first")), 1);
    assert_eq!(journal.committed(), 0);
    assert_eq!(
        answer(&mut journal, write(Some(1), None, "second")),
        Reply::OffsetMismatch { tail: 2 }
    );
}

#[test]
fn append_under_a_stale_fence_is_refused_with_the_token_in_force() {
    // Proves the fence check, against the token set by an (uncommitted) fence record.
    let mut journal = journal();
    land(
        &mut journal,
        Request::Fence {
            new: Token(7),
            old: Token(0),
        },
    );
    assert_eq!(
        answer(&mut journal, write(None, Some(Token(3)), "stale")),
        Reply::FenceMismatch { current: Token(7) }
    );
    assert_eq!(journal.tail(), 2);
    assert_eq!(
        land(&mut journal, write(None, Some(Token(7)), "current")),
        2
    );
    assert_eq!(
        answer(
            &mut journal,
            Request::Fence {
                new: Token(9),
                old: Token(3)
            }
        ),
        Reply::FenceMismatch { current: Token(7) }
    );
}

#[test]
fn trim_floor_above_its_own_offset_is_invalid() {
    // Proves a trim may ask for a floor at most its own offset.
    let mut journal = journal();
    fill(&mut journal, 2);
    assert_eq!(
        answer(&mut journal, trim(None, None, 4, 1)),
        Reply::Invalid(InvalidRequest::FloorAboveOffset {
            floor: 4,
            offset: 3
        })
    );
    assert_eq!(journal.tail(), 3);
    assert_eq!(land(&mut journal, trim(None, None, 3, 1)), 3);
}

#[test]
fn trim_at_or_below_the_floor_is_a_noop_that_answers_the_tail() {
    // Proves a no-op trim writes nothing and answers the tail.
    let mut journal = journal();
    fill(&mut journal, 2);
    land(&mut journal, trim(None, None, 2, 1));
    commit_all(&mut journal);
    assert_eq!(journal.floor(), 2);
    assert_eq!(
        answer(&mut journal, trim(Some(4), None, 2, 1)),
        Reply::TrimNoop { tail: 4 }
    );
    assert_eq!(
        answer(&mut journal, trim(Some(4), None, 1, 1)),
        Reply::TrimNoop { tail: 4 }
    );
    assert_eq!(journal.tail(), 4);
}

#[test]
fn noop_trim_still_checks_the_tail() {
    // Proves rule 4 (NoopSkip twin): a no-op trim at a stale tail is refused, so it cannot leak
    // the tail to a stale holder; with the rule off it answers the tail.
    for (rules, expected) in [
        (Rules::default(), Reply::OffsetMismatch { tail: 4 }),
        (Rules::twin(TwinName::NoopSkip), Reply::TrimNoop { tail: 4 }),
    ] {
        let mut journal = Journal::new(config(rules));
        fill(&mut journal, 2);
        land(&mut journal, trim(None, None, 2, 2));
        commit_all(&mut journal);
        assert_eq!(answer(&mut journal, trim(Some(2), None, 1, 1)), expected);
        assert_eq!(journal.tail(), 4);
    }
}

#[test]
fn noop_trim_still_checks_the_fence() {
    // Proves a no-op trim is refused under a stale fence.
    let mut journal = journal();
    land(
        &mut journal,
        Request::Fence {
            new: Token(2),
            old: Token(0),
        },
    );
    assert_eq!(
        answer(&mut journal, trim(None, Some(Token(1)), 1, 1)),
        Reply::FenceMismatch { current: Token(2) }
    );
}

#[test]
fn malformed_requests_are_invalid_never_written() {
    // Proves bad client input gets a typed answer: empty header key, oversized headers, body.
    let mut journal = journal();
    let mut headers = Headers::default();
    headers.0.insert(String::new(), "x".to_string());
    let empty_key = Request::Append {
        expected_tail: None,
        fence: None,
        body: vec![],
        headers: headers.clone(),
    };
    assert!(matches!(
        answer(&mut journal, empty_key),
        Reply::Invalid(InvalidRequest::MalformedHeaders { .. })
    ));
    let trim_empty_key = Request::Trim {
        expected_tail: None,
        fence: None,
        floor: 1,
        headers,
    };
    assert!(matches!(
        answer(&mut journal, trim_empty_key),
        Reply::Invalid(InvalidRequest::MalformedHeaders { .. })
    ));
    let mut big = Headers::default();
    big.0.insert("k".to_string(), "v".repeat(5000));
    let big_headers = Request::Append {
        expected_tail: None,
        fence: None,
        body: vec![],
        headers: big,
    };
    assert!(matches!(
        answer(&mut journal, big_headers),
        Reply::Invalid(InvalidRequest::MalformedHeaders { .. })
    ));
    let body = vec![0u8; (1 << 20) + 1];
    let big_body = Request::Append {
        expected_tail: None,
        fence: None,
        body,
        headers: Headers::default(),
    };
    assert_eq!(
        answer(&mut journal, big_body),
        Reply::Invalid(InvalidRequest::TooLarge {
            bytes: (1 << 20) + 1,
            limit: 1 << 20
        })
    );
    assert_eq!(journal.tail(), 1);
}

#[test]
fn size_limits_admit_exactly_the_limit() {
    // Proves the limits are inclusive and count what they say: a body of exactly
    // `body_bytes_max` bytes lands; headers are counted as keys plus values over every pair, and
    // exactly `headers_bytes_max` of them land while one byte more (in one pair or spread over
    // two) is malformed.
    let mut journal = journal();
    let append = |body: Vec<u8>, pairs: &[(&str, usize)]| {
        let mut headers = Headers::default();
        for (key, value_bytes) in pairs {
            headers.0.insert(key.to_string(), "v".repeat(*value_bytes));
        }
        Request::Append {
            expected_tail: None,
            fence: None,
            body,
            headers,
        }
    };
    assert_eq!(land(&mut journal, append(vec![0u8; 1 << 20], &[])), 1);
    assert_eq!(land(&mut journal, append(vec![], &[("k", 4095)])), 2);
    assert_eq!(
        land(&mut journal, append(vec![], &[("k", 2000), ("j", 2094)])),
        3
    );
    for too_big in [
        append(vec![], &[("k", 4096)]),
        append(vec![], &[("k", 2000), ("j", 2095)]),
    ] {
        assert_eq!(
            answer(&mut journal, too_big),
            Reply::Invalid(InvalidRequest::MalformedHeaders {
                reason: "headers take 4097 bytes, above the limit of 4096".to_string()
            })
        );
    }
    assert_eq!(journal.tail(), 4);
}
