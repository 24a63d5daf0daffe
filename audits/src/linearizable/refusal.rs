//! Refusals in words: the specification's reasons for refusing a reply, worded only when a caller
//! reports them, and replies and records in words for findings.

use felix_core::api::{ReadRecord, Reply};
use felix_core::record::Headers;
use felix_core::words;

/// Whether a refusal is worded. The search (`search.rs`) tries many instants for each operation
/// and keeps only whether one of them allows it: it asks for no words, so that its hot path
/// formats nothing (formatting the refusals it threw away took about a quarter of the CPU of
/// `felix twins --sim --unbiased --search plain`). A refusal reported to a user is always worded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Words {
    Wanted,
    Skipped,
}

/// `Err(format!(...))` when `words` asks for the words, `Err` of an empty string (which
/// allocates nothing) when it does not.
macro_rules! refuse {
    ($words:expr, $($format:tt)*) => {
        Err(match $words {
            Words::Wanted => format!($($format)*),
            Words::Skipped => String::new(),
        })
    };
}

pub(crate) use refuse;

pub(super) fn tag_words(tag: Option<&Headers>) -> String {
    match tag {
        Some(headers) => format!("tag {}", words::headers(headers)),
        None => "no tag".to_string(),
    }
}

pub(super) fn records_words(records: &[ReadRecord]) -> String {
    if records.is_empty() {
        return "no write".to_string();
    }
    let offsets: Vec<String> = records
        .iter()
        .map(|record| format!("{}:{}", record.offset, words::body(&record.body)))
        .collect();
    format!("writes {}", offsets.join(", "))
}

/// A reply in words (findings; never `Debug`).
pub fn reply_words(reply: &Reply) -> String {
    match reply {
        Reply::Appended { offset, tail } => format!("Appended at {offset} (tail {tail})"),
        Reply::TrimNoop { tail } => format!("TrimNoop (tail {tail})"),
        Reply::OffsetMismatch { tail } => format!("OffsetMismatch (tail {tail})"),
        Reply::FenceMismatch { current } => format!("FenceMismatch (token {})", current.0),
        Reply::TruncateRefused { current } => format!("TruncateRefused (token {})", current.0),
        Reply::Records { records, next } => {
            format!("Records {} next {next}", records_words(records))
        }
        Reply::CursorTooOld { floor, tag } => {
            format!("CursorTooOld floor {floor} {}", tag_words(tag.as_ref()))
        }
        Reply::NotHeld { from } => format!("NotHeld from {from}"),
        Reply::NotLeader { .. } => "NotLeader".to_string(),
        Reply::NoReadIndex { .. } => "NoReadIndex".to_string(),
        Reply::Invalid(_) => "Invalid".to_string(),
    }
}
