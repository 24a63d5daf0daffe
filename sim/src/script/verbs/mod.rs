//! The verbs of a scenario: one handler per verb, each documenting its syntax.
//!
//! A handler takes the environment and the command's arguments and returns the lines it prints.
//! `Err` is a bad argument (an unknown node or client, a malformed number, an argument the verb
//! does not take): the runner reports it with the file and line and exits 2. Conditions of the
//! run itself (a retired holder asked to write, a crashed node asked to tick) are printed as
//! output, since a scenario may want to show them.
//!
//! Names: nodes are `n0`, `n1`, ... (voters first, then replicas); clients are named by the verb
//! that creates them (`lease`, `owner`, `reader`, `folder`).

mod clients;
mod faults;
mod inspect;
mod setup;

use super::env::{
    Address, ClientKind, Env, Packet, Payload, Shape, Syncs, Trace, ELECTION_TIMEOUT_TICKS,
    HEARTBEAT_TICKS, READS_MAX,
};
use super::parse::Arg;
use crate::render::describe;
use clients::*;
use faults::*;
use felix_core::broker::Role;
use felix_core::client::checkpoint::OwnerOp;
use felix_core::client::{Folder, HolderOp, HolderStatus, Owner, OwnerStatus, Reader};
use felix_core::rules::Layer;
use felix_core::storage::SegmentLayout;
use felix_core::{NodeId, Offset, Rules, Token, TwinName};
use inspect::*;
use setup::*;
use std::collections::{BTreeMap, BTreeSet};

/// The most voters and replicas a scenario may set up.
const BROKERS_MAX: u32 = 7;
const REPLICAS_MAX: u32 = 4;
/// The most ticks one `tick` may give.
const TICKS_MAX: u64 = 1_000;

/// A verb handler.
pub type Handler = fn(&mut Env, &Args) -> Result<Vec<String>, String>;

/// Every verb, in the order `describe`-like help lists them.
pub const VERBS: [(&str, Handler); 28] = [
    ("cluster", cluster),
    ("twin", twin),
    ("campaign", campaign),
    ("tick", tick),
    ("lease", lease),
    ("owner", owner),
    ("reader", reader),
    ("folder", folder),
    ("write", write),
    ("trim", trim),
    ("read", read),
    ("fold", fold),
    ("checkpoint", checkpoint),
    ("target", target),
    ("truncate", truncate),
    ("deliver", deliver),
    ("drop", drop_verb),
    ("partition", partition),
    ("heal", heal),
    ("crash", crash),
    ("restart", restart),
    ("pause", pause),
    ("resume", resume),
    ("sync", sync),
    ("timeout", timeout),
    ("stabilize", stabilize),
    ("audit", audit),
    ("describe", describe_verb),
];

/// The names of every verb.
pub fn verb_names() -> Vec<&'static str> {
    VERBS.iter().map(|(name, _)| *name).collect()
}

/// A command's arguments, with typed accessors that produce clear messages.
pub struct Args {
    verb: String,
    positional: Vec<String>,
    keyed: BTreeMap<String, String>,
}

impl Args {
    pub fn new(verb: &str, args: &[Arg]) -> Result<Args, String> {
        let mut positional = Vec::new();
        let mut keyed = BTreeMap::new();
        for arg in args {
            match &arg.key {
                None => positional.push(arg.value.clone()),
                Some(key) => {
                    if keyed.insert(key.clone(), arg.value.clone()).is_some() {
                        return Err(format!("bad argument: `{key}` given twice"));
                    }
                }
            }
        }
        Ok(Args {
            verb: verb.to_string(),
            positional,
            keyed,
        })
    }

    /// Refuses keys outside `keys` and more than `positional_max` bare values.
    fn only(&self, keys: &[&str], positional_max: usize) -> Result<(), String> {
        if let Some(key) = self.keyed.keys().find(|key| !keys.contains(&key.as_str())) {
            let takes = if keys.is_empty() {
                "none".to_string()
            } else {
                keys.join(", ")
            };
            return Err(format!(
                "bad argument: `{}` takes no `{key}=` (keys it takes: {takes})",
                self.verb
            ));
        }
        if self.positional.len() > positional_max {
            return Err(format!(
                "bad argument: `{}` takes at most {positional_max} bare values, got `{}`",
                self.verb,
                self.positional.join(" ")
            ));
        }
        Ok(())
    }

