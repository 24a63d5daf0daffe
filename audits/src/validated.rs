//! Trace validation's counts (`felix-validate`) as data: a run's tally, or a sweep's sums field
//! by field. A run's report carries it beside the counters (`Counts::validated`); its names
//! (`validated_*`) are for the edges only: a summary's coverage line and JSON
//! (`Validated::entries`), and a shard's counts read back by `felix sweep merge`
//! (`Validated::set`).

use std::collections::BTreeMap;

/// The counts of the runs held to one model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelTally {
    pub steps: u64,
    pub stutters: u64,
    pub matched: u64,
    /// Model actions matched, by action name (`Write`, `Replicate`, ...).
    pub actions: BTreeMap<String, u64>,
    /// Broker steps not checked, and details hidden in checked steps, by rule.
    pub abstracted: BTreeMap<String, u64>,
}

/// Validated steps, stutters, matched steps and holder requests in all, and per model (by the
/// model's name, `FelixHeadTrim`, `ParosTrimJump`) what its runs counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Validated {
    pub steps: u64,
    pub stutters: u64,
    pub matched: u64,
    pub holder_requests: u64,
    pub models: BTreeMap<String, ModelTally>,
}

fn add_all(into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>) {
    for (name, count) in from {
        *into.entry(name.clone()).or_insert(0) += count;
    }
}

/// `<model>_<rest>`, both parts non-empty (a model's name has no underscore).
fn model_and(rest: &str) -> Option<(&str, &str)> {
    rest.split_once('_')
        .filter(|(model, name)| !model.is_empty() && !name.is_empty())
}

impl Validated {
    /// Adds every count of `other`, field by field.
    pub fn sum(&mut self, other: &Validated) {
        self.steps += other.steps;
        self.stutters += other.stutters;
        self.matched += other.matched;
        self.holder_requests += other.holder_requests;
        for (model, tally) in &other.models {
            let into = self.models.entry(model.clone()).or_default();
            into.steps += tally.steps;
            into.stutters += tally.stutters;
            into.matched += tally.matched;
            add_all(&mut into.actions, &tally.actions);
            add_all(&mut into.abstracted, &tally.abstracted);
        }
    }

    /// The counts by name: `validated_steps`, `validated_stutters`, `validated_matched`,
    /// `validated_holder_requests`, then per model `validated_model_<Model>_steps` (`_stutters`,
    /// `_matched`), `validated_abstracted_<Model>_<rule>` and `validated_action_<Model>_<Action>`.
    pub fn entries(&self) -> Vec<(String, u64)> {
        let mut entries = vec![
            ("validated_steps".to_string(), self.steps),
            ("validated_stutters".to_string(), self.stutters),
            ("validated_matched".to_string(), self.matched),
            (
                "validated_holder_requests".to_string(),
                self.holder_requests,
            ),
        ];
        for (model, tally) in &self.models {
            entries.push((format!("validated_model_{model}_steps"), tally.steps));
            entries.push((format!("validated_model_{model}_stutters"), tally.stutters));
            entries.push((format!("validated_model_{model}_matched"), tally.matched));
            for (name, count) in &tally.abstracted {
                entries.push((format!("validated_abstracted_{model}_{name}"), *count));
            }
            for (name, count) in &tally.actions {
                entries.push((format!("validated_action_{model}_{name}"), *count));
            }
        }
        entries
    }

    /// Sets the count `name` names (as `entries` names it); false, changing nothing, when no
    /// count has that name.
    pub fn set(&mut self, name: &str, count: u64) -> bool {
        let Some(rest) = name.strip_prefix("validated_") else {
            return false;
        };
        let total = match rest {
            "steps" => Some(&mut self.steps),
            "stutters" => Some(&mut self.stutters),
            "matched" => Some(&mut self.matched),
            "holder_requests" => Some(&mut self.holder_requests),
            _ => None,
        };
        if let Some(slot) = total {
            *slot = count;
            return true;
        }
        if let Some((model, field)) = rest.strip_prefix("model_").and_then(model_and) {
            if !["steps", "stutters", "matched"].contains(&field) {
                return false;
            }
            let tally = self.models.entry(model.to_string()).or_default();
            match field {
                "steps" => tally.steps = count,
                "stutters" => tally.stutters = count,
                _ => tally.matched = count,
            }
            return true;
        }
        let named = |prefix: &str| rest.strip_prefix(prefix).and_then(model_and);
        if let Some((model, action)) = named("action_") {
            let tally = self.models.entry(model.to_string()).or_default();
            tally.actions.insert(action.to_string(), count);
            return true;
        }
        if let Some((model, rule)) = named("abstracted_") {
            let tally = self.models.entry(model.to_string()).or_default();
            tally.abstracted.insert(rule.to_string(), count);
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(model: &str, steps: u64, action: &str, rule: &str) -> Validated {
        let tally = ModelTally {
            steps,
            stutters: 1,
            matched: steps - 1,
            actions: BTreeMap::from([(action.to_string(), 2)]),
            abstracted: BTreeMap::from([(rule.to_string(), 1)]),
        };
        Validated {
            steps,
            stutters: 1,
            matched: steps - 1,
            holder_requests: 3,
            models: BTreeMap::from([(model.to_string(), tally)]),
        }
    }

    /// Two runs of one model and one of another sum field by field and render to the names a
    /// summary prints; every name sets its count back, and names no count has are refused.
    #[test]
    fn a_tally_sums_renders_and_reads_back() {
        let mut total = Validated::default();
        total.sum(&run("FelixHeadTrim", 5, "Write", "client_ack"));
        total.sum(&run("FelixHeadTrim", 4, "Replicate", "client_ack"));
        total.sum(&run("ParosTrimJump", 2, "Jump", "fence"));
        let listed: Vec<String> = (total.entries().iter())
            .map(|(name, count)| format!("{name}={count}"))
            .collect();
        assert_eq!(
            listed,
            [
                "validated_steps=11",
                "validated_stutters=3",
                "validated_matched=8",
                "validated_holder_requests=9",
                "validated_model_FelixHeadTrim_steps=9",
                "validated_model_FelixHeadTrim_stutters=2",
                "validated_model_FelixHeadTrim_matched=7",
                "validated_abstracted_FelixHeadTrim_client_ack=2",
                "validated_action_FelixHeadTrim_Replicate=2",
                "validated_action_FelixHeadTrim_Write=2",
                "validated_model_ParosTrimJump_steps=2",
                "validated_model_ParosTrimJump_stutters=1",
                "validated_model_ParosTrimJump_matched=1",
                "validated_abstracted_ParosTrimJump_fence=1",
                "validated_action_ParosTrimJump_Jump=2",
            ]
        );
        let mut back = Validated::default();
        for (name, count) in total.entries() {
            assert!(back.set(&name, count), "{name}");
        }
        assert_eq!(back, total);
        for unknown in [
            "steps",
            "validated_",
            "validated_step",
            "validated_model_FelixHeadTrim_actions",
            "validated_model__steps",
            "validated_action_FelixHeadTrim",
            "validated_abstracted__rule",
            "validated_other_FelixHeadTrim_x",
        ] {
            assert!(!back.set(unknown, 1), "{unknown}");
        }
        assert_eq!(back, total);
    }
}
