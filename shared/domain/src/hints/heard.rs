//! What a clause holds, the words the English and Japanese rules answer
//! in: out of the module root so that they do not lean on the file that
//! declares them.

/// What a phrase says, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Sense {
    /// Looks like a hint, is none: "no thanks", "thanks anyway".
    Not,
    Positive,
    Negative,
    Mute,
}

/// What one clause holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Heard {
    Nothing,
    /// Only a duration (and fillers): "for an hour".
    Duration(u32),
    Hint(Sense, Option<u32>),
}
