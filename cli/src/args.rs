//! The parsers of argument values that several subcommands share: seed ranges and shards
//! (`Seeds`), twins, invariants, `--jobs`, durations. Each returns a message for the user on bad
//! input (the caller exits with the bad-input code), never panics.

use felix_core::rules::{Invariant, Layer, TwinName};
use std::ops::Range;

/// Parses `A..B` into a non-empty seed range.
pub fn parse_seed_range(text: &str) -> Result<Range<u64>, String> {
    let Some((low, high)) = text.split_once("..") else {
        return Err(format!("--seeds {text:?}: expected A..B, e.g. 0..1000"));
    };
    let low: u64 = low
        .trim()
        .parse()
        .map_err(|_| format!("--seeds {text:?}: {low:?} is not a seed (a whole number)"))?;
    let high: u64 = high
        .trim()
        .parse()
        .map_err(|_| format!("--seeds {text:?}: {high:?} is not a seed (a whole number)"))?;
    if low >= high {
        return Err(format!(
            "--seeds {text:?}: the range is empty (need A < B; B is excluded)"
        ));
    }
    Ok(low..high)
}

/// Parses `K/N` (1 <= K <= N).
pub fn parse_shard(text: &str) -> Result<(u64, u64), String> {
    let parsed = text
        .split_once('/')
        .and_then(|(k, n)| Some((k.trim().parse::<u64>().ok()?, n.trim().parse::<u64>().ok()?)));
    match parsed {
        Some((k, n)) if n >= 1 && (1..=n).contains(&k) => Ok((k, n)),
        _ => Err(format!(
            "--shard {text:?}: expected K/N with 1 <= K <= N, e.g. 1/4"
        )),
    }
}

/// The seeds of a sweep, computed on demand (a sweep of a hundred million seeds needs no list):
/// `count` seeds from `start`, `step` apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seeds {
    pub start: u64,
    pub step: u64,
    pub count: u64,
}

impl Seeds {
    /// Every seed of `range` at positions `shard - 1`, `shard - 1 + shards`, ... (1 <= shard <= shards).
    pub fn sharded(range: &Range<u64>, shard: u64, shards: u64) -> Seeds {
        assert!(shards >= 1 && (1..=shards).contains(&shard));
        let start = range.start.saturating_add(shard - 1);
        let count = if start >= range.end {
            0
        } else {
            (range.end - start).div_ceil(shards)
        };
        Seeds {
            start,
            step: shards,
            count,
        }
    }

    pub fn get(&self, index: u64) -> Option<u64> {
        (index < self.count).then(|| self.start + index * self.step)
    }
}

/// A simulator twin, or with `validate` a twin of the validation layer too (which only trace
/// validation sees: without `--validate` it would run unjudged).
pub fn parse_twin_validated(text: &str, validate: bool) -> Result<TwinName, String> {
    match TwinName::parse_in(Layer::Validation, text) {
        Some(twin) if validate => Ok(twin),
        Some(twin) => Err(format!(
            "{twin} is a twin of the validation layer: no audit sees it, only trace validation \
             does; add --validate"
        )),
        None => parse_twin(text),
    }
}

/// `--twin`, when given: `parse_twin_validated`.
pub fn parse_twin_option(text: Option<&str>, validate: bool) -> Result<Option<TwinName>, String> {
    text.map(|text| parse_twin_validated(text, validate))
        .transpose()
}

/// Parses a simulator twin's name, with or without the FelixHeadTrim prefix.
pub fn parse_twin(text: &str) -> Result<TwinName, String> {
    TwinName::parse_in(Layer::Sim, text).ok_or_else(|| {
        let names: Vec<&str> = TwinName::in_layer(Layer::Sim)
            .map(|twin| twin.name())
            .collect();
        format!("unknown twin {text:?}; known twins: {}", names.join(", "))
    })
}

/// The `--jobs` value, or one job per core.
pub fn parse_jobs(jobs: Option<usize>) -> Result<usize, String> {
    match jobs {
        Some(0) => Err("--jobs 0: need at least one job".to_string()),
        Some(jobs) if jobs > 1024 => Err(format!("--jobs {jobs}: at most 1024")),
        Some(jobs) => Ok(jobs),
        None => Ok(std::thread::available_parallelism().map_or(1, |cores| cores.get())),
    }
}

/// Parses an invariant's name (`--invariant`).
pub fn parse_invariant(name: &str) -> Result<Invariant, String> {
    Invariant::parse(name).ok_or_else(|| {
        let names: Vec<&str> = Invariant::ALL.iter().map(|i| i.name()).collect();
        format!(
            "--invariant {name:?}: no such invariant; known: {}",
            names.join(", ")
        )
    })
}

/// Parses a duration such as `90s`, `10m` or `2h` (a whole number and a unit), at most a week.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let problem = || format!("{text:?}: expected a whole number and a unit (s, m or h), e.g. 90s");
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(problem)?;
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().map_err(|_| problem())?;
    let seconds = match unit {
        "s" => Some(number),
        "m" => number.checked_mul(60),
        "h" => number.checked_mul(3_600),
        _ => return Err(problem()),
    };
    match seconds {
        Some(seconds @ 1..=604_800) => Ok(std::time::Duration::from_secs(seconds)),
        _ => Err(format!("{text:?}: from 1s to a week (168h)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed ranges, shards, twins and jobs parse, and every malformed value is a message.
    #[test]
    fn arguments_parse_or_explain() {
        assert_eq!(parse_seed_range("0..1000"), Ok(0..1000));
        assert_eq!(parse_seed_range(" 5 .. 9"), Ok(5..9));
        assert!(parse_seed_range("9..5").is_err());
        assert!(parse_seed_range("5..5").is_err());
        assert!(parse_seed_range("a..5").is_err());
        assert!(parse_seed_range("5").is_err());
        assert!(parse_seed_range("-1..5").is_err());
        assert_eq!(parse_shard("1/4"), Ok((1, 4)));
        assert!(parse_shard("0/4").is_err());
        assert!(parse_shard("5/4").is_err());
        assert!(parse_shard("1/0").is_err());
        assert!(parse_shard("x").is_err());
        assert_eq!(parse_twin("FelixHeadTrimUntagged"), Ok(TwinName::Untagged));
        assert!(parse_twin("Nope").is_err());
        assert!(parse_jobs(Some(0)).is_err());
        assert_eq!(parse_jobs(Some(3)), Ok(3));
        let seeds = Seeds::sharded(&(10..20), 2, 3);
        let listed: Vec<u64> = (0..5).filter_map(|index| seeds.get(index)).collect();
        assert_eq!(listed, vec![11, 14, 17]);
        assert_eq!(Seeds::sharded(&(10..11), 2, 3).count, 0);
        assert_eq!(Seeds::sharded(&(0..1000), 1, 1).count, 1000);
    }
}
