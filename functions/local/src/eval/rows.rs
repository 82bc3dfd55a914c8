//! The rows of the eval's text tables: what each figure is called and how
//! its cell reads.

use super::report::Counts;

/// `part` of `whole` as a percentage with its counts, or "–" when there is
/// nothing to count (no question, no exchange, no post).
pub(super) fn share(part: usize, whole: usize) -> String {
    if whole == 0 {
        "–".to_owned()
    } else {
        format!(
            "{:.1}% ({part}/{whole})",
            part as f64 * 100.0 / whole as f64
        )
    }
}

/// The row of people's hints on the bot's posts, shown where there are.
pub(super) const HINTS_ROW: &str = "hints on its posts (+/-)";

/// The rows of the table: a label and the cell of one level.
pub(super) type Row = (&'static str, fn(&Counts) -> String);

pub(super) const ROWS: &[Row] = &[
    ("questions joined", |c| {
        share(c.figures.joined, c.figures.questions)
    }),
    ("exchanges intruded", |c| {
        share(c.figures.intruded, c.figures.exchanges)
    }),
    ("exchanges posted in (any time)", |c| {
        format!("{}/{}", c.figures.posted_in, c.figures.exchanges)
    }),
    ("precision", |c| {
        share(c.figures.on_question, c.figures.unprompted)
    }),
    ("precision, strict (on the latest message)", |c| {
        share(c.figures.on_latest_question, c.figures.unprompted)
    }),
    ("preempted", |c| {
        share(c.figures.preempted, c.figures.unprompted)
    }),
    ("engaged answers per unprompted post", |c| {
        let per = if c.figures.unprompted == 0 {
            "–".to_owned()
        } else {
            format!("{:.2}", c.figures.engaged_per_unprompted())
        };
        format!(
            "{per} ({}, longest run {})",
            c.figures.engaged, c.figures.longest_engaged_run
        )
    }),
    ("unprompted/channel-hour", |c| {
        format!("{:.2}", c.figures.per_hour())
    }),
    ("learned wait for an answer", |c| {
        c.learned_wait_seconds
            .map_or_else(|| "–".to_owned(), |s| format!("{}m{:02}s", s / 60, s % 60))
    }),
    ("posts (all)", |c| c.posts.to_string()),
    (HINTS_ROW, |c| {
        format!("+{} -{}", c.hints_positive, c.hints_negative)
    }),
    ("short posts", |c| c.short_posts.to_string()),
    ("reactions", |c| c.reactions.to_string()),
    ("proactive judgments", |c| c.proactive_judgments.to_string()),
    ("topics opened (/channel-week)", |c| {
        format!("{} ({:.2})", c.openers, c.openers_per_week())
    }),
    ("judgments (baseline)", |c| {
        format!("{} ({})", c.judgments, c.baseline)
    }),
    ("LLM judgment calls", |c| c.llm_calls.to_string()),
    ("spared", |c| share(c.spared, c.baseline)),
    ("ambiguous", |c| c.ambiguous.to_string()),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_of_nothing_is_a_dash_not_zero_percent() {
        assert_eq!(share(0, 0), "–");
        assert_eq!(share(1, 4), "25.0% (1/4)");
        let text = ROWS
            .iter()
            .find(|(name, _)| *name == "precision")
            .map(|(_, cell)| cell(&Counts::default()))
            .expect("a precision row");
        assert_eq!(text, "–");
    }
}
