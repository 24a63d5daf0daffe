//! Renamings: a step's values (offsets, terms, floors, epochs) mapped into a model's small
//! bounds for one window, order kept, and back. The terms and the trims' floors of a window's
//! records are renamed the same way for both specs (`terms`, `floors`); each spec's `window`
//! renames the rest (FelixHeadTrim's epochs, ParosTrimJump's tokens).

use crate::steps::{Failure, OUT};
use crate::voter::Projected;

/// An order-preserving renaming of a set of values into `first..=last` that keeps successors
/// adjacent: `a < b` iff `r(a) < r(b)`, and `b = a + 1` iff `r(b) = r(a) + 1`.
#[derive(Clone, Debug)]
pub struct Renaming {
    values: Vec<u64>,
    images: Vec<u8>,
}

impl Renaming {
    /// The renaming of `values`, or None when they do not fit below `last`.
    pub fn new(values: impl IntoIterator<Item = u64>, first: u8, last: u8) -> Option<Renaming> {
        let mut values: Vec<u64> = values.into_iter().collect();
        values.sort_unstable();
        values.dedup();
        let mut images = Vec::with_capacity(values.len());
        let mut image = u16::from(first);
        for (index, &value) in values.iter().enumerate() {
            if index > 0 {
                image += if value == values[index - 1] + 1 { 1 } else { 2 };
            }
            if image > u16::from(last) {
                return None;
            }
            images.push(image as u8);
        }
        Some(Renaming { values, images })
    }

    /// The dense renaming of `values` onto `first..`: order and equality kept, successors not
    /// (for values no action adds to). None when they do not fit below `last`.
    pub fn dense(values: impl IntoIterator<Item = u64>, first: u8, last: u8) -> Option<Renaming> {
        let mut values: Vec<u64> = values.into_iter().collect();
        values.sort_unstable();
        values.dedup();
        if values.len() > usize::from(last - first) + 1 {
            return None;
        }
        let images = (0..values.len()).map(|index| first + index as u8).collect();
        Some(Renaming { values, images })
    }

    /// The image of a value of the set.
    pub fn to(&self, value: u64) -> u8 {
        match self.values.binary_search(&value) {
            Ok(index) => self.images[index],
            Err(_) => unreachable!("value {value} was not in the renamed set"),
        }
    }

    /// The value an image stands for, if it is one.
    pub fn back(&self, image: u8) -> Option<u64> {
        self.images
            .iter()
            .position(|&candidate| candidate == image)
            .map(|index| self.values[index])
    }
}

/// A window's renamings: its records' terms and trims' floors, renamed alike for both specs, and
/// what else the spec's records carry (`more`: FelixHeadTrim's epochs, ParosTrimJump's tokens).
pub(crate) struct Names<M> {
    pub(crate) terms: Renaming,
    pub(crate) floors: Renaming,
    pub(crate) more: M,
}

impl<M> Names<M> {
    /// The terms of `records` and `terms` renamed into `1..=terms_last`, the floors their trims
    /// ask for and `floors`, beside the spec's `more`.
    pub(crate) fn renamed<R: Projected>(
        records: &[R],
        terms: impl IntoIterator<Item = u64>,
        terms_last: u8,
        floors: impl IntoIterator<Item = u64>,
        more: M,
    ) -> Result<Names<M>, Failure> {
        Ok(Names {
            terms: self::terms(records, terms, terms_last)?,
            floors: self::floors(records, floors)?,
            more,
        })
    }

    /// The term a model term stands for.
    pub(crate) fn term(&self, image: u8) -> u64 {
        self.terms
            .back(image)
            .unwrap_or_else(|| unreachable!("the model's terms come from the window"))
    }

    /// The floor a model floor stands for.
    pub(crate) fn floor(&self, image: u8) -> u64 {
        self.floors
            .back(image)
            .unwrap_or_else(|| unreachable!("the model's floors come from the window"))
    }
}

/// The terms of `records` and `more`, renamed into `1..=last` (`Renaming::new`).
pub(crate) fn terms<R: Projected>(
    records: &[R],
    more: impl IntoIterator<Item = u64>,
    last: u8,
) -> Result<Renaming, Failure> {
    Renaming::new(records.iter().map(R::term).chain(more), 1, last).ok_or(OUT)
}

/// The floors the trims among `records` ask for, and `more`, renamed into `1..=63` (both
/// models' floors).
pub(crate) fn floors<R: Projected>(
    records: &[R],
    more: impl IntoIterator<Item = u64>,
) -> Result<Renaming, Failure> {
    Renaming::new(records.iter().filter_map(R::trim_floor).chain(more), 1, 63).ok_or(OUT)
}
