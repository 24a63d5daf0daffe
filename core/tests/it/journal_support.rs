//! What the journal tests share: a journal of four-record segments, and requests that must land.

use felix_core::api::Request;
use felix_core::journal::{Journal, JournalConfig, Sequenced};
use felix_core::record::{Headers, Offset, Token};
use felix_core::rules::Rules;
use felix_core::storage::SegmentLayout;

pub fn config(rules: Rules) -> JournalConfig {
    JournalConfig {
        layout: SegmentLayout {
            records_per_segment: 4,
        },
        rules,
        ..JournalConfig::default()
    }
}

pub fn journal() -> Journal {
    Journal::new(config(Rules::default()))
}

pub fn trim(
    expected_tail: Option<Offset>,
    fence: Option<Token>,
    floor: Offset,
    epoch: u64,
) -> Request {
    Request::Trim {
        expected_tail,
        fence,
        floor,
        headers: Headers::with_epoch(epoch),
    }
}

/// Sequences `request` in term 1 and returns the offset it landed at (the test's setup must land).
pub fn land(journal: &mut Journal, request: Request) -> Offset {
    match journal.sequence(1, request) {
        Sequenced::Appended { offset, .. } => offset,
        Sequenced::Answered(reply) => panic!("setup request was answered instead: {reply:?}"),
    }
}

/// Writes `count` plain records.
pub fn fill(journal: &mut Journal, count: usize) {
    for index in 0..count {
        land(journal, write(None, None, &format!("w{index}")));
    }
}

pub fn write(expected_tail: Option<Offset>, fence: Option<Token>, body: &str) -> Request {
    Request::Append {
        expected_tail,
        fence,
        body: body.as_bytes().to_vec(),
        headers: Headers::default(),
    }
}
