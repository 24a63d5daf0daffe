//! A promoting quorum `Q` of `Promote(b, Q)`, as both specs take it: a set of voters numbered
//! from 1, held as a bit set (bit `m - 1` for voter `m`) so that an action stays a small `Copy`
//! value.

/// The members of `q` among voters `1..=voters`.
#[inline]
pub fn members(q: u8, voters: u8) -> impl Iterator<Item = u8> {
    (1..=voters).filter(move |m| q & (1 << (m - 1)) != 0)
}

/// Whether `q` can elect `b` among `voters` voters: `b` is a member and `q` a majority (the rest
/// of `Promote`'s guard, what each member needs of `b`, is the spec's).
#[inline]
pub fn elects(q: u8, b: u8, voters: u8) -> bool {
    q & (1 << (b - 1)) != 0 && 2 * (q.count_ones() as usize) > usize::from(voters)
}

/// The term a promotion by `q` starts: one above the highest of its members' `terms` (indexed
/// from voter 1).
#[inline]
pub fn next_term(q: u8, voters: u8, terms: &[u8]) -> u8 {
    members(q, voters)
        .map(|member| terms[usize::from(member) - 1])
        .max()
        .unwrap_or_else(|| unreachable!("a promoting majority is not empty"))
        + 1
}

/// `q` as TLA+ prints a set: `{1, 2}`.
pub fn set(q: u8) -> String {
    let members: Vec<String> = members(q, 8).map(|m| m.to_string()).collect();
    format!("{{{}}}", members.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A quorum's members, whether it elects, the term it starts and how it prints.
    #[test]
    fn quorum_members_terms_and_words() {
        assert_eq!(members(0b101, 3).collect::<Vec<_>>(), vec![1, 3]);
        assert!(elects(0b011, 2, 3));
        assert!(!elects(0b011, 3, 3), "3 is not a member");
        assert!(!elects(0b001, 1, 3), "one of three is no majority");
        assert_eq!(next_term(0b110, 3, &[7, 2, 4]), 5);
        assert_eq!(set(0b1011), "{1, 2, 4}");
    }
}
