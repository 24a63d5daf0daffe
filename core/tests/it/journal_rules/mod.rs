//! One test per journal rule (`journal/mod.rs` lists them), each named for what it proves and each
//! failing if its rule is removed; where the rule has a switch, the twin's behaviour is asserted
//! too, so the switch is shown to matter.

use felix_core::api::{InvalidRequest, ReadFrom, ReadRecord, Reply, Request};
use felix_core::journal::{Journal, JournalConfig, Jump, Sequenced, TrimIndex, WalkEvent};
use felix_core::record::{Command, Entry, Headers, Offset, Term, Token};
use felix_core::rules::{Rules, TwinName};

use super::journal_support::{config, fill, journal, land, trim, write};
use felix_core::storage::{SealedState, StorageOp};

mod compaction;
mod floor;
mod jump;
mod reads;
mod replication;
mod sequencing;

fn answer(journal: &mut Journal, request: Request) -> Reply {
    match journal.sequence(1, request) {
        Sequenced::Answered(reply) => reply,
        Sequenced::Appended { offset, .. } => panic!("expected an answer, appended at {offset}"),
    }
}

fn commit_all(journal: &mut Journal) -> Vec<WalkEvent> {
    let mut events = Vec::new();
    let last = journal.last_offset();
    journal.commit_to(last, &mut events);
    events
}

fn read(journal: &Journal, from: Offset) -> Reply {
    journal.read(ReadFrom::Offset(from), 100)
}

/// 10 records, a trim at 11 asking for floor 10, all committed (segments of 4: 1-4, 5-8, 9-12).
fn trimmed_journal(rules: Rules) -> Journal {
    let mut journal = Journal::new(config(rules));
    land(
        &mut journal,
        Request::Fence {
            new: Token(5),
            old: Token(0),
        },
    );
    fill(&mut journal, 9);
    land(&mut journal, trim(None, None, 10, 3));
    commit_all(&mut journal);
    journal
}

fn jump_state(point: Offset, floor: Offset) -> SealedState {
    SealedState {
        writer: Token(4),
        floor,
        floor_tag: Some(Headers::with_epoch(2)),
        floor_trim: Some(floor + 1),
        base_offset: point - 1,
        base_term: 3,
    }
}