    fn positional(&self, index: usize, what: &str) -> Result<&str, String> {
        self.positional
            .get(index)
            .map(String::as_str)
            .ok_or_else(|| format!("bad argument: `{}` needs {what}", self.verb))
    }

    fn number(&self, key: &str) -> Result<Option<u64>, String> {
        match self.keyed.get(key) {
            None => Ok(None),
            Some(value) => parse_number(key, value).map(Some),
        }
    }

    fn text(&self, key: &str) -> Option<&str> {
        self.keyed.get(key).map(String::as_str)
    }
}

fn parse_number(what: &str, value: &str) -> Result<u64, String> {
    value
        .parse()
        .map_err(|_| format!("bad argument: `{what}` must be a number, got `{value}`"))
}

fn need_cluster(env: &Env) -> Result<(), String> {
    if env.has_cluster() {
        Ok(())
    } else {
        Err("bad argument: no cluster yet (start with `cluster`)".to_string())
    }
}

/// Parses `nK` naming an existing node.
fn node_arg(env: &Env, name: &str) -> Result<NodeId, String> {
    need_cluster(env)?;
    let id = name
        .strip_prefix('n')
        .and_then(|digits| digits.parse::<NodeId>().ok())
        .ok_or_else(|| format!("bad argument: `{name}` is not a node (nodes are n0, n1, ...)"))?;
    if id as usize >= env.nodes.len() {
        return Err(format!(
            "bad argument: no node `{name}` (this cluster has n0..n{})",
            env.nodes.len() - 1
        ));
    }
    Ok(id)
}

fn client_arg(env: &Env, name: &str) -> Result<u32, String> {
    env.names
        .get(name)
        .copied()
        .ok_or_else(|| format!("bad argument: no client `{name}`"))
}

/// A node or a client.
fn addr_arg(env: &Env, name: &str) -> Result<Address, String> {
    if let Ok(id) = node_arg(env, name) {
        return Ok(Address::Node(id));
    }
    client_arg(env, name)
        .map(Address::Client)
        .map_err(|_| format!("bad argument: `{name}` is neither a node nor a client"))
}

fn via_arg(env: &Env, args: &Args) -> Result<Option<NodeId>, String> {
    args.text("via").map(|name| node_arg(env, name)).transpose()
}

fn new_client_name(env: &Env, args: &Args) -> Result<String, String> {
    need_cluster(env)?;
    let name = args.positional(0, "a client name")?;
    let valid = name
        .chars()
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    let node_like = name
        .strip_prefix('n')
        .is_some_and(|digits| digits.parse::<u32>().is_ok());
    if !valid || node_like {
        return Err(format!(
            "bad argument: `{name}` is not a client name (letters, digits, '-'; not a node name)"
        ));
    }
    if env.names.contains_key(name) {
        return Err(format!("bad argument: client `{name}` already exists"));
    }
    Ok(name.to_string())
}

fn twin_arg(name: &str) -> Result<Option<TwinName>, String> {
    if name == "none" {
        return Ok(None);
    }
    TwinName::parse_in(Layer::Sim, name)
        .map(Some)
        .ok_or_else(|| {
            let names: Vec<&str> = TwinName::in_layer(Layer::Sim)
                .map(|twin| twin.name())
                .collect();
            format!(
                "bad argument: unknown twin `{name}` (twins: {}, or none)",
                names.join(", ")
            )
        })
}

fn rules_line(rules: Rules) -> String {
    match TwinName::in_layer(Layer::Sim).find(|twin| Rules::twin(*twin) == rules) {
        Some(twin) => format!(
            "twin {twin}: one rule off, must break {}",
            twin.must_break(Layer::Sim)
        ),
        None => "every rule on".to_string(),
    }
}

/// The trace's lines, then the environment's error if any (printed, never a panic).
fn finish(trace: Trace, result: Result<(), String>) -> Vec<String> {
    let mut lines = trace.render();
    if let Err(error) = result {
        lines.push(format!("error: {error}"));
    }
    lines
}
